#!/usr/bin/env python3
"""Derives the BIRD-Critic form of the corpus (items_bc.jsonl) from ../items.jsonl and ../cases.jsonl.

BIRD-Critic's SQLite evaluator differs from mini_dev's in what an item must look like:
- it always calls `test_case(..., conditions=...)` (single_instance_eval_sqlite.py:237), so every
  custom test case gets a `conditions=None` parameter (the body is unchanged);
- it reads `db_id` (kept beside `selected_database`);
- an item may carry `issue_sql`, the user's faulty SQL, which must FAIL the tests: for the items
  made in right/wrong pairs, issue_sql is the pair's wrong prediction;
- its databases live in ./sqlite_databases_test/<db>/<db>_template.sqlite, so the paths the
  hostile predictions ATTACH / VACUUM INTO are rewritten to that layout in predictions_bc.jsonl
  (every other prediction is copied unchanged).
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SIGNATURE = "def test_case(pred_sqls, sol_sqls, db_path, conn):"
PATHS = [("'./database/fleet/fleet.sqlite'", "'./sqlite_databases_test/fleet/fleet_template.sqlite'"),
         ("'./database/school/school_template.sqlite'", "'./sqlite_databases_test/school/school_vacuumed.sqlite'")]


def load(name):
    with open(os.path.join(HERE, "..", name)) as f:
        return [json.loads(line) for line in f]


def rewrite_paths(sqls):
    out = []
    for s in sqls:
        for old, new in PATHS:
            s = s.replace(old, new)
        out.append(s)
    return out


def main():
    items = load("items.jsonl")
    cases = {c["instance_id"]: c for c in load("cases.jsonl")}
    preds = {p["instance_id"]: p["pred_sqls"] for p in load("predictions.jsonl")}
    wrong_of = {}
    for it in items:
        c = cases[it["instance_id"]]
        if "wrong" in c["covers"]:
            wrong_of[(it["selected_database"], it["query"])] = preds[it["instance_id"]]
    with open(os.path.join(HERE, "items_bc.jsonl"), "w") as f:
        for it in items:
            bc = dict(it, db_id=it["selected_database"])
            tcs = []
            for tc in it["test_cases"]:
                assert tc.startswith(SIGNATURE), it["instance_id"]
                tcs.append(tc.replace(SIGNATURE, SIGNATURE[:-2] + ", conditions=None):", 1))
            bc["test_cases"] = tcs
            issue = wrong_of.get((it["selected_database"], it["query"]))
            if issue is not None:
                bc["issue_sql"] = issue
            f.write(json.dumps(bc, sort_keys=True) + "\n")
    with open(os.path.join(HERE, "predictions_bc.jsonl"), "w") as f:
        for it in items:
            iid = it["instance_id"]
            f.write(json.dumps({"instance_id": iid, "pred_sqls": rewrite_paths(preds[iid])}, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
