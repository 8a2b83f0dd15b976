"""EX on DuckDB for typed value pairs (tests/it/duckdb.rs `typed_results_score_as_the_official_evaluation_with_the_python_client`):
each (gold, prediction) of a pairs file decided by `verdict` of ex_duckdb.py (the official
test-suite functions with DuckDB's Python client) on a database holding one table
`t (x INTEGER)` with the row 1.
usage: SQLGATE_OFFICIAL_SPIDER=DIR ex_pairs.py PAIRS.jsonl WORKDIR > verdicts.jsonl
Prints a header (the pairs file's SHA-256 and the versions), then per pair {"gold", "pred", "exec"}.
"""
import hashlib
import json
import os
import sys

import duckdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ex_duckdb import verdict  # noqa: E402

pairs_path, work = sys.argv[1], sys.argv[2]
raw = open(pairs_path, "rb").read()
path = os.path.join(work, "typed.duckdb")
if os.path.exists(path):
    os.remove(path)
con = duckdb.connect(path)
con.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
con.close()
print(json.dumps({"pairs_sha256": hashlib.sha256(raw).hexdigest(), "duckdb": duckdb.__version__}))
for line in raw.decode().splitlines():
    pair = json.loads(line)
    print(json.dumps({"gold": pair["gold"], "pred": pair["pred"],
                      "exec": verdict(path, pair["pred"], pair["gold"])}))
