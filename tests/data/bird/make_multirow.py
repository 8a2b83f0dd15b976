"""Builds tests/data/bird/multirow/ (run once; output committed): all 500 BIRD mini-dev SQLite
items over small generated databases on which many golds return several rows, the case where
the official Soft-F1's row pairing matters.

The real BIRD databases are not available. For each of the 11 mini-dev db_ids this makes tables
and columns as dev_tables.json declares them (no constraints) and fills them with seeded
pseudo-random rows whose values come from the constants the gold queries and the GPT-4-turbo
predictions compare each column with (`col = 'x'`, `col > 5`, `col IN (...)`, `col BETWEEN`,
`STRFTIME('%Y', col) = '2012'`, `col LIKE '20%'`), so filters keep several rows; key columns
(primary and foreign keys of dev_tables.json, and columns named like ids) draw from a few
shared values, so joins fan out. Of SEEDS candidates per database the one where the most golds
return two or more distinct rows is kept. Writes <db>.sql (the dumps the tests load); the items
and predictions are the shared mini_dev_sqlite.json and GPT-4-turbo map, read from there.

usage: python3 make_multirow.py ../../../../shared/data/bird/mini_dev
"""
import json
import os
import random
import re
import sqlite3
import sys
import time

ROWS = 30
SEEDS = 6
OUT = "multirow"

src = sys.argv[1]
items = json.load(open(f"{src}/mini_dev_sqlite.json"))
preds = json.load(open(f"{src}/predictions/predict_mini_dev_gpt-4-turbo_cot_SQLite.json"))
tables = {t["db_id"]: t for t in json.load(open(f"{src}/dev_tables.json"))}
os.makedirs(OUT, exist_ok=True)

IDENT = r"(?:\w+\.)?(?:`([^`]+)`|\"([^\"]+)\"|\[([^\]]+)\]|(\w+))"
LITERAL = r"('(?:[^']|'')*'|-?\d+(?:\.\d+)?)"
COMPARE = re.compile(IDENT + r"\s*(?:==|=|!=|<>|>=|<=|>|<|NOT\s+LIKE|LIKE)\s*" + LITERAL, re.I)
IN_LIST = re.compile(IDENT + r"\s+(?:NOT\s+)?IN\s*\(([^()]*)\)", re.I)
BETWEEN = re.compile(IDENT + r"\s+BETWEEN\s+" + LITERAL + r"\s+AND\s+" + LITERAL, re.I)
TIME_PART = re.compile(
    r"STRFTIME\s*\(\s*'([^']*)'\s*,\s*" + IDENT + r"\s*\)\s*(?:=|>=|<=|>|<|!=|<>)\s*" + LITERAL, re.I)
TIME_RANGE = re.compile(
    r"STRFTIME\s*\(\s*'([^']*)'\s*,\s*" + IDENT + r"\s*\)\s+BETWEEN\s+" + LITERAL + r"\s+AND\s+" + LITERAL, re.I)


def name_of(groups):
    return next(g for g in groups if g).lower()


def literal(text):
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    return float(text) if "." in text else int(text)


def like_values(pattern, rng):
    """Strings a LIKE pattern matches."""
    return [pattern.replace("%", fill).replace("_", "a") for fill in ("", "x", rng.choice(["0", "1", "b"]))]


def dated(part_format, value, rng):
    """A date string whose STRFTIME(part_format, .) gives value."""
    text = str(value)
    if part_format == "%Y" and re.fullmatch(r"\d{4}", text):
        return f"{text}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if part_format == "%m" and re.fullmatch(r"\d{1,2}", text):
        return f"{rng.choice([2012, 2013])}-{int(text):02d}-{rng.randint(1, 28):02d}"
    if part_format == "%Y-%m" and re.fullmatch(r"\d{4}-\d{2}", text):
        return f"{text}-{rng.randint(1, 28):02d}"
    return None


