"""Official verdicts (compare_pandas_table / compare_multi_pandas_table, run the way
evaluate.py runs local instances) of the current evaluate.py (5fa8a517) and of 0c85cc21, and
brute-force sound verdicts for tests/data/spider2/cases. OFFICIAL_DIR holds the uncommitted
official_current.py and official_2025_01.py (README.md)."""
import contextlib, io, itertools, json, os, re, sqlite3, sys, tempfile
import pandas as pd
sys.path.insert(0, os.environ["OFFICIAL_DIR"])
from official_2025_01 import compare_pandas_table, compare_multi_pandas_table, get_sqlite_result
import official_current as current

CASES = sys.argv[1]

def quiet(f, *a):
    with contextlib.redirect_stdout(io.StringIO()):
        return f(*a)

def sound(pred, golds, ccs, ignore_order):
    # some row permutation of the prediction passes the official ordered comparison
    if not ignore_order:
        return None
    n = len(pred)
    assert n <= 7
    for perm in itertools.permutations(range(n)):
        p = pred.iloc[list(perm)].reset_index(drop=True)
        for gold, cc in zip(golds, ccs):
            if quiet(compare_pandas_table, p, gold, cc, False):
                return 1
    return 0

tmp = tempfile.mkdtemp()
dbs = {}
for name in os.listdir(CASES):
    if name.endswith(".sql"):
        path = os.path.join(tmp, name[:-4] + ".sqlite")
        c = sqlite3.connect(path); c.executescript(open(os.path.join(CASES, name)).read()); c.commit(); c.close()
        dbs[name[:-4]] = path
tasks = {json.loads(l)["instance_id"]: json.loads(l) for l in open(os.path.join(CASES, "spider2-lite.jsonl"))}
evals = [json.loads(l) for l in open(os.path.join(CASES, "gold/spider2lite_eval.jsonl"))]
preds = {json.loads(l)["id"]: json.loads(l)["sql"] for l in open(os.path.join(CASES, "predictions.jsonl"))}
out = []
for e in evals:
    id = e["instance_id"]; db = dbs[tasks[id]["db"]]
    pattern = re.compile(rf'^{re.escape(id)}(_[a-z])?\.csv$')
    files = sorted(f for f in os.listdir(os.path.join(CASES, "gold/exec_result")) if pattern.match(f))
    golds = [pd.read_csv(os.path.join(CASES, "gold/exec_result", f)) for f in files]
    single = f"{id}.csv" in files
    if not golds:  # gold SQL files: exported like the gold results, then read back
        spattern = re.compile(rf'^{re.escape(id)}(_[a-z])?\.sql$')
        sql_files = sorted(f for f in os.listdir(os.path.join(CASES, "gold/sql")) if spattern.match(f))
        single = f"{id}.sql" in sql_files
        for f in sql_files:
            ok, _ = quiet(get_sqlite_result, db, open(os.path.join(CASES, "gold/sql", f)).read(), tmp, f"{f}_gold.csv")
            assert ok is not False
            golds.append(pd.read_csv(os.path.join(tmp, f"{f}_gold.csv")))
    ok, err = quiet(get_sqlite_result, db, preds[id], tmp, f"{id}_pred.csv")
    record = {"instance_id": id, "golds": len(golds)}
    if ok is False:
        record.update(official=0, official_2025_01=0, sound=0, pred_error=True)
        out.append(record); continue
    pred = pd.read_csv(os.path.join(tmp, f"{id}_pred.csv"))
    cc, io_ = e["condition_cols"], e["ignore_order"]
    try:
        if single:
            now = quiet(current.compare_pandas_table, pred, golds[0], cc, io_)
        else:
            now = quiet(current.compare_multi_pandas_table, pred, golds, cc, io_)
    except Exception:
        now = 0
    record["official"] = int(now)
    if len(golds) == 1:
        try:
            score = quiet(compare_pandas_table, pred, golds[0], cc, io_)
        except Exception as ex:
            score = 0; record["python_error"] = str(ex)
        ccs = [cc]
    else:
        score = quiet(compare_multi_pandas_table, pred, golds, cc, io_)
        if cc in ([], [[]], [None], None):
            ccs = [[] for _ in golds]
        elif not all(isinstance(s, list) for s in cc):
            ccs = [cc for _ in golds]
        else:
            ccs = cc
    s = sound(pred, golds, ccs, io_)
    record.update(official_2025_01=int(score), sound=int(score) if s is None else s)
    out.append(record)
for r in out:
    print(json.dumps(r))
