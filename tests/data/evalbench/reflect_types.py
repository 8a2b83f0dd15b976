#!/usr/bin/env python3
"""Records how SQLAlchemy (2.0.46, the version EvalBench's uv.lock pins) reflects each declared
type of declared_types.txt on SQLite (`str(column.type)` after `MetaData.reflect`, what
EvalBench's `get_metadata` stores): `python reflect_types.py declared_types.txt >
sqlalchemy_types.jsonl`. A declared type SQLite refuses is left out."""
import json, sqlite3, warnings, sys, tempfile, os
warnings.simplefilter("ignore")
import sqlalchemy
from sqlalchemy import MetaData
names = [l.rstrip("\n") for l in open(sys.argv[1])]
path = os.path.join(tempfile.mkdtemp(), "t.db")
conn = sqlite3.connect(path)
ok = []
for n in names:
    try:
        conn.execute(f"CREATE TABLE t{len(ok)} (c {n})")
        ok.append(n)
    except sqlite3.Error:
        pass
names = ok
conn.commit(); conn.close()
engine = sqlalchemy.create_engine(f"sqlite:///{path}")
md = MetaData()
with engine.connect() as c:
    md.reflect(bind=c)
for i, n in enumerate(names):
    print(json.dumps({"declared": n, "type": str(md.tables[f"t{i}"].columns[0].type)}))
