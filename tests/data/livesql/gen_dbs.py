#!/usr/bin/env python3
"""Writes the SQL scripts that build the corpus databases (deterministic, no randomness).

Run once by hand; its output db/*.sql is committed. The scripts are plain SQL for the sqlite3 CLI.
"""
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "db")


def q(v):
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


def inserts(table, rows):
    return "".join(f"INSERT INTO {table} VALUES ({', '.join(q(v) for v in r)});\n" for r in rows)


def shop():
    cities = ["Oslo", "Lyon", "Porto", "Oslo", "Graz", "Lyon", "Turku", "Porto", "Oslo", "Graz", "Lyon", "Cork"]
    tiers = ["gold", "silver", "bronze"]
    customers = [(i + 1, f"Customer {chr(65 + i)}", c, f"2023-{(i % 12) + 1:02d}-{(i * 3) % 27 + 1:02d}", tiers[i % 3])
                 for i, c in enumerate(cities)]
    products = [
        (1, "Kettle", "kitchen", 39.99, 14), (2, "Toaster", "kitchen", 54.5, 0), (3, "Blender", "kitchen", 120.0, 6),
        (4, "Desk Lamp", "office", 24.25, 30), (5, "Office Chair", "office", 249.0, 4), (6, "Notebook", "office", 3.333, 200),
        (7, "Tent", "outdoor", 310.75, 2), (8, "Lantern", "outdoor", 18.125, 25), (9, "Sleeping Bag", "outdoor", 89.9, 9),
        (10, "Compass", "outdoor", 15.0, 0),
    ]
    statuses = ["shipped", "pending", "cancelled", "shipped", "delivered"]
    orders = []
    for i in range(1, 41):
        orders.append((i, (i * 5) % 12 + 1, (i * 7) % 10 + 1, (i % 4) + 1, statuses[i % 5],
                       f"2024-{(i % 6) + 1:02d}-{(i * 2) % 28 + 1:02d}", "two distinct items" if i == 7 else None))
    return (
        "CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, joined TEXT, tier TEXT);\n"
        "CREATE TABLE products(id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT, price REAL, stock INTEGER);\n"
        "CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), "
        "product_id INTEGER REFERENCES products(id), qty INTEGER, status TEXT, ordered_at TEXT, note TEXT);\n"
        + inserts("customers", customers) + inserts("products", products) + inserts("orders", orders)
    )


def school():
    names = ["Ada", "Ben", "Cleo", "Dev", "Eva", "Finn", "Gus", "Hana", "Ivo", "Jo", "Kai", "Lea", "Mo", "Nia"]
    students = [(i + 1, n, 9 + i % 4, round(2.0 + ((i * 37) % 20) / 10, 2), f"202{i % 3}-09-01") for i, n in enumerate(names)]
    courses = [(1, "Algebra", 5, "math"), (2, "Geometry", 4, "math"), (3, "Biology", 4, "science"),
               (4, "Chemistry", 5, "science"), (5, "History", 3, "humanities"), (6, "Art", 2, "humanities")]
    enrol = []
    for s in range(1, 15):
        for c in range(1, 7):
            if (s + c) % 3 == 0:
                enrol.append((s, c, float(55 + (s * 11 + c * 7) % 45) + (0.5 if (s + c) % 2 else 0.0), "2024S"))
    return (
        "CREATE TABLE students(id INTEGER PRIMARY KEY, name TEXT NOT NULL, grade INTEGER, gpa REAL, enrolled TEXT);\n"
        "CREATE TABLE courses(id INTEGER PRIMARY KEY, title TEXT NOT NULL, credits INTEGER, dept TEXT);\n"
        "CREATE TABLE enrolments(student_id INTEGER REFERENCES students(id), course_id INTEGER REFERENCES courses(id), "
        "score REAL, term TEXT, PRIMARY KEY(student_id, course_id));\n"
        + inserts("students", students) + inserts("courses", courses) + inserts("enrolments", enrol)
    )


def fleet():
    kinds = ["van", "truck", "car", "van", "car", "truck", "van", "car"]
    vehicles = [(i + 1, f"PL-{100 + i * 7}", k, 10000 + i * 12345 % 90000, 1 if i % 5 else 0) for i, k in enumerate(kinds)]
    drivers = [(1, "Rita", "C", "2019-03-01"), (2, "Sven", "B", "2021-07-15"), (3, "Olga", "C", "2018-11-30"),
               (4, "Tomas", "B", "2023-01-09"), (5, "Uma", "CE", "2020-05-20")]
    trips = []
    for i in range(1, 36):
        trips.append((i, (i * 3) % 8 + 1, (i % 5) + 1, f"2024-0{(i % 9) + 1}-{(i * 5) % 28 + 1:02d} 0{i % 10}:30:00",
                      round(12.5 + (i * 17) % 230 + (i % 3) * 0.333, 3), round(1.5 + (i * 13) % 40 / 3, 4)))
    return (
        "CREATE TABLE vehicles(id INTEGER PRIMARY KEY, plate TEXT UNIQUE, kind TEXT, km INTEGER, active INTEGER);\n"
        "CREATE TABLE drivers(id INTEGER PRIMARY KEY, name TEXT, licence TEXT, hired TEXT);\n"
        "CREATE TABLE trips(id INTEGER PRIMARY KEY, vehicle_id INTEGER REFERENCES vehicles(id), "
        "driver_id INTEGER REFERENCES drivers(id), started TEXT, distance REAL, fuel REAL);\n"
        + inserts("vehicles", vehicles) + inserts("drivers", drivers) + inserts("trips", trips)
    )


def clinic():
    wards = ["north", "south", "east", "north", "west", "south", "north", "east", "west", "south"]
    patients = [(i + 1, f"Patient {i + 1:02d}", f"19{50 + i * 4}-0{(i % 9) + 1}-1{i % 9}", w,
                 json_attrs(i)) for i, w in enumerate(wards)]
    diags = ["flu", "fracture", "checkup", "flu", "allergy", "checkup"]
    visits = []
    for i in range(1, 31):
        visits.append((i, (i * 7) % 10 + 1, f"2024-{(i % 12) + 1:02d}-{(i * 3) % 28 + 1:02d}",
                       round(20 + (i * 37) % 180 + (i % 4) * 0.125, 3), diags[i % 6]))
    return (
        "CREATE TABLE patients(id INTEGER PRIMARY KEY, name TEXT, born TEXT, ward TEXT, attrs TEXT);\n"
        "CREATE TABLE visits(id INTEGER PRIMARY KEY, patient_id INTEGER REFERENCES patients(id), "
        "visit_date TEXT, cost REAL, diagnosis TEXT);\n"
        + inserts("patients", patients) + inserts("visits", visits)
    )


def json_attrs(i):
    blood = ["A", "B", "O", "AB"][i % 4]
    return '{"blood": "%s", "allergies": %d}' % (blood, i % 3)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, fn in [("shop", shop), ("school", school), ("fleet", fleet), ("clinic", clinic)]:
        with open(os.path.join(OUT, f"{name}.sql"), "w") as f:
            f.write(f"-- {name}: corpus database for the LiveSQLBench-style conformance items (generated by gen_dbs.py)\n")
            f.write("BEGIN;\n" + fn() + "COMMIT;\n")


if __name__ == "__main__":
    main()
