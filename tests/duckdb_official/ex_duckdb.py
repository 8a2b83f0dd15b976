"""EX on DuckDB as the official Spider / test-suite evaluator decides it, with DuckDB's official
Python client running the queries: the reference sqlgate's `duckdb` engine is compared with
(tests/it/duckdb_conformance.rs, docs/DEVELOPMENT.md "DuckDB").

The official code is not in this repository: SQLGATE_OFFICIAL_SPIDER names a checkout of
taoyds/test-suite-sql-eval (exec_eval.py, parse.py), whose `postprocess`, `remove_distinct`,
`replace_cur_year` and `result_eq` decide each item exactly as `eval_exec_match` does on one
database; only `exec_on_db_`'s sqlite3 cursor is replaced by a DuckDB connection opened read-only
on the item's `.duckdb` file (written by `sqlgate load`), with the settings sqlgate opens it with.

usage: ex_duckdb.py DATABASES GOLD SYSTEM=PREDICTIONS... > verdicts.jsonl
One JSON line per (system, item): {"system", "i", "db", "exec"} with exec 1 or 0, or
"gold_error" (the gold fails on DuckDB) or "skipped" (no database file).
"""
import json
import os
import sys

sys.path.insert(0, os.environ["SQLGATE_OFFICIAL_SPIDER"])
import duckdb  # noqa: E402
from exec_eval import postprocess, replace_cur_year, result_eq  # noqa: E402
from parse import remove_distinct  # noqa: E402

SETTINGS = {
    "threads": 1,
    "memory_limit": "512MB",
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}
_connections = {}


def execute(path, query):
    """The official `exec_on_db_` on DuckDB: ("result", rows) or ("exception", error)."""
    query = replace_cur_year(query)
    if path not in _connections:
        _connections[path] = duckdb.connect(path, read_only=True, config=SETTINGS)
    cursor = _connections[path].cursor()
    try:
        statements = cursor.extract_statements(query)
        if len(statements) != 1:
            return "exception", ValueError("%d statements" % len(statements))
        return "result", cursor.execute(query).fetchall()
    except Exception as error:  # noqa: BLE001 - the official catches everything
        return "exception", error
    finally:
        cursor.close()


def verdict(path, prediction, gold):
    """`eval_exec_match` on one database, plug_value and keep_distinct off (the defaults)."""
    p_str, g_str = postprocess(prediction), postprocess(gold)
    p_str, g_str = remove_distinct(p_str), remove_distinct(g_str)
    order_matters = "order by" in g_str.lower()
    g_flag, g_denotation = execute(path, g_str)
    if g_flag == "exception":
        return "gold_error"
    p_flag, p_denotation = execute(path, p_str)
    if p_flag == "exception":
        return 0
    try:
        return int(result_eq(g_denotation, p_denotation, order_matters=order_matters))
    except TypeError:
        return 0  # unhashable values (lists, dicts): the official set() raises


def main():
    databases, gold_file, systems = sys.argv[1], sys.argv[2], sys.argv[3:]
    golds = [line.rstrip("\n").rsplit("\t", 1) for line in open(gold_file, encoding="utf-8") if line.strip()]
    for system in systems:
        name, predictions_file = system.split("=", 1)
        predictions = open(predictions_file, encoding="utf-8").read().splitlines()
        for i, (gold, db) in enumerate(golds):
            path = os.path.join(databases, db, db + ".duckdb")
            if not os.path.exists(path):
                result = "skipped"
            else:
                result = verdict(path, predictions[i] if i < len(predictions) else "", gold)
            print(json.dumps({"system": name, "i": i, "db": db, "exec": result}))


if __name__ == "__main__":
    main()
