"""Builds the constructed BIRD mini-dev subset in tests/data/bird/minidev/ (run once; output committed).

The real BIRD databases are not available, so for a few db_ids of the mini-dev set this makes small
databases from dev_tables.json (tables and columns as declared, no constraints), filled with
deterministic pseudo-random rows whose values include the constants the gold queries and the
GPT-4-turbo predictions of that database mention (so that queries return rows). Writes
<db>.sql (the dump the tests load), dev.json (the mini-dev items of those databases, fields
unchanged) and predictions.json (their predictions, BIRD's map renumbered 0..n-1).

usage: python3 make_minidev.py ../../../../shared/data/bird/mini_dev
"""
import json
import random
import re
import sys

DBS = ["debit_card_specializing", "toxicology", "superhero"]
ROWS = 40

src = sys.argv[1]
items = json.load(open(f"{src}/mini_dev_sqlite.json"))
preds = json.load(open(f"{src}/predictions/predict_mini_dev_gpt-4-turbo_cot_SQLite.json"))
tables = {t["db_id"]: t for t in json.load(open(f"{src}/dev_tables.json"))}

chosen = [(i, item) for i, item in enumerate(items) if item["db_id"] in DBS]
json.dump([item for _, item in chosen], open("minidev/dev.json", "w"), indent=1, ensure_ascii=False)
json.dump({str(k): preds[str(i)] for k, (i, _) in enumerate(chosen)},
          open("minidev/predictions.json", "w"), indent=1, ensure_ascii=False)

def quote(value):
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)

for db in DBS:
    rng = random.Random(db)
    texts = set(["a", "b", "c"])
    numbers = set()
    for i, item in chosen:
        if item["db_id"] != db:
            continue
        for sql in (item["SQL"], preds[str(i)].split("\t----- bird -----\t")[0]):
            texts.update(m.replace("''", "'") for m in re.findall(r"'((?:[^']|'')*)'", sql))
            numbers.update(float(n) if "." in n else int(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", sql))
    texts = sorted(t for t in texts if len(t) < 40)
    numbers = sorted(numbers)
    entry = tables[db]
    lines = []
    for t, table in enumerate(entry["table_names_original"]):
        columns = [(name, entry["column_types"][c]) for c, (owner, name) in enumerate(entry["column_names_original"]) if owner == t]
        kinds = {"integer": "INTEGER", "real": "REAL", "text": "TEXT", "date": "DATE", "datetime": "DATETIME"}
        lines.append(f'CREATE TABLE "{table}" (' + ", ".join(f'"{n}" {kinds[k]}' for n, k in columns) + ");")
        for _ in range(ROWS):
            row = []
            for name, kind in columns:
                if rng.random() < 0.05:
                    row.append(None)
                elif kind == "integer":
                    pool = list(range(0, 8)) + [n for n in numbers if isinstance(n, int) and n < 10**6]
                    row.append(rng.choice(pool))
                elif kind == "real":
                    row.append(rng.choice([round(rng.uniform(0, 100), 2)] + [float(n) for n in numbers[:20]]))
                elif kind in ("date", "datetime"):
                    row.append(rng.choice(["2012-01-05", "2013-08-24", "2012-08-25", "201309", "201201"] + [x for x in texts if x[:2] in ("19", "20")]))
                else:
                    row.append(rng.choice(texts + [str(rng.randint(0, 7))]))
            lines.append(f'INSERT INTO "{table}" VALUES (' + ", ".join(quote(v) for v in row) + ");")
    open(f"minidev/{db}.sql", "w").write("\n".join(lines) + "\n")
