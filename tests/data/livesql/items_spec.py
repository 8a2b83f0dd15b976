"""The texts of the conformance items; gen_items.py imports build() and writes the JSONL files."""

ORDERS_COLS = "SELECT id, customer_id, product_id, qty, status FROM orders ORDER BY id"


def shop(g):
    Q, M, pairs_q, pairs_m, INFINITE = g["Q"], g["M"], g["pairs_q"], g["pairs_m"], g["INFINITE"]
    pairs_q("shop", [
        ("How many orders are there per status?", "SELECT status, COUNT(*) FROM orders GROUP BY status",
         "SELECT status, count(id) AS n FROM orders GROUP BY status ORDER BY status",
         "SELECT status, COUNT(DISTINCT customer_id) FROM orders GROUP BY status", False, ["query", "group-by"]),
        ("List product names and prices from the most to the least expensive.",
         "SELECT name, price FROM products ORDER BY price DESC",
         "SELECT p.name, p.price AS cost FROM products p ORDER BY cost DESC",
         "SELECT name, price FROM products ORDER BY price ASC", True, ["query", "order-condition"]),
        ("What is the average price per category?", "SELECT category, ROUND(AVG(price), 2) FROM products GROUP BY category",
         "SELECT category, AVG(price) FROM products GROUP BY category",
         "SELECT category, CAST(AVG(price) AS INTEGER) FROM products GROUP BY category", False,
         ["query", "decimal-condition", "round-removed"]),
        ("Which customers live in Oslo?", "SELECT name FROM customers WHERE city = 'Oslo'",
         "SELECT c.name FROM customers AS c WHERE c.city = 'Oslo' ORDER BY c.id DESC",
         "SELECT name FROM customers WHERE city LIKE 'O%' OR city = 'Lyon'", False, ["query", "set-comparison"]),
        ("Total revenue of shipped orders.",
         "SELECT ROUND(SUM(o.qty * p.price), 2) FROM orders o JOIN products p ON p.id = o.product_id WHERE o.status = 'shipped'",
         "SELECT SUM(p.price * o.qty) FROM products p, orders o WHERE p.id = o.product_id AND o.status = 'shipped'",
         "SELECT SUM(p.price) FROM orders o JOIN products p ON p.id = o.product_id WHERE o.status = 'shipped'", False,
         ["query", "decimal-condition", "join"]),
    ])
    Q("shop", "How many distinct cities do customers live in?", "SELECT COUNT(DISTINCT city) FROM customers",
      "SELECT COUNT( DISTINCT city ) FROM customers", ["query", "quirk-distinct-between-spaces"],
      "correct, but DISTINCT between spaces is stripped from the prediction only")
    Q("shop", "In which cities do customers live?", "SELECT DISTINCT city FROM customers",
      "SELECT city FROM customers GROUP BY city", ["query", "distinct-removed", "set-comparison"],
      "correct; set comparison hides the duplicates that DISTINCT removal creates")
    Q("shop", "List the customer cities alphabetically, each once.", "SELECT city FROM customers GROUP BY city ORDER BY city",
      "SELECT DISTINCT city FROM customers ORDER BY city", ["query", "quirk-distinct-removed", "order-condition"],
      "correct, but DISTINCT removal creates duplicates in an ordered comparison", order=True)
    Q("shop", "List the product categories alphabetically, each once.",
      "SELECT DISTINCT category FROM products ORDER BY category",
      "SELECT DISTINCT\ncategory FROM products ORDER BY category", ["query", "quirk-distinct-newline", "order-condition"],
      "correct, but DISTINCT followed by a newline is kept while the gold's is removed", order=True)
    Q("shop", "Which orders carry the note 'two distinct items'?", "SELECT id FROM orders WHERE note = 'two distinct items'",
      "SELECT id FROM orders WHERE note = 'two distinct items'", ["query", "quirk-distinct-in-literal", "gold-fails"],
      "identical to the gold; DISTINCT is removed inside the string literal, both sides return no rows")
    Q("shop", "Which products cost more than 1000?", "SELECT name FROM products WHERE price > 1000",
      "SELECT name FROM products WHERE price > 1000", ["query", "quirk-empty-result", "gold-fails"],
      "identical to the gold; an empty result never matches")
    Q("shop", "How many orders are cancelled?", "SELECT COUNT(*) FROM orders WHERE status = 'cancelled'",
      ["DELETE FROM orders WHERE status = 'cancelled'", "SELECT COUNT(*) FROM orders WHERE status = 'cancelled'"],
      ["query", "quirk-gold-on-changed-copy", "multi-statement"],
      "wrong and destructive; passes because the gold runs on the copy the prediction changed")
    Q("shop", "How many orders have a quantity of at least 3?", "SELECT COUNT(*) FROM orders WHERE qty >= 3",
      ["CREATE TEMP TABLE big_orders AS SELECT * FROM orders WHERE qty >= 3", "SELECT COUNT(*) FROM big_orders"],
      ["query", "quirk-prediction-runs-twice", "multi-statement"],
      "correct, but the second run of the prediction fails on CREATE (table exists)")
    Q("shop", "How many orders have a quantity of at least 3?", "SELECT COUNT(*) FROM orders WHERE qty >= 3",
      ["CREATE TEMP VIEW IF NOT EXISTS big_orders AS SELECT * FROM orders WHERE qty >= 3", "SELECT COUNT(*) FROM big_orders"],
      ["query", "multi-statement"], "correct and re-runnable")
    Q("shop", "How many orders were placed?", "SELECT COUNT(*) FROM orders", "SELEC COUNT(*) FROM orders",
      ["query", "syntax-error"], "syntax error")
    Q("shop", "How many orders were placed?", "SELECT COUNT(*) FROM orders", "SELECT COUNT(*) FROM timeout_orders",
      ["query", "quirk-timeout-text"], "missing table whose name contains 'timeout': classified as a timeout")
    Q("shop", "Which product costs 40 when rounded to a whole number?", "SELECT name FROM products WHERE ROUND(price) = 40",
      "SELECT name FROM products WHERE price >= 39.5 AND price < 40.5", ["query", "quirk-round-stripped", "gold-fails"],
      "correct; ROUND removal changes the gold's WHERE clause to price = 40")
    Q("shop", "What is the Lantern's price rounded to 2 decimals?", "SELECT ROUND(price, 2) FROM products WHERE name = 'Lantern'",
      "SELECT CAST(price * 100 + 0.5 AS INTEGER) / 100.0 FROM products WHERE name = 'Lantern'",
      ["query", "quirk-round-half-even", "decimal-condition"],
      "correct (18.13 as SQLite rounds); the gold loses ROUND and Python rounds 18.125 to 18.12")
    Q("shop", "What is the total quantity ordered?", "SELECT SUM(qty) FROM orders", "SELECT SUM(qty * 1.0) FROM orders",
      ["query", "int-vs-float"], "correct; 100 equals 100.0")
    Q("shop", "What is the total quantity ordered?", "SELECT SUM(qty) FROM orders",
      "SELECT CAST(SUM(qty) AS TEXT) FROM orders", ["query", "text-vs-number"], "text '100' is not 100")
    Q("shop", "What is the total quantity ordered?", "SELECT SUM(qty) FROM orders",
      "-- total quantity\nSELECT SUM(qty) FROM orders", ["query", "comment"], "correct with a leading comment")
    Q("shop", "What is the total quantity ordered?", "SELECT SUM(qty) FROM orders",
      "SELECT SUM(qty) FROM orders -- total", ["query", "comment"], "correct with a trailing comment")
    Q("shop", "When did customer 1 join?", "SELECT joined FROM customers WHERE id = 1",
      "SELECT datetime(joined) FROM customers WHERE id = 1", ["query", "date-text"],
      "date text with a time part; SQLite dates are text, nothing normalises them")

    pairs_m("shop", [
        ("Add the product Thermos (id 11, outdoor, 22.5, stock 12).",
         ["INSERT INTO products VALUES (11, 'Thermos', 'outdoor', 22.5, 12)"],
         ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Thermos', 'outdoor', 22.5, 12)"],
         ["INSERT INTO products (id, name, category, price, stock) VALUES (11, 'Thermos', 'outdoor', 22.0, 12)"],
         ["SELECT id, name, category, price, stock FROM products WHERE id = 11", "SELECT COUNT(*) FROM products"],
         ["insert"]),
        ("Raise the price of kitchen products by 10%.",
         ["UPDATE products SET price = price * 1.1 WHERE category = 'kitchen'"],
         ["UPDATE products SET price = price + price * 0.1 WHERE category = 'kitchen'"],
         ["UPDATE products SET price = price * 1.1"],
         ["SELECT id, ROUND(price, 2) FROM products ORDER BY id"], ["update"]),
        ("Set the stock of every out-of-stock product to 10.",
         ["UPDATE products SET stock = 10 WHERE stock = 0"],
         ["UPDATE products SET stock = stock + 10 WHERE stock < 1"],
         ["UPDATE products SET stock = 10 WHERE stock < 5"],
         ["SELECT id, stock FROM products ORDER BY id"], ["update"]),
        ("Delete all cancelled orders.", ["DELETE FROM orders WHERE status = 'cancelled'"],
         ["DELETE FROM orders WHERE status IN ('cancelled')"],
         ["DELETE FROM orders WHERE status <> 'shipped'"],
         ["SELECT COUNT(*) FROM orders WHERE status = 'cancelled'", "SELECT COUNT(*) FROM orders"], ["delete"]),
        ("Create a table suppliers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT).",
         ["CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT)"],
         ["CREATE TABLE IF NOT EXISTS suppliers(\n  id INTEGER PRIMARY KEY,\n  name TEXT NOT NULL,\n  country TEXT\n)"],
         ["CREATE TABLE suppliers (id INTEGER PRIMARY KEY, name TEXT)"],
         ["SELECT name, type, \"notnull\", pk FROM pragma_table_info('suppliers') ORDER BY cid"], ["create-table"]),
        ("Create a view order_totals(order_id, total) giving quantity times price for each order.",
         ["CREATE VIEW order_totals AS SELECT o.id AS order_id, o.qty * p.price AS total FROM orders o JOIN products p ON p.id = o.product_id"],
         ["CREATE VIEW order_totals(order_id, total) AS SELECT orders.id, products.price * orders.qty FROM orders, products WHERE products.id = orders.product_id"],
         ["CREATE VIEW order_totals AS SELECT o.id AS order_id, p.price AS total FROM orders o JOIN products p ON p.id = o.product_id"],
         ["SELECT order_id, ROUND(total, 2) FROM order_totals ORDER BY order_id"], ["create-view"]),
        ("Create an index idx_orders_status on orders(status).",
         ["CREATE INDEX idx_orders_status ON orders(status)"],
         ["CREATE INDEX IF NOT EXISTS idx_orders_status ON orders (status)"],
         ["CREATE INDEX idx_orders_status ON orders(customer_id)"],
         ["SELECT name, tbl_name FROM sqlite_master WHERE type = 'index' AND name = 'idx_orders_status'",
          "SELECT name FROM pragma_index_info('idx_orders_status')"], ["create-index"]),
        ("Add a column discount REAL with default 0 to products.",
         ["ALTER TABLE products ADD COLUMN discount REAL DEFAULT 0"],
         ["ALTER TABLE products ADD discount REAL DEFAULT 0"],
         ["ALTER TABLE products ADD COLUMN discount INTEGER"],
         ["SELECT name, type, dflt_value FROM pragma_table_info('products') WHERE name = 'discount'"], ["alter"]),
        ("Rename the column customers.tier to loyalty_tier.",
         ["ALTER TABLE customers RENAME COLUMN tier TO loyalty_tier"],
         ["ALTER TABLE customers RENAME tier TO loyalty_tier"],
         ["ALTER TABLE customers ADD COLUMN loyalty_tier TEXT"],
         ["SELECT name FROM pragma_table_info('customers') ORDER BY cid"], ["alter"]),
        ("Move delivered orders into a new table archived_orders (same columns) and remove them from orders.",
         ["CREATE TABLE archived_orders AS SELECT * FROM orders WHERE 0",
          "INSERT INTO archived_orders SELECT * FROM orders WHERE status = 'delivered'",
          "DELETE FROM orders WHERE status = 'delivered'"],
         ["CREATE TABLE archived_orders AS SELECT * FROM orders WHERE status = 'delivered'",
          "DELETE FROM orders WHERE status = 'delivered'"],
         ["CREATE TABLE archived_orders AS SELECT * FROM orders WHERE status = 'delivered'",
          "DELETE FROM order WHERE status = 'delivered'"],
         ["SELECT COUNT(*) FROM archived_orders", "SELECT COUNT(*) FROM orders WHERE status = 'delivered'",
          "SELECT COUNT(*) FROM orders"], ["multi-statement", "create-table", "insert", "delete", "error-part-way"]),
    ])
    M("shop", "Delete all cancelled orders.", ["DELETE FROM orders WHERE status = 'cancelled'"],
      ["CREATE TEMP VIEW orders AS SELECT * FROM main.orders WHERE status <> 'cancelled'"],
      ["SELECT COUNT(*) FROM orders WHERE status = 'cancelled'", "SELECT COUNT(*) FROM orders"],
      ["delete", "quirk-temp-view-shadow"], "deletes nothing; a TEMP VIEW named orders hides the table from the checks",
      sound="fail")
    M("shop", "Delete the orders of customers from Cork.",
      ["DELETE FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE city = 'Cork')"],
      ["WITH c AS (SELECT id FROM customers WHERE city = 'Cork') DELETE FROM orders WHERE customer_id IN (SELECT id FROM c)"],
      [ORDERS_COLS], ["delete", "with-dml"], "correct; a WITH-led DML is fetched, not committed, on the same connection")
    M("shop", "Set the stock of every out-of-stock product to 10.", ["UPDATE products SET stock = 10 WHERE stock = 0"],
      ["UPDATE products SET stock = 10 WHERE stock = 0 RETURNING id"], ["SELECT id, stock FROM products ORDER BY id"],
      ["update", "returning"], "correct, with RETURNING")
    M("shop", "Set the stock of the Compass (id 10) to 7.", ["UPDATE products SET stock = 7 WHERE id = 10"],
      ["INSERT OR REPLACE INTO products (id, name, category, price, stock) VALUES (10, 'Compass', 'outdoor', 15.0, 7)"],
      ["SELECT * FROM products ORDER BY id"], ["update", "upsert"], "correct through INSERT OR REPLACE")
    M("shop", "Raise the price of kitchen products by 10%.",
      ["UPDATE products SET price = price * 1.1 WHERE category = 'kitchen'"],
      ["UPDATE products SET price = price * 1.1 WHERE category = 'kitchen'", "UPDATE products SET stok = 0 WHERE id = 1"],
      ["SELECT id, ROUND(price, 2) FROM products ORDER BY id"], ["update", "error-part-way", "multi-statement"],
      "right first statement, then an error")
    pre = ["CREATE TABLE staging_prices (product_id INTEGER, new_price REAL)",
           "INSERT INTO staging_prices VALUES (1, 41.0), (4, 25.5), (9, 79.9)"]
    for pred, intent, covers in [
        (["UPDATE products SET price = s.new_price FROM staging_prices s WHERE s.product_id = products.id"],
         "correct (UPDATE ... FROM)", ["right"]),
        (["UPDATE products SET price = (SELECT new_price FROM staging_prices WHERE product_id = products.id)"],
         "sets every unstaged price to NULL", ["wrong"])]:
        M("shop", "Apply the staged prices in staging_prices to products.",
          ["UPDATE products SET price = (SELECT new_price FROM staging_prices WHERE product_id = products.id) "
           "WHERE id IN (SELECT product_id FROM staging_prices)"], pred,
          ["SELECT id, price FROM products ORDER BY id"], ["update", "preprocess", "clean-up"] + covers, intent,
          preprocess=pre, clean_up=["DROP TABLE staging_prices"])
    Q("shop", "Top 3 products by revenue.",
      "SELECT p.name, SUM(o.qty * p.price) AS rev FROM orders o JOIN products p ON p.id = o.product_id GROUP BY p.id ORDER BY rev DESC LIMIT 3",
      "SELECT p.name, SUM(o.qty * p.price) FROM products p JOIN orders o ON o.product_id = p.id GROUP BY p.name ORDER BY 2 DESC LIMIT 3",
      ["query", "efficiency"], "correct; efficiency flag with the default test", order=True, efficiency=True)
    perf_tc = ("def test_case(pred_sqls, sol_sqls, db_path, conn):\n"
               "    old = ['SELECT * FROM orders WHERE customer_id = 3']\n"
               "    assert performance_compare_by_qep(old, ['SELECT * FROM orders WHERE customer_id = 3'], db_path, conn) == 1\n"
               "    return 1\n")
    idx_sql = "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'orders' ORDER BY name"
    for pred, intent, sound, covers in [
        (["CREATE INDEX idx_orders_customer ON orders(customer_id)"], "correct index", "pass", ["right"]),
        (["CREATE INDEX idx_orders_customer ON orders(status)"], "index on the wrong column", "fail", ["wrong"])]:
        add_raw = g["add"]
        add_raw("shop", "Management", "Speed up lookups of orders by customer with an index idx_orders_customer.",
                ["CREATE INDEX idx_orders_customer ON orders(customer_id)"], pred,
                ["efficiency", "create-index", "quirk-plan-cost-helper-missing", "gold-fails"] + covers,
                intent + "; the test calls performance_compare_by_qep, absent from the test globals",
                test_cases=[g["check_tc"]("SELECT name FROM pragma_index_info('idx_orders_customer')", [("customer_id",)]), perf_tc],
                efficiency=True, sound=sound)


