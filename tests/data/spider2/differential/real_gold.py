"""Official verdicts for the opt-in test on the unmodified spider2-lite gold folder
(tests/it/spider2_differential.rs, `SQLGATE_SPIDER2_LITE`).

    OFFICIAL_DIR=... python real_gold.py <spider2-lite folder> <layout folder>

The layout folder is the one the test wrote: `localdb/<db>.sqlite` and `predictions.jsonl`
(`{"id", "sql"}` per instance). Each instance runs as the current evaluate.py runs a local one
(`evaluate_single_sql_instance`): the prediction through `get_sqlite_result` into a CSV and
`pd.read_csv`, the gold found by `resolve_gold_paths`, read by `load_gold_csv`, compared by
`compare_pandas_table` / `compare_multi_pandas_table` inside their `try`. OFFICIAL_DIR holds the
uncommitted official_current.py (README.md). Prints `{"instance_id", "official"}` per line.
"""
import contextlib
import io
import json
import os
import sys
import tempfile

import pandas as pd

sys.path.insert(0, os.environ["OFFICIAL_DIR"])
import official_current as current  # noqa: E402


def quiet(f, *a):
    with contextlib.redirect_stdout(io.StringIO()):
        return f(*a)


def score(iid, db, sql, gold_dir, standard, work):
    try:
        ok, _ = quiet(current.get_sqlite_result, db, sql, work, f"{iid}.csv")
        if not ok:
            return 0
        pred = pd.read_csv(os.path.join(work, f"{iid}.csv"))
        paths, single = current.resolve_gold_paths(iid, gold_dir)
        cc, ignore_order = standard.get("condition_cols"), standard.get("ignore_order", False)
        if not paths:
            return 0
        try:
            if single:
                return int(current.compare_pandas_table(pred, current.load_gold_csv(str(paths[0])), cc, ignore_order))
            golds = [current.load_gold_csv(str(p)) for p in paths]
            return int(current.compare_multi_pandas_table(pred, golds, cc, ignore_order))
        except Exception:
            return 0
    except Exception:
        return 0


def main():
    lite, layout = sys.argv[1], sys.argv[2]
    gold = os.path.join(lite, "evaluation_suite", "gold")
    tasks = {json.loads(l)["instance_id"]: json.loads(l) for l in open(os.path.join(lite, "spider2-lite.jsonl"))}
    standards = {json.loads(l)["instance_id"]: json.loads(l) for l in open(os.path.join(gold, "spider2lite_eval.jsonl"))}
    with tempfile.TemporaryDirectory() as work:
        for line in open(os.path.join(layout, "predictions.jsonl")):
            prediction = json.loads(line)
            iid = prediction["id"]
            db = os.path.join(layout, "localdb", tasks[iid]["db"] + ".sqlite")
            verdict = score(iid, db, prediction["sql"], os.path.join(gold, "exec_result"), standards[iid], work)
            print(json.dumps({"instance_id": iid, "official": verdict}))


if __name__ == "__main__":
    main()
