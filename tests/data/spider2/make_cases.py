"""Writes tests/data/spider2/cases/: a tiny Spider 2.0-lite layout (see README.md).

    python make_cases.py            # from tests/data/spider2/, pandas 2.2.3

Gold result CSVs of ("sql", ...) cases are exported the way Spider 2.0's gold results are made
(pd.read_sql_query in chunks of 500, each chunk appended with to_csv); ("csv", ...) cases are
written verbatim; ("goldsql", ...) cases get gold SQL files and no CSV.
"""
import json
import os
import shutil
import sqlite3
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases")

DUMPS = {
    "shop": """
CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, price REAL, qty INTEGER, note TEXT);
INSERT INTO item VALUES (1,'apple',1.5,3,NULL),(2,'pear',2.25,3,'x'),(3,'fig',0.333333,NULL,'NULL'),
  (4,'kiwi',10.0,7,'True'),(5,'lime',9.999,7,'007');
CREATE TABLE pair(a INTEGER, b INTEGER);
INSERT INTO pair VALUES (1,2),(3,4),(5,6);
CREATE TABLE empty(x INTEGER, y TEXT);
CREATE TABLE mixed(v);
INSERT INTO mixed VALUES (1),('a'),(2.5),(NULL),(X'00FF');
""",
    "geo": """
CREATE TABLE city(name TEXT, pop REAL, country TEXT, rank INTEGER);
INSERT INTO city VALUES ('Oslo',0.709,'NO',2),('Bergen',0.285,'NO',3),('Paris',2.161,'FR',1),
  ('Lyon',0.516,'FR',4),('Nice',0.342,'FR',5);
""",
}

ITEMS = "SELECT name, price FROM item ORDER BY id"
CTE = ("WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x < 599) "
       "SELECT CASE WHEN x = 0 THEN 'a' WHEN x = 599 THEN NULL ELSE x END AS v FROM n")

