"""The header line of tests/data/duckdb/spider_dev_ex.jsonl: what the verdicts were recorded
from. `inputs_sha256` is the SHA-256 of one line `<path>\t<sha256 of the file>\n` per input, in
this order: the reference script, the gold, the four prediction files, every Spider dev SQLite
database by db_id (tests/it/duckdb_conformance.rs computes the same)."""
import hashlib
import json
import os
import sys

import duckdb

root = sys.argv[1]
data = os.path.join(root, "..", "shared", "data", "spider")
inputs = ["tests/duckdb_official/ex_duckdb.py", "dev_gold.sql"]
inputs += ["predictions/%s.txt" % s for s in ["C3", "Claude", "GPT4Turbo", "RESDSQL"]]
inputs += ["database/%s/%s.sqlite" % (d, d) for d in sorted(os.listdir(os.path.join(data, "database")))]
lines = ""
for name in inputs:
    path = os.path.join(root, name) if name.startswith("tests/") else os.path.join(data, name)
    lines += "%s\t%s\n" % (name, hashlib.sha256(open(path, "rb").read()).hexdigest())
print(json.dumps({
    "inputs_sha256": hashlib.sha256(lines.encode()).hexdigest(),
    "duckdb": duckdb.__version__,
    "official": "taoyds/test-suite-sql-eval exec_eval.py, parse.py",
}))