def school(g):
    Q, M, pairs_q, pairs_m = g["Q"], g["M"], g["pairs_q"], g["pairs_m"]
    pairs_q("school", [
        ("How many students are in each grade?", "SELECT grade, COUNT(*) FROM students GROUP BY grade",
         "SELECT grade, COUNT(id) FROM students GROUP BY 1", "SELECT grade, COUNT(*) FROM students WHERE gpa > 2.5 GROUP BY grade",
         False, ["query", "group-by"]),
        ("List students by GPA, highest first, then by name.", "SELECT name, gpa FROM students ORDER BY gpa DESC, name",
         "SELECT name, gpa FROM students ORDER BY gpa DESC, name ASC", "SELECT name, gpa FROM students ORDER BY gpa, name",
         True, ["query", "order-condition", "ties"]),
        ("Average score per course title.",
         "SELECT c.title, ROUND(AVG(e.score), 2) FROM enrolments e JOIN courses c ON c.id = e.course_id GROUP BY c.title",
         "SELECT title, AVG(score) FROM courses JOIN enrolments ON course_id = courses.id GROUP BY title",
         "SELECT title, AVG(score) FROM courses JOIN enrolments ON student_id = courses.id GROUP BY title",
         False, ["query", "decimal-condition", "join"]),
        ("Which students take Biology?",
         "SELECT s.name FROM students s JOIN enrolments e ON e.student_id = s.id JOIN courses c ON c.id = e.course_id WHERE c.title = 'Biology'",
         "SELECT name FROM students WHERE id IN (SELECT student_id FROM enrolments WHERE course_id = 3)",
         "SELECT name FROM students WHERE id IN (SELECT course_id FROM enrolments WHERE student_id = 3)",
         False, ["query", "subquery"]),
        ("Total credits per department, largest first.", "SELECT dept, SUM(credits) AS c FROM courses GROUP BY dept ORDER BY c DESC",
         "SELECT dept, SUM(credits) FROM courses GROUP BY dept ORDER BY SUM(credits) DESC",
         "SELECT dept, SUM(credits) FROM courses GROUP BY dept ORDER BY dept", True, ["query", "order-condition"]),
        ("Mean GPA of grade 10 students.", "SELECT ROUND(AVG(gpa), 2) FROM students WHERE grade = 10",
         "SELECT AVG(gpa) FROM students WHERE grade = 10", "SELECT AVG(gpa) FROM students WHERE grade >= 10",
         False, ["query", "decimal-condition", "round-removed"]),
        ("Number of enrolments per term.", "SELECT term, COUNT(*) FROM enrolments GROUP BY term",
         "SELECT term, COUNT(*) FROM enrolments GROUP BY term", "SELECT term, COUNT(DISTINCT student_id) FROM enrolments GROUP BY term",
         False, ["query", "group-by"]),
    ])
    Q("school", "What share of enrolments scored at least 80, as a fraction?",
      "SELECT ROUND(SUM(score >= 80) * 1.0 / COUNT(*), 2) FROM enrolments",
      "SELECT AVG(CASE WHEN score >= 80 THEN 1.0 ELSE 0 END) FROM enrolments", ["query", "decimal-condition"],
      "correct; compared at 2 decimal places")
    Q("school", "What share of enrolments scored at least 80, as a fraction?",
      "SELECT ROUND(SUM(score >= 80) * 1.0 / COUNT(*), 2) FROM enrolments",
      "SELECT SUM(score >= 80) / COUNT(*) FROM enrolments", ["query", "integer-division"], "integer division gives 0")
    Q("school", "List the distinct departments in alphabetical order.", "SELECT DISTINCT dept FROM courses ORDER BY dept",
      "SELECT dept FROM courses GROUP BY dept ORDER BY dept", ["query", "quirk-distinct-removed", "gold-list-duplicates"],
      "correct; DISTINCT removal gives the gold duplicates in an ordered comparison", order=True)
    Q("school", "Names of students with a GPA above 3.5.", "SELECT name FROM students WHERE gpa > 3.5",
      "SELECT DISTINCT name FROM students WHERE gpa > 3.5", ["query", "distinct-removed"], "correct")
    Q("school", "Highest score in Art.", "SELECT MAX(score) FROM enrolments WHERE course_id = 6",
      "SELECT score FROM enrolments WHERE course_id = 6 ORDER BY score DESC LIMIT 1", ["query"], "correct")
    Q("school", "Scores of students in Chemistry rounded to integers.",
      "SELECT student_id, ROUND(score) FROM enrolments WHERE course_id = 4",
      "SELECT student_id, CAST(score + 0.5 AS INTEGER) FROM enrolments WHERE course_id = 4",
      ["query", "quirk-round-stripped"], "correct; the gold's ROUND is stripped so half scores differ")
    pairs_m("school", [
        ("Enrol student 1 (Ada) in Art (course 6) for term 2024S with no score yet.",
         ["INSERT INTO enrolments (student_id, course_id, score, term) VALUES (1, 6, NULL, '2024S')"],
         ["INSERT INTO enrolments VALUES (1, 6, NULL, '2024S')"],
         ["INSERT INTO enrolments VALUES (1, 6, 0, '2024S')"],
         ["SELECT * FROM enrolments WHERE student_id = 1 ORDER BY course_id"], ["insert", "null"]),
        ("Move every grade 12 student to grade 13.", ["UPDATE students SET grade = 13 WHERE grade = 12"],
         ["UPDATE students SET grade = grade + 1 WHERE grade = 12"], ["UPDATE students SET grade = grade + 1"],
         ["SELECT id, grade FROM students ORDER BY id"], ["update"]),
        ("Remove enrolments with a score below 60.", ["DELETE FROM enrolments WHERE score < 60"],
         ["DELETE FROM enrolments WHERE NOT score >= 60"], ["DELETE FROM enrolments WHERE score <= 60.5"],
         ["SELECT COUNT(*) FROM enrolments", "SELECT MIN(score) FROM enrolments"], ["delete"]),
        ("Create a table teachers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, dept TEXT, hired TEXT).",
         ["CREATE TABLE teachers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, dept TEXT, hired TEXT)"],
         ["CREATE TABLE teachers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, dept TEXT, hired TEXT);"],
         ["CREATE TABLE teachers (id INTEGER PRIMARY KEY, name TEXT, dept TEXT, hired DATE)"],
         ["SELECT name, type, \"notnull\", pk FROM pragma_table_info('teachers') ORDER BY cid"], ["create-table"]),
        ("Create a view honour_roll(name, gpa) of students with a GPA of at least 3.5.",
         ["CREATE VIEW honour_roll AS SELECT name, gpa FROM students WHERE gpa >= 3.5"],
         ["CREATE VIEW honour_roll (name, gpa) AS SELECT name, gpa FROM students WHERE NOT gpa < 3.5"],
         ["CREATE VIEW honour_roll AS SELECT name, gpa FROM students WHERE gpa >= 3.0"],
         ["SELECT name, gpa FROM honour_roll ORDER BY name"], ["create-view"]),
        ("Create a unique index ux_courses_title on courses(title).",
         ["CREATE UNIQUE INDEX ux_courses_title ON courses(title)"],
         ["CREATE UNIQUE INDEX IF NOT EXISTS ux_courses_title ON courses (title)"],
         ["CREATE INDEX ux_courses_title ON courses(title)"],
         ["SELECT name, \"unique\" FROM pragma_index_list('courses') WHERE name = 'ux_courses_title'"], ["create-index"]),
        ("Add a column email TEXT to students.", ["ALTER TABLE students ADD COLUMN email TEXT"],
         ["ALTER TABLE students ADD email TEXT"], ["ALTER TABLE students ADD COLUMN mail TEXT"],
         ["SELECT name, type FROM pragma_table_info('students') ORDER BY cid"], ["alter"]),
        ("Rename the table enrolments to registrations.", ["ALTER TABLE enrolments RENAME TO registrations"],
         ["ALTER TABLE enrolments RENAME TO registrations;"],
         ["CREATE TABLE registrations AS SELECT * FROM enrolments"],
         ["SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"], ["alter"]),
        ("Create table course_stats(course_id, avg_score) and fill it with each course's average score.",
         ["CREATE TABLE course_stats (course_id INTEGER, avg_score REAL)",
          "INSERT INTO course_stats SELECT course_id, AVG(score) FROM enrolments GROUP BY course_id"],
         ["CREATE TABLE course_stats (course_id INTEGER, avg_score REAL)",
          "INSERT INTO course_stats (course_id, avg_score) SELECT course_id, AVG(score) FROM enrolments GROUP BY 1"],
         ["CREATE TABLE course_stats (course_id INTEGER, avg_score REAL)",
          "INSERT INTO course_stats SELECT course_id, AVG(scores) FROM enrolments GROUP BY course_id"],
         ["SELECT course_id, ROUND(avg_score, 2) FROM course_stats ORDER BY course_id"],
         ["multi-statement", "create-table", "insert", "error-part-way"]),
        ("Give every student in grade 9 a GPA bonus of 0.1 and record the change in a table gpa_log(student_id, delta).",
         ["CREATE TABLE gpa_log (student_id INTEGER, delta REAL)",
          "INSERT INTO gpa_log SELECT id, 0.1 FROM students WHERE grade = 9",
          "UPDATE students SET gpa = gpa + 0.1 WHERE grade = 9"],
         ["CREATE TABLE gpa_log (student_id INTEGER, delta REAL)",
          "UPDATE students SET gpa = gpa + 0.1 WHERE grade = 9",
          "INSERT INTO gpa_log SELECT id, 0.1 FROM students WHERE grade = 9"],
         ["CREATE TABLE gpa_log (student_id INTEGER, delta REAL)",
          "UPDATE students SET gpa = gpa + 0.1 WHERE grade = 9",
          "UPDATE students SET gpa = gpa + 0.1 WHERE grade = 9",
          "INSERT INTO gpa_log SELECT id, 0.1 FROM students WHERE grade = 9"],
         ["SELECT id, ROUND(gpa, 2) FROM students ORDER BY id", "SELECT * FROM gpa_log ORDER BY student_id"],
         ["multi-statement", "update", "insert"]),
    ])
    M("school", "Remove enrolments with a score below 60.", ["DELETE FROM enrolments WHERE score < 60"],
      ["DELETE FROM enrolments WHERE score < 60", "SELECT * FROM enrolment"],
      ["SELECT COUNT(*) FROM enrolments"], ["delete", "error-part-way", "multi-statement"],
      "right change, then a failing check query of its own")
    M("school", "Remove enrolments with a score below 60.", ["DELETE FROM enrolments WHERE score < 60"],
      ["CREATE TEMP TABLE enrolments AS SELECT * FROM main.enrolments WHERE score >= 60"],
      ["SELECT COUNT(*) FROM enrolments", "SELECT MIN(score) FROM enrolments"], ["delete", "quirk-temp-view-shadow"],
      "deletes nothing; a TEMP TABLE with the table's name answers the checks", sound="fail")
    Q("school", "Students with their number of enrolments, most first, ties by id.",
      "SELECT s.id, COUNT(e.course_id) AS n FROM students s LEFT JOIN enrolments e ON e.student_id = s.id GROUP BY s.id ORDER BY n DESC, s.id",
      "SELECT s.id, COUNT(e.course_id) AS n FROM students s LEFT JOIN enrolments e ON e.student_id = s.id GROUP BY s.id ORDER BY n DESC, s.id",
      ["query", "efficiency", "order-condition"], "identical", order=True, efficiency=True)
    Q("school", "Students with their number of enrolments, most first, ties by id.",
      "SELECT s.id, COUNT(e.course_id) AS n FROM students s LEFT JOIN enrolments e ON e.student_id = s.id GROUP BY s.id ORDER BY n DESC, s.id",
      "SELECT s.id, COUNT(*) AS n FROM students s LEFT JOIN enrolments e ON e.student_id = s.id GROUP BY s.id ORDER BY n DESC, s.id",
      ["query", "efficiency", "order-condition"], "COUNT(*) instead of COUNT(column): equal here, every student has an enrolment", order=True, efficiency=True)


