#!/usr/bin/env python3
"""Writes the EvalBench-style conformance corpus (issue 46): three SQLite databases in EvalBench's
setup layout (`setup/<db>/sqlite/setup.sql` + `setup/<db>/data/<table>.csv`) and as one script
each for sqlgate (`db/<db>.sql`), the items in EvalBench's standard format (`items.json`), one
prediction per item (`predictions.jsonl`) and what each pair tests (`cases.jsonl`).
Standard library only; the output is byte-for-byte stable."""

import csv
import io
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

SCHEMAS = {
    "shop": {
        "customers": ("id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT", [
            (1, "'Ada'", "'Oslo'"), (2, "'Ben'", "'Rome'"), (3, "'Cy'", "'Oslo'"),
            (4, "'Dee'", "NULL"), (5, "'Eve'", "'Lima'"),
        ]),
        "products": ("id INTEGER PRIMARY KEY, name TEXT, price REAL, stock INTEGER", [
            (1, "'pen'", 1.5, 100), (2, "'ink'", 4.25, 20), (3, "'pad'", 3.0, 0),
            (4, "'cap'", 2.0, 7), (5, "'bag'", 19.99, 3),
        ]),
        "orders": ("id INTEGER PRIMARY KEY, customer_id INTEGER, product_id INTEGER, qty INTEGER, status TEXT", [
            (1, 1, 1, 3, "'paid'"), (2, 1, 2, 1, "'paid'"), (3, 2, 5, 1, "'cancelled'"),
            (4, 3, 3, 2, "'open'"), (5, 5, 1, 10, "'paid'"), (6, 2, 4, 1, "'cancelled'"),
        ]),
    },
    "school": {
        "students": ("id INTEGER PRIMARY KEY, name TEXT, grade INTEGER, class TEXT", [
            (1, "'Ann'", 9, "'A'"), (2, "'Bo'", 10, "'A'"), (3, "'Cat'", 9, "'B'"),
            (4, "'Dan'", 11, "'B'"), (5, "'Eli'", 10, "'A'"), (6, "'Fay'", 9, "'B'"),
        ]),
        "courses": ("id INTEGER PRIMARY KEY, title TEXT, credits INTEGER", [
            (1, "'math'", 5), (2, "'art'", 2), (3, "'chem'", 4),
        ]),
        "enrollments": ("student_id INTEGER, course_id INTEGER, score REAL", [
            (1, 1, 88.5), (1, 2, 92.0), (2, 1, 71.0), (3, 3, 65.5), (4, 1, 99.0),
            (5, 2, 80.0), (6, 3, 77.0),
        ]),
    },
    "library": {
        "books": ("id INTEGER PRIMARY KEY, title VARCHAR(40), author TEXT, year INT, copies INTEGER", [
            (1, "'Dune'", "'Herbert'", 1965, 2), (2, "'Emma'", "'Austen'", 1815, 1),
            (3, "'Ubik'", "'Dick'", 1969, 0), (4, "'Kim'", "'Kipling'", 1901, 3),
            (5, "'Ulysses'", "'Joyce'", 1922, 1),
        ]),
        "loans": ("id INTEGER PRIMARY KEY, book_id INTEGER, member TEXT, returned INTEGER", [
            (1, 1, "'zoe'", 1), (2, 1, "'yan'", 0), (3, 4, "'zoe'", 0), (4, 5, "'xia'", 1),
            (5, 2, "'yan'", 0),
        ]),
    },
}

ITEMS = []
PREDICTIONS = []
CASES = []


def add(db, query_type, gold, pred, expect, covers, eval_query=None):
    """One item: gold (one string, as EvalBench takes golden_sql[0]), the prediction (a
    statement list), what a reader of EvalBench's code expects (pass / fail) and tags."""
    item_id = len(ITEMS) + 1
    ITEMS.append({
        "id": item_id,
        "nl_prompt": f"constructed item {item_id} ({query_type}, {db})",
        "query_type": query_type,
        "database": db,
        "dialects": ["sqlite"],
        "golden_sql": {"sqlite": [gold]},
        "eval_query": {"sqlite": [eval_query]},
        "setup_sql": {},
        "cleanup_sql": {},
        "tags": [query_type.upper()] + covers,
        "other": {},
    })
    PREDICTIONS.append({"instance_id": str(item_id), "pred_sqls": pred})
    CASES.append({"id": item_id, "database": db, "query_type": query_type,
                  "expect": expect, "covers": covers})


