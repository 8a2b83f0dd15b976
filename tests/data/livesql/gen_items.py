#!/usr/bin/env python3
"""Builds the LiveSQLBench-style conformance items and predictions (deterministic).

Writes items.jsonl (the dataset, LiveSQLBench SQLite fields), predictions.jsonl (instance_id, pred_sqls)
and cases.jsonl (what each prediction exercises, and the verdict a *sound* judge gives). Expected values
inside test cases are computed by running the item's gold on a fresh copy built from db/*.sql, so every
Management item's gold passes its own checks on a sound judge by construction.
"""
import json
import os
import shutil
import sqlite3
import tempfile
from decimal import ROUND_HALF_UP, Decimal

HERE = os.path.dirname(os.path.abspath(__file__))
ITEMS, PREDS, CASES = [], [], []
_TMP = tempfile.mkdtemp(prefix="lsq_gen_")
INFINITE = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"


def fresh(db):
    """A fresh on-disk copy of database `db`, built from its SQL script."""
    base = os.path.join(_TMP, f"{db}.base.sqlite")
    if not os.path.exists(base):
        conn = sqlite3.connect(base)
        with open(os.path.join(HERE, "db", f"{db}.sql")) as f:
            conn.executescript(f.read())
        conn.close()
    path = os.path.join(_TMP, f"{db}.work.sqlite")
    shutil.copyfile(base, path)
    conn = sqlite3.connect(path, isolation_level=None)
    budget = [0]

    def tick():
        budget[0] += 1
        return 1 if budget[0] > 20000 else 0  # ~2e8 VM steps: a sound judge's deadline

    conn.set_progress_handler(tick, 10000)
    return conn


def run_all(conn, sqls):
    """Runs statements in order; returns (last result rows, error text or None)."""
    rows = None
    for s in sqls:
        try:
            cur = conn.execute(s)
            rows = cur.fetchall()
        except Exception as e:  # noqa: BLE001 - any failure is the prediction's
            return None, f"{type(e).__name__}: {e}"
    return rows, None


def q2(v):
    """A sound judge's decimal rule: the float's shortest text, quantised half-up to 2 places."""
    if isinstance(v, float):
        return Decimal(repr(v)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    if isinstance(v, int) and not isinstance(v, bool):
        return Decimal(v).quantize(Decimal("0.01"))
    return v


def norm(rows, order):
    out = [tuple(q2(v) for v in r) for r in rows]
    return out if order else sorted(set(out), key=repr)


def add(db, category, question, sol, pred, covers, intent, test_cases=None, conditions=None,
        preprocess=None, clean_up=None, efficiency=False, sound=None):
    iid = f"lsq_{len(ITEMS) + 1:03d}"
    ITEMS.append({
        "instance_id": iid, "selected_database": db, "query": question,
        "preprocess_sql": preprocess or [], "clean_up_sql": clean_up or [], "sol_sql": sol,
        "test_cases": test_cases or [], "category": category,
        "conditions": conditions or {"decimal": 2, "distinct": False, "order": False},
        "efficiency": efficiency,
    })
    PREDS.append({"instance_id": iid, "pred_sqls": pred})
    CASES.append({"instance_id": iid, "db": db, "category": category, "covers": covers, "intent": intent,
                  "sound_verdict": sound})
    return iid


def check_tc(sql, expected):
    return (
        "def test_case(pred_sqls, sol_sqls, db_path, conn):\n"
        f"    res, err, to = execute_queries([{sql!r}], db_path, conn, None, '')\n"
        "    assert not err and not to, 'check query failed'\n"
        f"    assert res == {expected!r}, f'got {{res}}'\n"
        "    return 1\n"
    )


def Q(db, question, sol, pred, covers, intent, order=False, sound=None, **kw):
    sol = sol if isinstance(sol, list) else [sol]
    pred = pred if isinstance(pred, list) else [pred]
    if sound is None:
        g, gerr = run_all(fresh(db), kw.get("preprocess", []) + sol)
        assert gerr is None, (question, gerr)
        c = fresh(db)
        run_all(c, kw.get("preprocess", []))
        p, perr = run_all(c, pred)
        sound = "pass" if perr is None and p is not None and norm(p, order) == norm(g, order) else "fail"
    cond = {"decimal": 2, "distinct": False, "order": order}
    return add(db, "Query", question, sol, pred, covers, intent, conditions=cond, sound=sound, **kw)


def M(db, question, sol, pred, checks, covers, intent, sound=None, preprocess=None, **kw):
    pre = preprocess or []
    g = fresh(db)
    run_all(g, pre)
    _, gerr = run_all(g, sol)
    assert gerr is None, (question, gerr)
    expected = []
    for chk in checks:
        rows, err = run_all(g, [chk])
        assert err is None, (chk, err)
        expected.append(rows)
    if sound is None:
        c = fresh(db)
        run_all(c, pre)
        _, perr = run_all(c, pred)
        ok = perr is None and all(run_all(c, [chk])[0] == exp for chk, exp in zip(checks, expected))
        sound = "pass" if ok else "fail"
    tcs = [check_tc(chk, exp) for chk, exp in zip(checks, expected)]
    return add(db, "Management", question, sol, pred, covers, intent, test_cases=tcs, sound=sound,
               preprocess=pre, **kw)


def pairs_q(db, rows):
    for question, sol, right, wrong, order, covers in rows:
        Q(db, question, sol, right, covers + ["right"], "correct prediction", order=order)
        Q(db, question, sol, wrong, covers + ["wrong"], "wrong prediction", order=order)


def pairs_m(db, rows):
    for question, sol, right, wrong, checks, covers in rows:
        M(db, question, sol, right, checks, covers + ["right"], "correct prediction")
        M(db, question, sol, wrong, checks, covers + ["wrong"], "wrong prediction")


from items_spec import build  # noqa: E402  (the item texts live in items_spec.py)


def main():
    build(globals())
    for name, rows in [("items.jsonl", ITEMS), ("predictions.jsonl", PREDS), ("cases.jsonl", CASES)]:
        with open(os.path.join(HERE, name), "w") as f:
            for r in rows:
                f.write(json.dumps(r, sort_keys=True) + "\n")
    shutil.rmtree(_TMP)
    print(len(ITEMS), "items")


if __name__ == "__main__":
    main()
