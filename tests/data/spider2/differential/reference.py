"""Reference verdicts for cases.jsonl (README.md beside this file).

    OFFICIAL_DIR=/path/to/dir python reference.py cases.jsonl > reference.jsonl

OFFICIAL_DIR holds two modules that are NOT committed: official_current.py and
official_2025_01.py, each the functions `compare_multi_pandas_table`, `compare_pandas_table`,
`get_sqlite_result` (and, for the current one, `resolve_gold_paths`, `load_gold_csv`) copied
unchanged from xlang-ai/Spider2 spider2-lite/evaluation_suite/evaluate.py at 5fa8a517 and at
0c85cc21. Each case runs as that evaluate.py runs a local instance in `--mode sql`: the
prediction through `get_sqlite_result` into a CSV and `pd.read_csv`, the gold files found and
read as there, then the comparison, with the `try` blocks of that version. `official` is the
current verdict; `official_2025_01` the old one, or "stop" where the old script stops the whole
run (an exception outside its `try`). `sound` is the brute-force sound verdict (not official
code): integers beyond 64 bits read as float64, a missing value equal only to a missing value,
and with `ignore_order` some row permutation of the prediction passing the ordered comparison.
"""
import contextlib
import importlib
import io
import itertools
import json
import os
import re
import sqlite3
import struct
import sys
import tempfile

import pandas as pd

sys.path.insert(0, os.environ["OFFICIAL_DIR"])
current = importlib.import_module("official_current")
old = importlib.import_module("official_2025_01")


def quiet(f, *a):
    with contextlib.redirect_stdout(io.StringIO()):
        return f(*a)


def decode(v):
    if isinstance(v, dict):
        return struct.unpack("<d", struct.pack("<q", v["real"]))[0]
    return v


def gold_files(case, gold_dir):
    iid = case["instance_id"]
    for suffix, text in case["golds"].items():
        name = f"{iid}.csv" if suffix == "single" else f"{iid}{suffix}.csv"
        with open(os.path.join(gold_dir, name), "w", newline="") as f:
            f.write(text)


def predicted_csv(case, work):
    db = os.path.join(work, "p.sqlite")
    conn = sqlite3.connect(db)
    columns = ", ".join(f'"{c}"' for c in case["pred_columns"])
    conn.execute(f"CREATE TABLE p({columns})")
    marks = ", ".join("?" for _ in case["pred_columns"])
    conn.executemany(f"INSERT INTO p VALUES ({marks})", [[decode(v) for v in row] for row in case["pred"]])
    conn.commit()
    conn.close()
    return db


def official_current(case, work, gold_dir, db):
    iid = case["instance_id"]
    try:
        ok, _ = quiet(current.get_sqlite_result, db, "SELECT * FROM p", os.path.join(work, "cur"), f"{iid}.csv")
        if not ok:
            return 0, None
        pred = pd.read_csv(os.path.join(work, "cur", f"{iid}.csv"))
        paths, single = current.resolve_gold_paths(iid, gold_dir)
        cc, io_ = case.get("condition_cols"), case.get("ignore_order", False)
        if not paths:
            return 0, pred
        try:
            if single:
                return int(current.compare_pandas_table(pred, current.load_gold_csv(str(paths[0])), cc, io_)), pred
            golds = [current.load_gold_csv(str(p)) for p in paths]
            return int(current.compare_multi_pandas_table(pred, golds, cc, io_)), pred
        except Exception:
            return 0, pred
    except Exception:
        return 0, None