# (instance, db, prediction, gold, condition_cols, ignore_order, what it checks)
CASES = [
    ("local001", "shop", ITEMS, ("sql", [ITEMS]), [], False, "same columns, same order"),
    ("local002", "shop", "SELECT price, name FROM item ORDER BY id", ("sql", [ITEMS]), [], False, "columns permuted"),
    ("local003", "shop", "SELECT id, name, qty, price FROM item ORDER BY id", ("sql", [ITEMS]), [], False, "extra predicted columns"),
    ("local004", "shop", "SELECT name FROM item ORDER BY id", ("sql", [ITEMS]), [], False, "a gold column missing"),
    ("local005", "shop", "SELECT DISTINCT qty FROM item", ("sql", ["SELECT qty FROM item ORDER BY id"]), [], True, "duplicates dropped"),
    ("local006", "shop", "SELECT name FROM item ORDER BY id DESC", ("sql", ["SELECT name FROM item ORDER BY id"]), [], False, "row order, order kept"),
    ("local007", "shop", "SELECT name FROM item ORDER BY id DESC", ("sql", ["SELECT name FROM item ORDER BY id"]), [], True, "row order, ignore_order"),
    ("local008", "shop", "SELECT a, (b + 1) % 6 + 1 AS b FROM pair ORDER BY a", ("sql", ["SELECT a, b FROM pair ORDER BY a"]), [], True, "scrambled rows"),
    ("local009", "shop", "SELECT a, (b + 1) % 6 + 1 AS b FROM pair ORDER BY a", ("sql", ["SELECT a, b FROM pair ORDER BY a"]), [], False, "scrambled rows, order kept"),
    ("local010", "shop", "SELECT name FROM item ORDER BY id", ("sql", [ITEMS]), [0], False, "condition_cols [0]"),
    ("local011", "shop", "SELECT upper(name), price FROM item ORDER BY id", ("sql", [ITEMS]), [1], False, "condition_cols [1], other column wrong"),
    ("local012", "shop", "SELECT a, (b + 1) % 6 + 1, 0 FROM pair ORDER BY a", ("sql", ["SELECT a, b, a * b FROM pair ORDER BY a"]), [0, 1], True, "scrambled rows on condition_cols"),
    ("local013", "shop", "SELECT note FROM item ORDER BY id", ("sql", ["SELECT note FROM item ORDER BY id"]), [], False, "NULL and text 'NULL'"),
    ("local014", "shop", "SELECT COALESCE(note, 'NULL') FROM item ORDER BY id", ("sql", ["SELECT note FROM item ORDER BY id"]), [], False, "text 'NULL' reads as NaN"),
    ("local015", "shop", "SELECT COALESCE(qty, 0) FROM item ORDER BY id", ("sql", ["SELECT qty FROM item ORDER BY id"]), [], False, "NaN against 0"),
    ("local016", "shop", "SELECT price + 0.009 FROM item ORDER BY id", ("sql", ["SELECT price FROM item ORDER BY id"]), [], False, "within 1e-2"),
    ("local017", "shop", "SELECT price + 0.011 FROM item ORDER BY id", ("sql", ["SELECT price FROM item ORDER BY id"]), [], False, "beyond 1e-2"),
    ("local018", "shop", "SELECT price + 0.01 FROM item ORDER BY id", ("sql", ["SELECT price FROM item ORDER BY id"]), [], False, "exactly 1e-2 apart in decimal"),
    ("local019", "shop", "SELECT price - 0.0099999 FROM item ORDER BY id", ("sql", ["SELECT price FROM item ORDER BY id"]), [], True, "just within 1e-2, ignore_order"),
    ("local020", "shop", "SELECT CAST(qty AS REAL) FROM item ORDER BY id", ("sql", ["SELECT qty FROM item ORDER BY id"]), [], False, "int against real"),
    ("local021", "shop", "SELECT 7", ("sql", ["SELECT '007' AS v"]), [], False, "text '007' reads as 7"),
    ("local022", "shop", "SELECT x FROM empty", ("sql", ["SELECT x FROM empty"]), [], False, "both empty"),
    ("local023", "shop", "SELECT id, name FROM item WHERE id > 99", ("sql", ["SELECT x FROM empty"]), [], True, "both empty, other columns"),
    ("local024", "shop", "SELECT id FROM item", ("sql", ["SELECT x FROM empty"]), [], True, "gold empty"),
    ("local025", "shop", "SELECT x FROM empty", ("sql", ["SELECT id FROM item"]), [], True, "prediction empty"),
    ("local026", "shop", "SELECT name FROM item WHERE id >= 4 ORDER BY id", ("sql", ["SELECT name FROM item WHERE id <= 2 ORDER BY id", "SELECT name FROM item WHERE id >= 4 ORDER BY id"]), [], False, "second of two gold CSVs"),
    ("local027", "shop", "SELECT name FROM item WHERE id = 3", ("sql", ["SELECT name FROM item WHERE id <= 2 ORDER BY id", "SELECT name FROM item WHERE id >= 4 ORDER BY id"]), [], False, "neither gold CSV"),
    ("local028", "shop", "SELECT name FROM item WHERE id >= 4 ORDER BY id", ("goldsql", ["SELECT name FROM item WHERE id <= 2 ORDER BY id", "SELECT name FROM item WHERE id >= 4 ORDER BY id"]), [], False, "second of two gold SQL files"),
    ("local029", "shop", "SELECT name FROM item WHERE id = 3", ("goldsql", ["SELECT name FROM item WHERE id <= 2 ORDER BY id", "SELECT name FROM item WHERE id >= 4 ORDER BY id"]), [], False, "neither gold SQL file"),
    ("local030", "shop", "SELECT price FROM item ORDER BY id", ("sql", [ITEMS, "SELECT price, name FROM item ORDER BY id"]), [[0], [0]], False, "per-gold condition_cols"),
    ("local031", "shop", "SELECT upper(name), price FROM item ORDER BY id", ("sql", [ITEMS, "SELECT name, price FROM item ORDER BY id DESC"]), [1], False, "flat condition_cols for every gold"),
    ("local032", "shop", "SELECT 9.999 UNION ALL SELECT 9.0", ("csv", ["v\n10.0\n9.0\n"]), [], True, "string sort misses a tolerance match"),
    ("local033", "shop", "SELECT v FROM mixed ORDER BY rowid", ("sql", ["SELECT v FROM mixed ORDER BY rowid"]), [], False, "mixed types and a blob"),
    ("local034", "shop", "SELECT 1 UNION ALL SELECT 0", ("csv", ["flag\nTrue\nFalse\n"]), [], False, "True against 1"),
    ("local035", "shop", "SELECT 1.0 UNION ALL SELECT 2.0", ("csv", ["n\n1\n2\n"]), [], False, "csv 1 against real 1.0"),
    ("local036", "shop", "SELECT 3 UNION ALL SELECT 7 UNION ALL SELECT 7 UNION ALL SELECT 7", ("sql", ["SELECT qty FROM item WHERE qty IS NOT NULL"]), [], True, "multiplicities differ"),
    ("local037", "shop", "SELECT nope FROM item", ("sql", ["SELECT id FROM item"]), [], False, "prediction fails"),
    ("local038", "shop", "SELECT 'x,y', 'line1' || char(10) || 'line2' UNION ALL SELECT 'q\"uote', 'plain'", ("csv", ['a,b\n"x,y","line1\nline2"\n"q""uote",plain\n']), [], False, "quoted CSV fields"),
    ("local039", "shop", CTE, ("sql", [CTE]), [], False, "600 rows, chunked export on both sides"),
    ("local040", "shop", CTE, ("unchunked", [CTE]), [], False, "600 rows, gold exported in one piece"),
    ("local041", "geo", "SELECT name, rank FROM city ORDER BY name", ("sql", ["SELECT name, rank FROM city ORDER BY rank"]), [0, 1], True, "reordered rows, consistent"),
    ("local042", "geo", "SELECT name, pop * 1000 FROM city ORDER BY rank", ("sql", ["SELECT name, pop FROM city ORDER BY rank"]), [], False, "values differ"),
    ("local043", "geo", "SELECT c1.name, c2.pop FROM city c1 JOIN city c2 ON c1.rank = c2.rank % 5 + 1", ("sql", ["SELECT name, pop FROM city"]), [], True, "scrambled pairing of names and values"),
    ("local044", "geo", "SELECT name, pop + 0.005 FROM city ORDER BY name", ("sql", ["SELECT name, pop FROM city ORDER BY rank"]), [], True, "tolerance and ignore_order"),
    ("local045", "shop", "SELECT 9007199254740992", ("sql", ["SELECT 9007199254740993 AS big, 'a' AS t"]), [0], False, "integers beyond 2^53 compare as floats"),
    ("local046", "shop", "SELECT price FROM item ORDER BY id", ("sql", [ITEMS]), [-1], False, "negative condition column"),
    ("local047", "shop", "SELECT note FROM item ORDER BY note DESC", ("sql", ["SELECT note FROM item ORDER BY id"]), [], True, "NaN under ignore_order"),
    ("local048", "geo", "SELECT country, name FROM city ORDER BY name", ("sql", ["SELECT country, name FROM city ORDER BY rank"]), [], True, "repeated values, consistent reorder"),
    ("local049", "geo", "SELECT c1.country, c2.name FROM city c1 JOIN city c2 ON c1.rank = c2.rank % 5 + 1", ("sql", ["SELECT country, name FROM city"]), [], True, "repeated values, scrambled"),
]