def dql():
    for db, gold, same_other_alias, reorder in [
        ("shop", "SELECT name, city FROM customers ORDER BY id",
         "SELECT name AS who, city FROM customers ORDER BY id",
         "SELECT name, city FROM customers ORDER BY id DESC"),
        ("school", "SELECT name, grade FROM students WHERE class = 'A' ORDER BY name",
         "SELECT name AS n, grade FROM students WHERE class = 'A' ORDER BY name",
         "SELECT name, grade FROM students WHERE class = 'A' ORDER BY grade DESC, name"),
        ("library", "SELECT title, year FROM books WHERE copies > 0 ORDER BY year",
         "SELECT title AS t, year FROM books WHERE copies > 0 ORDER BY year",
         "SELECT title, year FROM books WHERE copies > 0 ORDER BY title"),
    ]:
        add(db, "dql", gold, [gold], "pass", ["same"])
        add(db, "dql", gold, [gold.replace("SELECT", "SELECT  ")], "pass", ["same-result"])
        add(db, "dql", gold, [same_other_alias], "fail", ["quirk-column-names"])
        add(db, "dql", gold, [reorder], "fail", ["order"])
        add(db, "dql", gold, [gold, "DROP TABLE " + {"shop": "customers", "school": "students", "library": "books"}[db]],
            "pass", ["multi-statement", "quirk-first-statement-only"])
        add(db, "dql", gold, [gold.replace("FROM", "FROM nowhere_")], "fail", ["error"])
    add("shop", "dql", "SELECT COUNT(*) AS n FROM orders WHERE status = 'paid'",
        ["SELECT 3 AS n"], "pass", ["same-result"])
    add("shop", "dql", "SELECT SUM(qty) AS total FROM orders",
        ["SELECT SUM(qty) * 1.0 AS total FROM orders"], "pass", ["quirk-int-equals-float"])
    add("shop", "dql", "SELECT name, price FROM products WHERE stock > 0 ORDER BY price",
        ["SELECT name, price FROM products WHERE stock >= 0 ORDER BY price"], "fail", ["wrong"])
    add("shop", "dql", "SELECT name AS a, city AS b FROM customers WHERE id = 1",
        ["SELECT name AS a, city AS a FROM customers WHERE id = 1"], "fail", ["quirk-duplicate-column"])
    add("shop", "dql", "SELECT city AS a FROM customers WHERE id = 1",
        ["SELECT name AS a, city AS a FROM customers WHERE id = 1"], "pass", ["quirk-duplicate-column"])
    add("school", "dql", "SELECT name FROM students WHERE grade = 9 ORDER BY id",
        ["DELETE FROM students WHERE grade = 9"], "fail", ["state-changing-in-dql"])
    add("school", "dql", "SELECT AVG(score) AS avg FROM enrollments",
        ["SELECT AVG(score) AS avg FROM enrollments", "SELECT 1"], "pass", ["multi-statement"])
    add("library", "dql", "SELECT member FROM loans WHERE returned = 0 ORDER BY id",
        ["SELECT member FROM loans WHERE returned = 0"], "pass", ["same-result"])
    add("library", "dql", "SELECT title FROM books WHERE year < 1900",
        ["SELECT title FROM books WHERE year < 1800"], "fail", ["quirk-empty-vs-rows"])
    add("library", "dql", "SELECT title FROM books WHERE year < 1800",
        ["SELECT title FROM books WHERE year < 1700"], "pass", ["empty-both"])
    add("library", "dql", "SELECT title FROM books ORDER BY id", [], "pass",
        ["quirk-empty-prediction-passes"])