def official_old(case, work, gold_dir, db):
    iid = case["instance_id"]
    ok, _ = quiet(old.get_sqlite_result, db, "SELECT * FROM p", os.path.join(work, "old"), f"{iid}_pred.csv")
    if ok is False:
        return 0
    try:
        pred = pd.read_csv(os.path.join(work, "old", f"{iid}_pred.csv"))
    except Exception:
        return "stop"
    pattern = re.compile(rf"^{re.escape(iid)}(_[a-z])?\.csv$")
    files = sorted(f for f in os.listdir(gold_dir) if pattern.match(f))
    standard = {k: case[k] for k in ("condition_cols", "ignore_order") if k in case}
    if len(files) == 1:
        try:
            gold = pd.read_csv(os.path.join(gold_dir, f"{iid}.csv"))
        except Exception:
            return "stop"
        try:
            return int(quiet(old.compare_pandas_table, pred, gold, standard["condition_cols"], standard["ignore_order"]))
        except Exception:
            return 0
    try:
        golds = [pd.read_csv(os.path.join(gold_dir, f)) for f in files]
        return int(quiet(old.compare_multi_pandas_table, pred, golds, standard["condition_cols"], standard["ignore_order"]))
    except Exception:
        return "stop"


INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
NUMBER = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")


def big_integers_as_floats(frame):
    frame = frame.copy()
    for i in range(frame.shape[1]):
        col = frame.iloc[:, i]
        if col.dtype != object:
            continue
        texts = [v for v in col if isinstance(v, str)]
        present = [t for t in texts if t not in ("", "NULL", "None", "nan", "NaN", "null", "N/A", "n/a", "NA", "<NA>", "#N/A", "#NA")]
        big = any(INTEGER.match(t) and abs(int(t)) > 2**63 - 1 for t in present)
        if big and all(NUMBER.match(t) for t in present) and len(texts) == col.notna().sum():
            text = "x\n" + "\n".join("" if not isinstance(v, str) else v for v in col) + "\n"
            frame.isetitem(i, pd.read_csv(io.StringIO(text), dtype={"x": float}, skip_blank_lines=False)["x"].values)
    return frame


def selections(case, golds, multi):
    """(selection list or None for every column, error) per answer, as the current code reads."""
    cc = case.get("condition_cols")
    if not multi:
        per = [cc]
    elif cc in (None, [], [[]], [None]):
        per = [[] for _ in golds]
    elif len(golds) > 1 and not all(isinstance(s, list) for s in cc):
        per = [cc for _ in golds]
    else:
        per = [cc[i] if i < len(cc) else IndexError for i in range(len(golds))]
    result = []
    for c, gold in zip(per, golds):
        if c is IndexError:
            result.append(("error", None))
            continue
        if not c:
            result.append(("ok", list(range(gold.shape[1]))))
            continue
        c = c if isinstance(c, list) else [c]
        try:
            gold.iloc[:, c]
            result.append(("ok", [i % gold.shape[1] if isinstance(i, int) else i for i in c]))
        except Exception:
            result.append(("error", None))
    return result


def sound(case, pred, gold_dir):
    if pred is None:
        return 0
    iid = case["instance_id"]
    paths, single = current.resolve_gold_paths(iid, gold_dir)
    try:
        golds = [big_integers_as_floats(pd.read_csv(str(p))) for p in paths]
    except Exception:
        return 0
    pred = big_integers_as_floats(pred)
    ignore_order = case.get("ignore_order", False)
    for (kind, sel), gold in zip(selections(case, golds, not single), golds):
        if kind == "error":
            return 0
        if not ignore_order:
            if quiet(old.compare_pandas_table, pred, gold, sel, False):
                return 1
            continue
        if len(pred) > 7:
            return None
        for perm in itertools.permutations(range(len(pred))):
            p = pred.iloc[list(perm)].reset_index(drop=True)
            if quiet(old.compare_pandas_table, p, gold, sel, False):
                return 1
    return 0


def main():
    for line in open(sys.argv[1]):
        case = json.loads(line)
        with tempfile.TemporaryDirectory() as work:
            gold_dir = os.path.join(work, "gold")
            os.mkdir(gold_dir)
            gold_files(case, gold_dir)
            db = predicted_csv(case, work)
            verdict, pred = official_current(case, work, gold_dir, db)
            record = {
                "instance_id": case["instance_id"],
                "class": case["class"],
                "official": verdict,
                "official_2025_01": official_old(case, work, gold_dir, db),
                "sound": sound(case, pred, gold_dir),
            }
        print(json.dumps(record))


if __name__ == "__main__":
    main()