def column_constants(sqls, rng):
    """Per lower-case column name, the constants the queries compare it with."""
    pools = {}

    def add(column, value):
        if isinstance(value, str) and len(value) > 40:
            return
        pools.setdefault(column, []).append(value)

    for sql in sqls:
        for m in TIME_PART.finditer(sql):
            value = dated(m.group(1), literal(m.group(6)), rng)
            if value:
                add(name_of(m.groups()[1:5]), value)
        for m in TIME_RANGE.finditer(sql):
            for bound in (m.group(6), m.group(7)):
                value = dated(m.group(1), literal(bound), rng)
                if value:
                    add(name_of(m.groups()[1:5]), value)
        for m in COMPARE.finditer(sql):
            value = literal(m.group(5))
            column = name_of(m.groups()[:4])
            if isinstance(value, str) and ("%" in value or "_" in value) and "LIKE" in m.group(0).upper():
                for v in like_values(value, rng):
                    add(column, v)
            else:
                add(column, value)
        for m in BETWEEN.finditer(sql):
            low, high = literal(m.group(5)), literal(m.group(6))
            column = name_of(m.groups()[:4])
            add(column, low)
            add(column, high)
            if isinstance(low, (int, float)) and isinstance(high, (int, float)):
                add(column, (low + high) / 2 if isinstance(low, float) or isinstance(high, float) else (low + high) // 2)
        for m in IN_LIST.finditer(sql):
            for value in re.findall(LITERAL, m.group(5)):
                add(name_of(m.groups()[:4]), literal(value))
    return pools


def key_columns(entry):
    """Column indexes that are keys: declared primary / foreign keys, or named like ids."""
    keys = set()
    for pk in entry.get("primary_keys", []):
        keys.update(pk if isinstance(pk, list) else [pk])
    for a, b in entry.get("foreign_keys", []):
        keys.update([a, b])
    for c, (owner, name) in enumerate(entry["column_names_original"]):
        lower = name.lower()
        if owner >= 0 and (lower == "id" or lower.endswith("_id") or lower.endswith("id") and len(lower) <= 8):
            keys.add(c)
    return keys


def generate(db, entry, sqls, seed):
    rng = random.Random(f"{db}-{seed}")
    pools = column_constants(sqls, rng)
    texts = sorted({v for values in pools.values() for v in values if isinstance(v, str)})
    numbers = sorted({v for values in pools.values() for v in values if not isinstance(v, str) and abs(v) < 10**6})
    keys = key_columns(entry)
    kinds = {"integer": "INTEGER", "real": "REAL", "text": "TEXT", "date": "DATE", "datetime": "DATETIME"}
    lines = []
    for t, table in enumerate(entry["table_names_original"]):
        columns = [(c, name, entry["column_types"][c]) for c, (owner, name) in enumerate(entry["column_names_original"]) if owner == t]
        lines.append(f'CREATE TABLE "{table}" (' + ", ".join(f'"{n}" {kinds.get(k, "TEXT")}' for _, n, k in columns) + ");")
        for _ in range(ROWS):
            row = [cell(c in keys, kind, pools.get(name.lower(), []), texts, numbers, rng) for c, name, kind in columns]
            lines.append(f'INSERT INTO "{table}" VALUES (' + ", ".join(quote(v) for v in row) + ");")
    return "\n".join(lines) + "\n"


def cell(is_key, kind, own, texts, numbers, rng):
    if rng.random() < 0.04:
        return None
    if is_key:
        if own and rng.random() < 0.5:
            return rng.choice(own)
        return rng.randint(1, 6) if kind in ("integer", "real") else f"k{rng.randint(1, 6)}"
    if own and rng.random() < 0.6:
        return rng.choice(own)
    if kind == "integer":
        return rng.choice(list(range(0, 9)) + [int(n) for n in numbers])
    if kind == "real":
        return rng.choice([round(rng.uniform(0, 100), 1), 0.5] + [float(n) for n in numbers])
    if kind in ("date", "datetime"):
        day = f"{rng.choice([2011, 2012, 2013])}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        return day + (" 10:00:00" if kind == "datetime" else "")
    return rng.choice(texts + ["a", "b", str(rng.randint(0, 7))]) if texts else rng.choice(["a", "b", "c"])


def quote(value):
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def multi_row_golds(dump, golds):
    conn = sqlite3.connect(":memory:")
    conn.executescript(dump)
    deadline = [0.0]
    conn.set_progress_handler(lambda: time.monotonic() > deadline[0], 10000)
    count = 0
    for sql in golds:
        deadline[0] = time.monotonic() + 2.0
        try:
            if len(set(conn.execute(sql).fetchall())) >= 2:
                count += 1
        except Exception:
            pass
    return count


for db in sorted({item["db_id"] for item in items}):
    golds = [item["SQL"] for item in items if item["db_id"] == db]
    sqls = golds + [preds[str(i)].split("\t----- bird -----\t")[0] for i, item in enumerate(items) if item["db_id"] == db]
    best = max(range(SEEDS), key=lambda seed: (multi_row_golds(generate(db, tables[db], sqls, seed), golds), -seed))
    dump = generate(db, tables[db], sqls, best)
    print(db, "seed", best, "golds with 2+ distinct rows:", multi_row_golds(dump, golds), "of", len(golds))
    open(f"{OUT}/{db}.sql", "w").write(dump)