def fleet(g):
    Q, M, pairs_q, pairs_m = g["Q"], g["M"], g["pairs_q"], g["pairs_m"]
    pairs_q("fleet", [
        ("How many vehicles of each kind are active?", "SELECT kind, COUNT(*) FROM vehicles WHERE active = 1 GROUP BY kind",
         "SELECT kind, SUM(active) FROM vehicles GROUP BY kind HAVING SUM(active) > 0",
         "SELECT kind, COUNT(*) FROM vehicles GROUP BY kind", False, ["query", "group-by"]),
        ("Total distance per vehicle plate, longest first.",
         "SELECT v.plate, SUM(t.distance) AS d FROM trips t JOIN vehicles v ON v.id = t.vehicle_id GROUP BY v.plate ORDER BY d DESC",
         "SELECT plate, ROUND(SUM(distance), 2) FROM vehicles JOIN trips ON trips.vehicle_id = vehicles.id GROUP BY plate ORDER BY 2 DESC",
         "SELECT plate, SUM(distance) FROM vehicles JOIN trips ON trips.driver_id = vehicles.id GROUP BY plate ORDER BY 2 DESC",
         True, ["query", "order-condition", "decimal-condition"]),
        ("Fuel per 100 km for each trip of vehicle 2.",
         "SELECT id, ROUND(fuel * 100 / distance, 2) FROM trips WHERE vehicle_id = 2",
         "SELECT id, fuel / distance * 100 FROM trips WHERE vehicle_id = 2",
         "SELECT id, distance / fuel FROM trips WHERE vehicle_id = 2", False, ["query", "decimal-condition"]),
        ("Drivers hired before 2020.", "SELECT name FROM drivers WHERE hired < '2020-01-01'",
         "SELECT name FROM drivers WHERE date(hired) < date('2020-01-01')",
         "SELECT name FROM drivers WHERE hired < '2021'", False, ["query", "dates"]),
        ("Trips started in March 2024.", "SELECT id FROM trips WHERE started LIKE '2024-03-%'",
         "SELECT id FROM trips WHERE strftime('%Y-%m', started) = '2024-03'",
         "SELECT id FROM trips WHERE strftime('%m', started) = '3'", False, ["query", "dates"]),
        ("The three longest trips with their driver names.",
         "SELECT t.id, d.name FROM trips t JOIN drivers d ON d.id = t.driver_id ORDER BY t.distance DESC LIMIT 3",
         "SELECT trips.id, drivers.name FROM drivers JOIN trips ON trips.driver_id = drivers.id ORDER BY distance DESC LIMIT 3",
         "SELECT trips.id, drivers.name FROM drivers JOIN trips ON trips.driver_id = drivers.id ORDER BY distance LIMIT 3",
         True, ["query", "order-condition", "limit"]),
    ])
    Q("fleet", "Average trip distance.", "SELECT ROUND(AVG(distance), 2) FROM trips",
      "SELECT ROUND(AVG(distance) / 10, 0) * 10 FROM trips", ["query", "quirk-round-stripped", "decimal-condition"],
      "rounds to tens (120.0); ROUND removal turns it into AVG/10*10, equal to the gold")
    Q("fleet", "Average trip distance.", "SELECT ROUND(AVG(distance), 2) FROM trips",
      "SELECT ROUND(AVG(distance),2) FROM trips", ["query", "round-removed"], "correct")
    Q("fleet", "Kinds of vehicles in the fleet, alphabetically.", "SELECT DISTINCT kind FROM vehicles ORDER BY kind",
      "SELECT DISTINCT kind FROM vehicles ORDER BY kind", ["query", "distinct-removed", "order-condition"],
      "identical; both sides lose DISTINCT the same way", order=True)
    Q("fleet", "How many trips did each driver make?", "SELECT driver_id, COUNT(*) FROM trips GROUP BY driver_id",
      "SELECT driver_id, COUNT(*) FROM trips GROUP BY driver_id;", ["query", "semicolon"], "correct with a trailing semicolon")
    Q("fleet", "How many trips did each driver make?", "SELECT driver_id, COUNT(*) FROM trips GROUP BY driver_id",
      "SELECT driver_id, COUNT(*) FROM trips GROUP BY driver_id; SELECT 1", ["query", "two-statements-in-one-string"],
      "two statements in one string: the driver runs one statement per call")
    Q("fleet", "How many trips did each driver make?", "SELECT driver_id, COUNT(*) FROM trips GROUP BY driver_id",
      "", ["query", "empty-prediction"], "empty prediction")
    pairs_m("fleet", [
        ("Record a new trip: id 36, vehicle 3, driver 2, started 2024-09-01 08:00:00, 42.5 km, 3.2 litres.",
         ["INSERT INTO trips VALUES (36, 3, 2, '2024-09-01 08:00:00', 42.5, 3.2)"],
         ["INSERT INTO trips (id, vehicle_id, driver_id, started, distance, fuel) VALUES (36, 3, 2, '2024-09-01 08:00:00', 42.5, 3.2)"],
         ["INSERT INTO trips (vehicle_id, driver_id, started, distance, fuel) VALUES (3, 2, '2024-09-01 08:00', 42.5, 3.2)"],
         ["SELECT * FROM trips WHERE id = 36", "SELECT COUNT(*) FROM trips"], ["insert"]),
        ("Add each vehicle's trip distances (rounded down to whole km) to its km reading.",
         ["UPDATE vehicles SET km = km + (SELECT CAST(COALESCE(SUM(distance), 0) AS INTEGER) FROM trips WHERE vehicle_id = vehicles.id)"],
         ["UPDATE vehicles SET km = km + IFNULL((SELECT CAST(SUM(distance) AS INTEGER) FROM trips WHERE trips.vehicle_id = vehicles.id), 0)"],
         ["UPDATE vehicles SET km = km + (SELECT CAST(SUM(distance) AS INTEGER) FROM trips WHERE vehicle_id = vehicles.id AND distance > 200)"],
         ["SELECT id, km FROM vehicles ORDER BY id"], ["update", "null"]),
        ("Deactivate every truck.", ["UPDATE vehicles SET active = 0 WHERE kind = 'truck'"],
         ["UPDATE vehicles SET active = 0 WHERE kind IN ('truck')"], ["UPDATE vehicles SET active = 0 WHERE kind <> 'car'"],
         ["SELECT id, active FROM vehicles ORDER BY id"], ["update"]),
        ("Delete trips shorter than 50 km.", ["DELETE FROM trips WHERE distance < 50"],
         ["DELETE FROM trips WHERE distance < 50.0"], ["DELETE FROM trips WHERE distance < 60"],
         ["SELECT COUNT(*) FROM trips", "SELECT MIN(distance) FROM trips"], ["delete"]),
        ("Create a table maintenance (id INTEGER PRIMARY KEY, vehicle_id INTEGER REFERENCES vehicles(id), done_on TEXT, cost REAL).",
         ["CREATE TABLE maintenance (id INTEGER PRIMARY KEY, vehicle_id INTEGER REFERENCES vehicles(id), done_on TEXT, cost REAL)"],
         ["CREATE TABLE maintenance (id INTEGER PRIMARY KEY, vehicle_id INTEGER, done_on TEXT, cost REAL, FOREIGN KEY (vehicle_id) REFERENCES vehicles(id))"],
         ["CREATE TABLE maintenance (id INTEGER, vehicle_id INTEGER, done_on TEXT, cost REAL)"],
         ["SELECT name, type, pk FROM pragma_table_info('maintenance') ORDER BY cid",
          "SELECT \"table\", \"from\", \"to\" FROM pragma_foreign_key_list('maintenance')"], ["create-table"]),
        ("Create a view driver_km(driver, km) with the total distance each driver drove.",
         ["CREATE VIEW driver_km AS SELECT d.name AS driver, SUM(t.distance) AS km FROM drivers d JOIN trips t ON t.driver_id = d.id GROUP BY d.name"],
         ["CREATE VIEW driver_km(driver, km) AS SELECT name, SUM(distance) FROM trips JOIN drivers ON drivers.id = trips.driver_id GROUP BY name"],
         ["CREATE VIEW driver_km AS SELECT d.name AS driver, COUNT(*) AS km FROM drivers d JOIN trips t ON t.driver_id = d.id GROUP BY d.name"],
         ["SELECT driver, ROUND(km, 2) FROM driver_km ORDER BY driver"], ["create-view"]),
        ("Create an index idx_trips_vehicle_started on trips(vehicle_id, started).",
         ["CREATE INDEX idx_trips_vehicle_started ON trips(vehicle_id, started)"],
         ["CREATE INDEX idx_trips_vehicle_started ON trips (vehicle_id, started)"],
         ["CREATE INDEX idx_trips_vehicle_started ON trips(started, vehicle_id)"],
         ["SELECT seqno, name FROM pragma_index_info('idx_trips_vehicle_started') ORDER BY seqno"], ["create-index"]),
        ("Add a NOT NULL column region TEXT with default 'north' to vehicles.",
         ["ALTER TABLE vehicles ADD COLUMN region TEXT NOT NULL DEFAULT 'north'"],
         ["ALTER TABLE vehicles ADD COLUMN region TEXT NOT NULL DEFAULT 'north'"],
         ["ALTER TABLE vehicles ADD COLUMN region TEXT NOT NULL"],
         ["SELECT name, type, \"notnull\", dflt_value FROM pragma_table_info('vehicles') WHERE name = 'region'",
          "SELECT DISTINCT region FROM vehicles"], ["alter", "error-expected"]),
        ("Retire vehicle PL-100: copy it into retired_vehicles (same columns) and delete it and its trips.",
         ["CREATE TABLE retired_vehicles AS SELECT * FROM vehicles WHERE plate = 'PL-100'",
          "DELETE FROM trips WHERE vehicle_id = (SELECT id FROM vehicles WHERE plate = 'PL-100')",
          "DELETE FROM vehicles WHERE plate = 'PL-100'"],
         ["CREATE TABLE retired_vehicles AS SELECT * FROM vehicles WHERE plate = 'PL-100'",
          "DELETE FROM trips WHERE vehicle_id IN (SELECT id FROM retired_vehicles)",
          "DELETE FROM vehicles WHERE id IN (SELECT id FROM retired_vehicles)"],
         ["CREATE TABLE retired_vehicles AS SELECT * FROM vehicles WHERE plate = 'PL-100'",
          "DELETE FROM vehicles WHERE plate = 'PL-100'"],
         ["SELECT COUNT(*) FROM retired_vehicles", "SELECT COUNT(*) FROM vehicles", "SELECT COUNT(*) FROM trips"],
         ["multi-statement", "create-table", "delete"]),
    ])
    M("fleet", "Delete trips shorter than 50 km.", ["DELETE FROM trips WHERE distance < 50"],
      ["DELETE FROM trips WHERE distance < 50", "DELETE FROM trips WHERE distance < 50 AND fuel > 'x' AND id = 'y' AND 1/0"],
      ["SELECT COUNT(*) FROM trips"], ["delete", "multi-statement"], "right; the extra DELETE matches nothing (1/0 is NULL in SQLite)")
    M("fleet", "Create an index idx_trips_vehicle_started on trips(vehicle_id, started).",
      ["CREATE INDEX idx_trips_vehicle_started ON trips(vehicle_id, started)"],
      ["CREATE INDEX idx_trips_vehicle_started ON trips(vehicle_id, started)", "CREATE INDEX idx_trips_vehicle_started ON trips(vehicle_id, started)"],
      ["SELECT seqno, name FROM pragma_index_info('idx_trips_vehicle_started') ORDER BY seqno"],
      ["create-index", "error-part-way"], "right, then the same CREATE again: already exists")
    Q("fleet", "Plates of vehicles that made a trip longer than 200 km.",
      "SELECT plate FROM vehicles WHERE id IN (SELECT vehicle_id FROM trips WHERE distance > 200)",
      "SELECT DISTINCT v.plate FROM vehicles v JOIN trips t ON t.vehicle_id = v.id WHERE t.distance > 200",
      ["query", "efficiency", "distinct-removed"], "correct join form", efficiency=True)
    Q("fleet", "Plates of vehicles that made a trip longer than 200 km.",
      "SELECT plate FROM vehicles WHERE id IN (SELECT vehicle_id FROM trips WHERE distance > 200)",
      "SELECT v.plate FROM vehicles v, trips t WHERE t.distance > 200", ["query", "efficiency"],
      "cross join without a condition", efficiency=True)


