"""Computes the reference values of the current official Soft-F1 (bird-bench/mini_dev
evaluation/evaluation_f1.py at bee73fe, see README.md) for the `cases`, `minidev` and `multirow`
datasets: `<dataset>/soft_f1_2025-06.jsonl`, one line per item.

usage: PYTHONHASHSEED=0 LD_LIBRARY_PATH=DIR_OF_LIBSQLITE3 python3.12 reference_f1.py OFFICIAL_DIR MINI_DEV_DIR
OFFICIAL_DIR holds evaluation_f1.py and evaluation_utils.py of that commit (not committed here);
MINI_DEV_DIR is the shared mini_dev folder (the items and GPT-4-turbo predictions of `multirow`).
The script checks that Python's sqlite3 runs the SQLite of sqlgate's build (row order decides
the current Soft-F1, and another SQLite may return rows of an unordered query in another order).
"""
import json
import os
import re
import sqlite3
import sys
import tempfile

EXPECTED_SQLITE = "3.54.1"
assert sqlite3.sqlite_version == EXPECTED_SQLITE, f"SQLite {sqlite3.sqlite_version}, not {EXPECTED_SQLITE}"
sys.path.insert(0, sys.argv[1])
import evaluation_f1  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
mini_dev = sys.argv[2]
# Queries whose result depends on the day they run (or on chance): not reproducible later.
UNSTABLE = re.compile(r"\bnow\b|current_(?:timestamp|date|time)|random\s*\(", re.I)


def build(dataset, root):
    for name in os.listdir(os.path.join(here, dataset)):
        if name.endswith(".sql"):
            db = name[:-4]
            os.makedirs(os.path.join(root, db))
            conn = sqlite3.connect(os.path.join(root, db, db + ".sqlite"))
            conn.executescript(open(os.path.join(here, dataset, name), encoding="utf-8").read())
            conn.commit()
            conn.close()


def gold_runs(sql, db):
    try:
        conn = sqlite3.connect(db)
        conn.execute(sql).fetchall()
        conn.close()
        return True
    except Exception:
        return False


def inputs(dataset):
    if dataset == "multirow":
        return (os.path.join(mini_dev, "mini_dev_sqlite.json"),
                os.path.join(mini_dev, "predictions", "predict_mini_dev_gpt-4-turbo_cot_SQLite.json"))
    return os.path.join(here, dataset, "dev.json"), os.path.join(here, dataset, "predictions.json")


for dataset in ["cases", "minidev", "multirow"]:
    root = tempfile.mkdtemp() + "/"
    build(dataset, root)
    gold_path, pred_path = inputs(dataset)
    items = json.load(open(gold_path, encoding="utf-8"))
    preds = json.load(open(pred_path, encoding="utf-8"))
    with open(os.path.join(here, dataset, "soft_f1_2025-06.jsonl"), "w") as out:
        for i, item in enumerate(items):
            db = root + item["db_id"] + "/" + item["db_id"] + ".sqlite"
            record = {"i": i, "db_id": item["db_id"], "gold_ok": gold_runs(item["SQL"], db)}
            if str(i) in preds:
                # The official package_sqls: the text before the separator.
                pred = preds[str(i)].split("\t----- bird -----\t")[0]
                if UNSTABLE.search(pred) or UNSTABLE.search(item["SQL"]):
                    record["unstable"] = True
                record["soft_f1"] = evaluation_f1.execute_model(pred, item["SQL"], db, i, 30.0, "SQLite")["res"]
            out.write(json.dumps(record) + "\n")
