"""Computes the reference values the tests compare sqlgate with, using BIRD mini-dev's official
evaluation functions (bird-bench/mini_dev evaluation/, see README.md for the commits).

usage: PYTHONHASHSEED=0 python3.12 reference.py OFFICIAL_DIR
OFFICIAL_DIR holds evaluation_utils.py, evaluation_ex.py, evaluation_f1.py and evaluation_ves.py from
that repository (not committed here). PYTHONHASHSEED=0 matters: the official Soft-F1 pairs rows in
Python set iteration order, which for text depends on the hash seed.
"""
import json
import os
import random
import sqlite3
import sys
import tempfile

assert os.environ.get("PYTHONHASHSEED") == "0", "run with PYTHONHASHSEED=0"
sys.path.insert(0, sys.argv[1])
import evaluation_ex  # noqa: E402
import evaluation_f1  # noqa: E402
import evaluation_ves  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))


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


for dataset in ["cases", "minidev"]:
    root = tempfile.mkdtemp() + "/"
    build(dataset, root)
    items = json.load(open(os.path.join(here, dataset, "dev.json"), encoding="utf-8"))
    preds = json.load(open(os.path.join(here, dataset, "predictions.json"), encoding="utf-8"))
    with open(os.path.join(here, dataset, "reference.jsonl"), "w") as out:
        for i, item in enumerate(items):
            db = root + item["db_id"] + "/" + item["db_id"] + ".sqlite"
            record = {"i": i, "db_id": item["db_id"], "gold_ok": gold_runs(item["SQL"], db)}
            if str(i) in preds:
                pred = preds[str(i)].split("\t----- bird -----\t")[0]
                record["ex"] = evaluation_ex.execute_model(pred, item["SQL"], db, i, 30.0, "SQLite")["res"]
                record["soft_f1"] = evaluation_f1.execute_model(pred, item["SQL"], db, i, 30.0, "SQLite")["res"]
            out.write(json.dumps(record) + "\n")

# Python set iteration order of random rows (what the official Soft-F1 pairs by).
rng = random.Random(19)
pool = [None, 0, 1, -1, -2, 2**61 - 1, 2**61, 2**63 - 1, -2**63, 1.0, 0.5, -0.1, 1e20, 2.5e-8,
        float("inf"), "", "a", "b", "Ann", "é", "日本", "🙂", b"", b"a", b"\x00\xff"]
cases = []
for _ in range(60):
    width = rng.randint(1, 3)
    rows = [tuple(rng.choice(pool + [rng.randint(-10**6, 10**6), rng.uniform(-100, 100), "s%d" % rng.randint(0, 99)])
                  for _ in range(width)) for _ in range(rng.randint(0, 120))]
    order = list(set(rows))
    index = [rows.index(r) for r in order]
    enc = lambda v: {"blob": v.hex()} if isinstance(v, bytes) else {"real": "inf"} if v == float("inf") else v
    cases.append({"rows": [[enc(v) for v in r] for r in rows], "order": index})
json.dump(cases, open(os.path.join(here, "set_order.json"), "w"))

# R-VES reward buckets for given lists of time ratios (gold time / prediction time).
ratios = [[1.0] * 5, [2.0], [1.5, 2.5], [2.0, 2.0, 2.0, 2.0], [0.1, 0.2, 0.3, 100.0], [1.0, 1.1, 0.9, 1.05],
          [0.49, 0.51, 0.5], [0.26, 0.24, 0.25, 0.251], [3.0, 3.1, 2.9, 50.0] + [3.0] * 20, [0.9] * 19 + [10.0],
          [1.999, 2.0, 2.001], [0.7, 0.8], [0.3, 0.35, 0.4], [0.1, 0.12], [1.0], [2.0, 1e-9]]
rng = random.Random(7)
for _ in range(40):
    n = rng.randint(2, 100)
    centre = rng.choice([0.2, 0.3, 0.45, 0.6, 0.9, 1.1, 1.8, 2.2, 4.0])
    ratios.append([centre * rng.lognormvariate(0, 0.2) if rng.random() > 0.05 else centre * 20 for _ in range(n)])
ves = []
for r in ratios:
    try:
        ratio, reward = evaluation_ves.reward_of(r)
        ves.append({"ratios": r, "time_ratio": float(ratio), "reward": reward})
    except ZeroDivisionError:
        ves.append({"ratios": r, "time_ratio": None, "reward": 0})
json.dump(ves, open(os.path.join(here, "ves_rewards.json"), "w"))