def dml():
    specs = [
        # db, eval, gold, right prediction(s), wrong prediction
        ("shop", "SELECT id, stock FROM products ORDER BY id",
         "UPDATE products SET stock = stock + 10 WHERE stock < 5",
         [["UPDATE products SET stock = stock + 10 WHERE stock <= 4"]],
         ["UPDATE products SET stock = stock + 10 WHERE stock < 3"]),
        ("shop", "SELECT * FROM orders ORDER BY id",
         "DELETE FROM orders WHERE status = 'cancelled'",
         [["DELETE FROM orders WHERE status IN ('cancelled')"]],
         ["DELETE FROM orders WHERE status <> 'paid'"]),
        ("shop", "SELECT * FROM customers ORDER BY id",
         "INSERT INTO customers (id, name, city) VALUES (6, 'Fox', 'Oslo')",
         [["INSERT INTO customers VALUES (6, 'Fox', 'Oslo')"]],
         ["INSERT INTO customers (id, name, city) VALUES (6, 'Fox', 'oslo')"]),
        ("shop", "SELECT id, price FROM products ORDER BY id",
         "UPDATE products SET price = price * 2 WHERE id IN (1, 2); UPDATE products SET price = 0 WHERE stock = 0",
         [["UPDATE products SET price = price * 2 WHERE id IN (1, 2)", "UPDATE products SET price = 0 WHERE stock = 0"]],
         ["UPDATE products SET price = price * 2 WHERE id IN (1, 2)"]),
        ("school", "SELECT id, grade FROM students ORDER BY id",
         "UPDATE students SET grade = grade + 1 WHERE class = 'B'",
         [["UPDATE students SET grade = grade + 1 WHERE class = 'B' RETURNING id"]],
         ["UPDATE students SET grade = grade + 1"]),
        ("school", "SELECT * FROM enrollments ORDER BY student_id, course_id",
         "DELETE FROM enrollments WHERE score < 70",
         [["DELETE FROM enrollments WHERE NOT score >= 70"]],
         ["DELETE FROM enrollments WHERE score <= 71"]),
        ("school", "SELECT * FROM courses ORDER BY id",
         "INSERT INTO courses VALUES (4, 'bio', 3), (5, 'geo', 1)",
         [["INSERT INTO courses VALUES (4, 'bio', 3)", "INSERT INTO courses VALUES (5, 'geo', 1)"]],
         ["INSERT INTO courses VALUES (4, 'bio', 3)"]),
        ("library", "SELECT id, copies FROM books ORDER BY id",
         "UPDATE books SET copies = copies - 1 WHERE id IN (SELECT book_id FROM loans WHERE returned = 0)",
         [["UPDATE books SET copies = copies - 1 WHERE id IN (1, 4, 2)"]],
         ["UPDATE books SET copies = copies - 1 WHERE id IN (SELECT book_id FROM loans)"]),
        ("library", "SELECT * FROM loans ORDER BY id",
         "DELETE FROM loans WHERE returned = 1",
         [["DELETE FROM loans WHERE returned <> 0"]],
         ["DELETE FROM loans WHERE member = 'zoe'"]),
        ("library", "SELECT * FROM books ORDER BY id",
         "INSERT INTO books (id, title, author, year, copies) VALUES (6, 'Beloved', 'Morrison', 1987, 2)",
         [["REPLACE INTO books VALUES (6, 'Beloved', 'Morrison', 1987, 2)"]],
         ["INSERT INTO books (id, title, author, year, copies) VALUES (6, 'Beloved', 'Morrison', 1987, 1)"]),
    ]
    for db, eval_query, gold, rights, wrong in specs:
        for right in rights:
            add(db, "dml", gold, right, "pass", ["right"], eval_query)
        add(db, "dml", gold, wrong, "fail", ["wrong"], eval_query)
        # the right change, then a statement that fails: everything rolls back, an error
        add(db, "dml", gold, rights[0] + ["INSERT INTO no_such_table VALUES (1)"], "fail",
            ["error-part-way", "multi-statement"], eval_query)
    add("shop", "dml", "UPDATE products SET stock = 0 WHERE id = 5", ["UPDATE products SET stock = 0 WHERE id = 4"],
        "pass", ["quirk-no-eval-query"], None)
    add("shop", "dml", "DELETE FROM orders", ["UPDATE orders SET qty = qty"], "pass",
        ["quirk-empty-eval-result"], "SELECT * FROM orders")
    add("shop", "dml", "DELETE FROM orders WHERE id = 1", ["DELETE FROM orders WHERE id = 1", "DELETE FROM customers"],
        "pass", ["quirk-eval-scope", "multi-statement"], "SELECT * FROM orders ORDER BY id")
    add("school", "dml", "UPDATE students SET class = 'C' WHERE grade = 11",
        ["UPDATE students SET class = 'C' WHERE grade = 11 RETURNING name"], "pass",
        ["returning"], "SELECT id, class FROM students ORDER BY id")
    add("school", "dml", "UPDATE students SET class = 'C' WHERE grade = 11",
        ["UPDATE students SET class = 'C' WHERE grade = 11 RETURNING name"], "fail",
        ["quirk-no-eval-query", "returning"], None)
    add("shop", "dml",
        "CREATE TABLE archive AS SELECT * FROM orders WHERE status = 'cancelled'; DELETE FROM orders WHERE status = 'cancelled'",
        ["CREATE TABLE archive AS SELECT * FROM orders WHERE status = 'cancelled'",
         "DELETE FROM orders WHERE status = 'cancelled'"], "fail",
        ["quirk-ddl-autocommit", "multi-statement"], "SELECT COUNT(*) AS n FROM orders")
    add("shop", "dml",
        "DELETE FROM orders WHERE status = 'cancelled'",
        ["CREATE TABLE scratch AS SELECT id FROM orders", "DELETE FROM orders WHERE status = 'cancelled'"],
        "pass", ["ddl-in-dml", "multi-statement"], "SELECT COUNT(*) AS n FROM orders")
    add("school", "dml",
        "DELETE FROM enrollments WHERE course_id = 2; CREATE TABLE log (n INTEGER)",
        ["DELETE FROM enrollments WHERE course_id = 2", "CREATE TABLE log (n INTEGER)"],
        "pass", ["ddl-after-dml-rolled-back", "multi-statement"],
        "SELECT COUNT(*) AS n FROM enrollments")
    add("school", "dml",
        "UPDATE enrollments SET score = score + 5 WHERE course_id = 3",
        ["UPDATE enrollments SET score = score + 5.0 WHERE course_id = 3"], "pass",
        ["same-result"], "SELECT score FROM enrollments ORDER BY student_id, course_id")
    add("library", "dml", "UPDATE loans SET returned = 1 WHERE member = 'yan'",
        ["UPDATE loans SET returned = 1 WHERE member = 'yan'", "SELECT * FROM nowhere"], "fail",
        ["error-part-way", "multi-statement"], "SELECT id, returned FROM loans ORDER BY id")
    add("library", "dml", "UPDATE loans SET returned = 1 WHERE member = 'yan'",
        ["UPDATE loans SET returned = 1 WHERE member = 'yan' AND returned = 0"], "pass",
        ["right"], "SELECT id, returned FROM loans ORDER BY id")
    add("library", "dml", "INSERT INTO loans VALUES (6, 3, 'wu', 0)",
        ["INSERT INTO loans VALUES (6, 3, 'wu', 0)"], "pass", ["pk-conflict-free"],
        "SELECT * FROM loans ORDER BY id")
    add("library", "dml", "INSERT INTO loans VALUES (6, 3, 'wu', 0)",
        ["INSERT INTO loans VALUES (5, 3, 'wu', 0)"], "fail", ["constraint-error"],
        "SELECT * FROM loans ORDER BY id")