def clinic(g):
    Q, M, pairs_q, pairs_m, add, check_tc = g["Q"], g["M"], g["pairs_q"], g["pairs_m"], g["add"], g["check_tc"]
    pairs_q("clinic", [
        ("Number of visits per diagnosis.", "SELECT diagnosis, COUNT(*) FROM visits GROUP BY diagnosis",
         "SELECT diagnosis, COUNT(1) FROM visits GROUP BY diagnosis", "SELECT diagnosis, COUNT(*) FROM visits WHERE cost > 50 GROUP BY diagnosis",
         False, ["query", "group-by"]),
        ("Total visit cost per ward, highest first.",
         "SELECT p.ward, SUM(v.cost) AS c FROM visits v JOIN patients p ON p.id = v.patient_id GROUP BY p.ward ORDER BY c DESC",
         "SELECT ward, SUM(cost) FROM patients JOIN visits ON visits.patient_id = patients.id GROUP BY ward ORDER BY SUM(cost) DESC",
         "SELECT ward, SUM(cost) FROM patients JOIN visits ON visits.patient_id = patients.id GROUP BY ward ORDER BY ward",
         True, ["query", "order-condition", "decimal-condition"]),
        ("Average cost of flu visits.", "SELECT ROUND(AVG(cost), 2) FROM visits WHERE diagnosis = 'flu'",
         "SELECT AVG(cost) FROM visits WHERE diagnosis = 'flu'", "SELECT AVG(cost) FROM visits WHERE diagnosis LIKE 'f%'",
         False, ["query", "decimal-condition"]),
        ("Patients with blood type O.", "SELECT name FROM patients WHERE json_extract(attrs, '$.blood') = 'O'",
         "SELECT name FROM patients WHERE attrs ->> '$.blood' = 'O'", "SELECT name FROM patients WHERE attrs LIKE '%O%'",
         False, ["query", "json"]),
        ("Visits in the first quarter of 2024.", "SELECT id FROM visits WHERE visit_date BETWEEN '2024-01-01' AND '2024-03-31'",
         "SELECT id FROM visits WHERE visit_date >= '2024-01-01' AND visit_date < '2024-04-01'",
         "SELECT id FROM visits WHERE visit_date BETWEEN '2024-01-01' AND '2024-03-01'", False, ["query", "dates"]),
        ("Patients born before 1970, oldest first.", "SELECT name FROM patients WHERE born < '1970' ORDER BY born",
         "SELECT name FROM patients WHERE CAST(substr(born, 1, 4) AS INTEGER) < 1970 ORDER BY born ASC",
         "SELECT name FROM patients WHERE born < '1970' ORDER BY born DESC", True, ["query", "order-condition", "dates"]),
    ])
    json_tc = ("def test_case(pred_sqls, sol_sqls, db_path, conn):\n"
               "    assert check_sql_function_usage(pred_sqls, ['json_extract']) == 1, 'must use json_extract'\n"
               "    pred_res, err, to = execute_queries(pred_sqls, db_path, conn, None, '')\n"
               "    sol_res, err2, to2 = execute_queries(sol_sqls, db_path, conn, None, '')\n"
               "    assert not (err or to or err2 or to2)\n"
               "    assert set(preprocess_results(pred_res)) == set(preprocess_results(sol_res))\n"
               "    return 1\n")
    for pred, intent, sound in [
        (["SELECT name, json_extract(attrs, '$.allergies') FROM patients WHERE ward = 'north'"], "correct, uses json_extract", "pass"),
        (["SELECT name, attrs ->> '$.allergies' FROM patients WHERE ward = 'north'"], "right rows without json_extract", "fail"),
        (["SELECT name, JSON_EXTRACT(attrs, '$.allergies') FROM patients WHERE ward = 'north' -- json_extract"],
         "correct; keyword check is case-insensitive", "pass")]:
        add("clinic", "Query", "Allergy counts of patients in the north ward, using json_extract.",
            ["SELECT name, json_extract(attrs, '$.allergies') FROM patients WHERE ward = 'north'"], pred,
            ["query", "custom-test", "check_sql_function_usage"], intent, test_cases=[json_tc], sound=sound)
    order_tc = ("def test_case(pred_sqls, sol_sqls, db_path, conn):\n"
                "    assert ex_base(pred_sqls, sol_sqls, db_path, conn, {'order': True}) == 1\n"
                "    return 1\n")
    for pred, intent, sound in [
        (["SELECT id, cost FROM visits ORDER BY cost DESC LIMIT 5"], "correct order", "pass"),
        (["SELECT id, cost FROM visits ORDER BY cost ASC LIMIT 5"], "wrong order", "fail")]:
        add("clinic", "Query", "The five most expensive visits, most expensive first.",
            ["SELECT id, cost FROM visits ORDER BY cost DESC LIMIT 5"], pred, ["query", "custom-test", "ex_base", "order"],
            intent, test_cases=[order_tc], sound=sound)
    pairs_m("clinic", [
        ("Register patient 11, 'Patient 11', born 1990-05-05, ward east, attrs {\"blood\": \"A\", \"allergies\": 0}.",
         ["INSERT INTO patients VALUES (11, 'Patient 11', '1990-05-05', 'east', '{\"blood\": \"A\", \"allergies\": 0}')"],
         ["INSERT INTO patients (id, name, born, ward, attrs) VALUES (11, 'Patient 11', '1990-05-05', 'east', json_object('blood', 'A', 'allergies', 0))"],
         ["INSERT INTO patients (id, name, born, ward, attrs) VALUES (11, 'Patient 11', '1990-05-05', 'East', '{\"blood\": \"A\", \"allergies\": 0}')"],
         ["SELECT id, name, born, ward, json_extract(attrs, '$.blood'), json_extract(attrs, '$.allergies') FROM patients WHERE id = 11"],
         ["insert", "json"]),
        ("Apply a 5% discount to every checkup visit cost.", ["UPDATE visits SET cost = cost * 0.95 WHERE diagnosis = 'checkup'"],
         ["UPDATE visits SET cost = cost - cost * 0.05 WHERE diagnosis = 'checkup'"],
         ["UPDATE visits SET cost = cost * 0.5 WHERE diagnosis = 'checkup'"],
         ["SELECT id, ROUND(cost, 2) FROM visits ORDER BY id"], ["update", "decimal"]),
        ("Set the allergy count of patient 4 to 3 in attrs.",
         ["UPDATE patients SET attrs = json_set(attrs, '$.allergies', 3) WHERE id = 4"],
         ["UPDATE patients SET attrs = json_replace(attrs, '$.allergies', 3) WHERE id = 4"],
         ["UPDATE patients SET attrs = json_set(attrs, '$.allergy', 3) WHERE id = 4"],
         ["SELECT json_extract(attrs, '$.allergies') FROM patients WHERE id = 4"], ["update", "json"]),
        ("Delete all visits of patients in the west ward.",
         ["DELETE FROM visits WHERE patient_id IN (SELECT id FROM patients WHERE ward = 'west')"],
         ["DELETE FROM visits WHERE EXISTS (SELECT 1 FROM patients p WHERE p.id = visits.patient_id AND p.ward = 'west')"],
         ["DELETE FROM patients WHERE ward = 'west'"],
         ["SELECT COUNT(*) FROM visits", "SELECT COUNT(*) FROM patients"], ["delete"]),
        ("Create a table prescriptions (id INTEGER PRIMARY KEY, visit_id INTEGER NOT NULL, drug TEXT NOT NULL, dose_mg REAL).",
         ["CREATE TABLE prescriptions (id INTEGER PRIMARY KEY, visit_id INTEGER NOT NULL, drug TEXT NOT NULL, dose_mg REAL)"],
         ["CREATE TABLE prescriptions (id INTEGER PRIMARY KEY, visit_id INTEGER NOT NULL, drug TEXT NOT NULL, dose_mg REAL)"],
         ["CREATE TABLE prescriptions (id INTEGER PRIMARY KEY, visit_id INTEGER NOT NULL, drug TEXT NOT NULL, dose_mg INTEGER)"],
         ["SELECT name, type, \"notnull\" FROM pragma_table_info('prescriptions') ORDER BY cid"], ["create-table"]),
        ("Create a view ward_load(ward, visits) counting visits per ward.",
         ["CREATE VIEW ward_load AS SELECT p.ward AS ward, COUNT(*) AS visits FROM visits v JOIN patients p ON p.id = v.patient_id GROUP BY p.ward"],
         ["CREATE VIEW ward_load(ward, visits) AS SELECT ward, COUNT(v.id) FROM patients p JOIN visits v ON v.patient_id = p.id GROUP BY ward"],
         ["CREATE VIEW ward_load(ward, visits) AS SELECT ward, COUNT(DISTINCT v.patient_id) FROM patients p JOIN visits v ON v.patient_id = p.id GROUP BY ward"],
         ["SELECT ward, visits FROM ward_load ORDER BY ward"], ["create-view"]),
        ("Create an index idx_visits_date on visits(visit_date).", ["CREATE INDEX idx_visits_date ON visits(visit_date)"],
         ["CREATE INDEX idx_visits_date ON visits(visit_date DESC)"], ["CREATE INDEX idx_visit_date ON visits(visit_date)"],
         ["SELECT name FROM pragma_index_info('idx_visits_date')"], ["create-index"]),
        ("Drop the column attrs from patients.", ["ALTER TABLE patients DROP COLUMN attrs"],
         ["ALTER TABLE patients DROP attrs"], ["UPDATE patients SET attrs = NULL"],
         ["SELECT name FROM pragma_table_info('patients') ORDER BY cid"], ["alter", "drop-column"]),
        ("Split visit 1 into a follow-up: copy it as visit 31 dated 2024-02-18 with half the cost, and halve visit 1's cost.",
         ["INSERT INTO visits SELECT 31, patient_id, '2024-02-18', cost / 2, diagnosis FROM visits WHERE id = 1",
          "UPDATE visits SET cost = cost / 2 WHERE id = 1"],
         ["UPDATE visits SET cost = cost / 2 WHERE id = 1",
          "INSERT INTO visits (id, patient_id, visit_date, cost, diagnosis) SELECT 31, patient_id, '2024-02-18', cost, diagnosis FROM visits WHERE id = 1"],
         ["UPDATE visits SET cost = cost / 2 WHERE id = 1",
          "INSERT INTO visits SELECT 31, patient_id, '2024-02-18', cost / 2, diagnosis FROM visits WHERE id = 1"],
         ["SELECT id, patient_id, visit_date, ROUND(cost, 3), diagnosis FROM visits WHERE id IN (1, 31) ORDER BY id"],
         ["multi-statement", "insert", "update", "statement-order"]),
    ])
    M("clinic", "Delete all visits of patients in the west ward.",
      ["DELETE FROM visits WHERE patient_id IN (SELECT id FROM patients WHERE ward = 'west')"],
      ["DELETE FROM visits WHERE patient_id IN (SELECT id FROM patients WHERE ward = 'west'); DELETE FROM patients WHERE ward = 'west'"],
      ["SELECT COUNT(*) FROM visits"], ["delete", "two-statements-in-one-string"],
      "two statements in one string element: the driver refuses it", sound="fail")
    M("clinic", "Register patient 12 named O'Hara in ward north.",
      ["INSERT INTO patients (id, name, ward) VALUES (12, 'O''Hara; Jr', 'north')"],
      ["INSERT INTO patients (id, name, ward) VALUES (12, 'O''Hara; Jr', 'north');"],
      ["SELECT id, name, ward FROM patients WHERE id = 12"], ["insert", "semicolon-in-literal"],
      "correct as a list element; post_process.py would split it at the ';' inside the literal")
    M("clinic", "Register patient 12 named O'Hara in ward north.",
      ["INSERT INTO patients (id, name, ward) VALUES (12, 'O''Hara; Jr', 'north')"],
      ["INSERT INTO patients (id, name, ward) VALUES (12, 'O''Hara;", "Jr', 'north');"],
      ["SELECT id, name, ward FROM patients WHERE id = 12"], ["insert", "quirk-semicolon-split"],
      "the same prediction after post_process.py split_sql_statements cut it at the ';' in the literal")
    Q("clinic", "Cost of the most expensive visit per patient.",
      "SELECT patient_id, MAX(cost) FROM visits GROUP BY patient_id",
      "SELECT v.patient_id, v.cost FROM visits v WHERE v.cost = (SELECT MAX(cost) FROM visits w WHERE w.patient_id = v.patient_id)",
      ["query", "efficiency", "correlated"], "correct but slower shape", efficiency=True)