def export(conn, sql, path, chunked=True):
    if chunked:
        for i, chunk in enumerate(pd.read_sql_query(sql, conn, chunksize=500)):
            chunk.to_csv(path, mode="a" if i > 0 else "w", header=i == 0, index=False)
    else:
        pd.read_sql_query(sql, conn).to_csv(path, index=False)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    results = os.path.join(OUT, "gold", "exec_result")
    sqls = os.path.join(OUT, "gold", "sql")
    os.makedirs(results)
    os.makedirs(sqls)
    conns = {}
    for db, dump in DUMPS.items():
        with open(os.path.join(OUT, f"{db}.sql"), "w") as f:
            f.write(dump.lstrip())
        conns[db] = sqlite3.connect(":memory:")
        conns[db].executescript(dump)
    tasks, evals, preds = [], [], []
    for instance, db, pred, (kind, golds), condition_cols, ignore_order, what in CASES:
        names = [instance] if len(golds) == 1 else [f"{instance}_{chr(97 + i)}" for i in range(len(golds))]
        for name, gold in zip(names, golds):
            if kind in ("sql", "unchunked"):
                export(conns[db], gold, os.path.join(results, f"{name}.csv"), kind == "sql")
            elif kind == "csv":
                with open(os.path.join(results, f"{name}.csv"), "w", newline="") as f:
                    f.write(gold)
            else:
                with open(os.path.join(sqls, f"{name}.sql"), "w") as f:
                    f.write(gold)
        tasks.append({"instance_id": instance, "db": db, "question": what})
        evals.append({"instance_id": instance, "condition_cols": condition_cols, "ignore_order": ignore_order, "toks": 0})
        preds.append({"id": instance, "sql": pred})
    for name, rows in [("spider2-lite.jsonl", tasks), ("gold/spider2lite_eval.jsonl", evals), ("predictions.jsonl", preds)]:
        with open(os.path.join(OUT, name), "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)


if __name__ == "__main__":
    main()