def ddl():
    add("shop", "ddl", "CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT, rating REAL)",
        ["CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT, rating REAL)"], "pass", ["create-table"])
    add("shop", "ddl", "CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT, rating REAL)",
        ["CREATE TABLE suppliers (id INT, name TEXT NOT NULL, rating REAL DEFAULT 0)"], "pass",
        ["quirk-int-alias", "quirk-constraints-ignored"])
    add("shop", "ddl", "CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT, rating REAL)",
        ["CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT, rating NUMERIC)"], "fail", ["column-type"])
    add("shop", "ddl", "CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT, rating REAL)",
        ["CREATE TABLE suppliers (id INTEGER PRIMARY KEY, rating REAL, name TEXT)"], "fail", ["column-order"])
    add("shop", "ddl", "CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT, rating REAL)",
        ["CREATE TABLE supplier (id INTEGER PRIMARY KEY, name TEXT, rating REAL)"], "fail", ["table-name"])
    add("shop", "ddl", "CREATE TABLE tags (label VARCHAR(20), weight DECIMAL(6,2))",
        ["create table tags (label varchar(20), weight decimal(6, 2))"], "pass", ["quirk-type-case-and-args"])
    add("shop", "ddl", "CREATE TABLE tags (label VARCHAR(20), weight DECIMAL(6,2))",
        ["CREATE TABLE tags (label VARCHAR(30), weight DECIMAL(6,2))"], "fail", ["type-args"])
    add("shop", "ddl", "CREATE TABLE tags (label CLOB, weight MONEY)",
        ["CREATE TABLE tags (label NCLOB, weight CURRENCY)"], "pass", ["quirk-affinity"])
    add("shop", "ddl", "CREATE TABLE tags (label TEXT, weight BLOB)",
        ["CREATE TABLE tags (label TEXT, weight)"], "fail", ["quirk-blob-is-named"])
    add("shop", "ddl", "ALTER TABLE customers ADD COLUMN email TEXT",
        ["ALTER TABLE customers ADD COLUMN email TEXT DEFAULT ''"], "pass", ["alter-add"])
    add("shop", "ddl", "ALTER TABLE customers ADD COLUMN email TEXT",
        ["ALTER TABLE customers ADD COLUMN email VARCHAR(100)"], "fail", ["alter-add"])
    add("shop", "ddl", "ALTER TABLE products RENAME COLUMN stock TO on_hand",
        ["ALTER TABLE products RENAME stock TO on_hand"], "pass", ["alter-rename-column"])
    add("shop", "ddl", "ALTER TABLE orders RENAME TO purchases",
        ["CREATE TABLE purchases AS SELECT * FROM orders", "DROP TABLE orders"], "pass",
        ["quirk-ctas-types", "multi-statement"])
    add("shop", "ddl", "CREATE INDEX idx_orders_status ON orders (status)",
        ["CREATE INDEX idx_status ON orders (customer_id)"], "pass", ["quirk-index-invisible"])
    add("shop", "ddl", "CREATE UNIQUE INDEX idx_orders_customer ON orders (customer_id)",
        ["CREATE UNIQUE INDEX idx_orders_customer ON orders (customer_id)"], "pass",
        ["quirk-ddl-on-empty-tables"])
    add("shop", "ddl", "CREATE VIEW paid_orders AS SELECT * FROM orders WHERE status = 'paid'",
        ["CREATE VIEW paid_orders AS SELECT * FROM orders WHERE status = 'paid'"], "fail",
        ["quirk-view-survives-reset"])
    add("shop", "ddl", "CREATE VIEW open_orders AS SELECT * FROM orders WHERE status = 'open'",
        ["CREATE VIEW open_orders_v AS SELECT id FROM orders"], "pass", ["quirk-view-invisible"])
    add("school", "ddl", "DROP TABLE enrollments", ["DROP TABLE enrollments"], "pass", ["drop-table"])
    add("school", "ddl", "DROP TABLE enrollments", ["DROP TABLE courses"], "fail", ["drop-table"])
    add("school", "ddl", "DROP TABLE IF EXISTS enrollments",
        ["DROP TABLE enrollments", "DROP TABLE enrollments"], "fail", ["error-part-way", "multi-statement"])
    add("school", "ddl", "ALTER TABLE students DROP COLUMN class",
        ["ALTER TABLE students DROP COLUMN class"], "pass", ["alter-drop-column"])
    add("school", "ddl", "ALTER TABLE students DROP COLUMN class",
        ["ALTER TABLE students DROP COLUMN grade"], "fail", ["alter-drop-column"])
    add("school", "ddl",
        "CREATE TABLE teachers (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE teaches (teacher_id INTEGER, course_id INTEGER)",
        ["CREATE TABLE teachers (id INTEGER PRIMARY KEY, name TEXT)",
         "CREATE TABLE teaches (teacher_id INTEGER, course_id INTEGER)"], "pass", ["multi-statement"])
    add("school", "ddl",
        "CREATE TABLE teachers (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE teaches (teacher_id INTEGER, course_id INTEGER)",
        ["CREATE TABLE teachers (id INTEGER PRIMARY KEY, name TEXT)",
         "CREATE TABLE teachers (teacher_id INTEGER, course_id INTEGER)"], "fail", ["error-part-way", "multi-statement"])
    add("school", "ddl", "CREATE TABLE clubs (id INTEGER, name TEXT)",
        ["CREATE TABLE clubs (id INTEGER, name TEXT)", "INSERT INTO clubs VALUES (1, 'chess')"], "pass",
        ["dml-in-ddl", "multi-statement"])
    add("school", "ddl", "CREATE TABLE top AS SELECT id, name FROM students",
        ["CREATE TABLE top (id INT, name TEXT)"], "pass", ["ctas"])
    add("school", "ddl", "CREATE TABLE top AS SELECT id, name FROM students",
        ["CREATE TABLE top AS SELECT id, name || '' AS name FROM students"], "fail", ["quirk-ctas-types"])
    add("school", "ddl", "ALTER TABLE courses ADD COLUMN level INTEGER",
        ["ALTER TABLE courses ADD COLUMN level INTEGER NOT NULL"], "pass", ["quirk-ddl-on-empty-tables", "alter-add-not-null"])
    add("library", "ddl", "CREATE TABLE members (name TEXT PRIMARY KEY, joined DATE)",
        ["CREATE TABLE members (name TEXT PRIMARY KEY, joined DATE)"], "pass", ["create-table"])
    add("library", "ddl", "CREATE TABLE members (name TEXT PRIMARY KEY, joined DATE)",
        ["CREATE TABLE members (name TEXT PRIMARY KEY, joined DATETIME)"], "fail", ["column-type"])
    add("library", "ddl", "CREATE TABLE members (name TEXT PRIMARY KEY, joined DATE)",
        ["CREATE TABLE IF NOT EXISTS members (name TEXT, joined DATE)"], "pass", ["quirk-constraints-ignored"])
    add("library", "ddl", "ALTER TABLE loans ADD COLUMN due DATE",
        ["ALTER TABLE loans ADD COLUMN due DATE", "CREATE INDEX idx_due ON loans (due)"], "pass",
        ["multi-statement", "create-index"])
    add("library", "ddl", "ALTER TABLE books RENAME TO titles",
        ["ALTER TABLE books RENAME TO titles"], "pass", ["alter-rename-table"])
    add("library", "ddl", "ALTER TABLE books RENAME TO titles",
        ["ALTER TABLE books RENAME TO title"], "fail", ["alter-rename-table"])
    add("library", "ddl", "CREATE TABLE ratings (book_id INTEGER, stars SMALLINT, note NVARCHAR(50))",
        ["CREATE TABLE ratings (book_id BIGINT, stars SMALLINT, note NVARCHAR(50))"], "fail", ["column-type"])
    add("library", "ddl", "CREATE TABLE ratings (book_id INTEGER, stars SMALLINT, note NVARCHAR(50))",
        ["CREATE TABLE ratings (book_id INTEGER, stars SMALLINT, note NVARCHAR (50))"], "fail",
        ["quirk-type-space"])
    add("library", "ddl", "CREATE TABLE stats (n FLOAT, m DOUBLE PRECISION, k BOOLEAN)",
        ["CREATE TABLE stats (n FLOAT, m DOUBLE, k BOOL)"], "fail", ["quirk-type-words"])
    add("library", "ddl", "CREATE TABLE stats (n FLOAT, m DOUBLE, k BOOLEAN)",
        ["CREATE TABLE stats (n FLOAT, m DOUBLE, k BOOL)"], "pass", ["quirk-type-alias"])
    add("library", "ddl", "CREATE TABLE audit (id INTEGER, at TIMESTAMP)",
        ["CREATE TABLE audit (id INTEGER, at TIMESTAMP)", "CREATE TRIGGER t_audit AFTER INSERT ON loans BEGIN INSERT INTO audit VALUES (NEW.id, NULL); END"],
        "pass", ["trigger", "multi-statement"])
    add("library", "ddl", "DROP INDEX IF EXISTS no_index", ["SELECT 1"], "pass", ["quirk-metadata-only"])
    add("library", "ddl", "DROP INDEX IF EXISTS no_index", ["DROP VIEW IF EXISTS no_view"], "pass", ["no-change"])


def csv_text(rows):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in rows:
        writer.writerow(row)
    return out.getvalue()


def write(path, text):
    full = os.path.join(HERE, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def databases():
    for db, tables in SCHEMAS.items():
        creates = [f"CREATE TABLE {t} ({cols});" for t, (cols, _) in tables.items()]
        write(f"setup/{db}/sqlite/setup.sql", "\n".join(creates) + "\n")
        inserts = []
        for t, (_, rows) in tables.items():
            write(f"setup/{db}/data/{t}.csv", csv_text(rows))
            inserts += [f"INSERT INTO `{t}` VALUES ({', '.join(str(v) for v in row)});" for row in rows]
        write(f"db/{db}.sql", "\n".join(creates + inserts) + "\n")


def main():
    dql()
    dml()
    ddl()
    databases()
    write("items.json", json.dumps(ITEMS, indent=1) + "\n")
    write("predictions.jsonl", "".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    write("cases.jsonl", "".join(json.dumps(c) + "\n" for c in CASES))


if __name__ == "__main__":
    main()