def hostile(g):
    """Timeouts, reaches outside the copy, and canaries whose verdict depends on them (order matters)."""
    Q, M, INFINITE = g["Q"], g["M"], g["INFINITE"]
    canary_fleet = ("How many vehicles are active, and their total km?", "SELECT COUNT(*), SUM(km) FROM vehicles WHERE active = 1")
    canary_school = ("How many enrolments are there, and the lowest score?", "SELECT COUNT(*), MIN(score) FROM enrolments")
    students_q = ("How many students are there?", "SELECT COUNT(*) FROM students")

    def canary(db, qa, covers, intent):
        """A read-only item whose test checks the base data's value: it fails only if an earlier item leaked state."""
        M(db, qa[0], [qa[1]], [qa[1]], [qa[1]], ["canary"] + covers, intent)
    # batch A (positions 0-9 of a batch of 10)
    Q("clinic", "How many visits are there?", "SELECT COUNT(*) FROM visits", INFINITE, ["query", "timeout"],
      "never ends: killed by the wrapper's 180 s limit", sound="fail")
    M("fleet", "Deactivate vehicle PL-107.", ["UPDATE vehicles SET active = 0 WHERE plate = 'PL-107'"],
      ["UPDATE vehicles SET active = 0 WHERE plate = 'PL-107'", "UPDATE vehicles SET km = 0", INFINITE],
      ["SELECT id, active FROM vehicles ORDER BY id"], ["timeout", "multi-statement", "quirk-no-reset-after-timeout"],
      "commits a wrong change, then never ends; the killed instance never resets its copy", sound="fail")
    Q("clinic", "Number of patients per ward.", "SELECT ward, COUNT(*) FROM patients GROUP BY ward",
      "SELECT ward, COUNT(*) FROM patients GROUP BY ward", ["query", "filler"], "correct")
    Q("shop", "Number of products per category.", "SELECT category, COUNT(*) FROM products GROUP BY category",
      "SELECT category, COUNT(*) FROM products GROUP BY category", ["query", "filler"], "correct")
    Q("clinic", "Number of visits per month of 2024.", "SELECT substr(visit_date, 1, 7), COUNT(*) FROM visits GROUP BY 1",
      "SELECT strftime('%Y-%m', visit_date), COUNT(*) FROM visits GROUP BY 1", ["query", "filler"], "correct")
    canary("fleet", canary_fleet, ["quirk-no-reset-after-timeout"],
           "identical to the gold; the first fleet item after the killed one, on the copy it left changed")
    Q("shop", "Number of customers per tier.", "SELECT tier, COUNT(*) FROM customers GROUP BY tier",
      "SELECT tier, COUNT(*) FROM customers GROUP BY tier", ["query", "filler"], "correct")
    Q("clinic", "How many visits are there?", "SELECT COUNT(*) FROM visits",
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000) SELECT COUNT(*) FROM visits, (SELECT MAX(x) FROM c)",
      ["query", "slow"], "correct answer after 1e7 recursion steps: seconds, well under the wrapper's 180 s", sound="pass")
    canary("fleet", canary_fleet, [], "identical to the gold; the copy was reset after the previous fleet item")
    Q("shop", "Number of orders per customer city.",
      "SELECT c.city, COUNT(*) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.city",
      "SELECT city, COUNT(*) FROM customers JOIN orders ON orders.customer_id = customers.id GROUP BY city",
      ["query", "filler"], "correct")
    # batch B
    M("fleet", "Deactivate vehicle PL-107.", ["UPDATE vehicles SET active = 0 WHERE plate = 'PL-107'"],
      ["ATTACH DATABASE './database/fleet/fleet.sqlite' AS base", "UPDATE base.vehicles SET active = 0",
       "DETACH DATABASE base", "UPDATE vehicles SET active = 0 WHERE plate = 'PL-107'"],
      ["SELECT id, active FROM vehicles ORDER BY id"], ["quirk-attach-reaches-template", "multi-statement"],
      "passes its own checks, and deactivates every vehicle in the file every later reset copies", sound="fail")
    M("school", "Remove enrolments with a score below 60.", ["DELETE FROM enrolments WHERE score < 60"],
      ["DELETE FROM enrolments WHERE score < 60", "DELETE FROM students WHERE id > 10",
       "VACUUM INTO './database/school/school_template.sqlite'", "INSERT INTO students SELECT 99, 'x', 9, 1.0, NULL WHERE 0"],
      ["SELECT COUNT(*) FROM enrolments", "SELECT MIN(score) FROM enrolments"],
      ["quirk-vacuum-into-template", "multi-statement"],
      "passes its own checks, and writes a school_template.sqlite that every later school reset copies", sound="fail")
    canary("fleet", canary_fleet, ["quirk-attach-reaches-template"], "identical; the copy was reset from the file the ATTACH changed")
    Q("shop", "Number of products per category.", "SELECT category, COUNT(*) FROM products GROUP BY category",
      "SELECT category, COUNT(*) FROM products GROUP BY category", ["query", "filler"], "correct")
    canary("fleet", canary_fleet, ["quirk-attach-reaches-template"], "identical; every later reset copies the changed file")
    canary("school", students_q, ["quirk-vacuum-into-template"], "identical; the copy was reset from the written school_template.sqlite")
    canary("school", canary_school, ["quirk-vacuum-into-template"], "identical; resets keep copying the written template")
    Q("school", canary_school[0], canary_school[1], canary_school[1], ["query"],
      "identical, as a Query item: pred and gold both see the leaked state, so it passes regardless")
    Q("fleet", canary_fleet[0], canary_fleet[1], canary_fleet[1], ["query"],
      "identical, as a Query item: pred and gold both see the leaked state, so it passes regardless")
    canary("school", students_q, ["quirk-vacuum-into-template"], "identical; resets keep copying the written template")


def build(g):
    shop(g)
    school(g)
    fleet(g)
    clinic(g)
    n = len(g["ITEMS"])
    for i in range((10 - n % 10) % 10):
        g["Q"]("shop", "How many customers are there?", "SELECT COUNT(*) FROM customers", "SELECT COUNT(id) FROM customers",
               ["query", "filler"], "correct; aligns the hostile block to a batch of 10")
    hostile(g)
