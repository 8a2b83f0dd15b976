"""Writes cases.jsonl: the constructed duckdb_match conformance cases (tests/it/spider2_dbt.rs).

Each line: {"id", "gold_sql", "pred_sql", "condition_tabs", "condition_cols", "ignore_orders",
"what"}. `gold_sql` / `pred_sql` are DuckDB statements creating the case's tables (names prefixed
with the case id) in one shared gold database and one shared predicted database. Deterministic
(seeded); standard library only: python3 make_cases.py > cases.jsonl
"""
import json
import random

rng = random.Random(47)

TYPES = {
    "int": "INTEGER", "big": "BIGINT", "dbl": "DOUBLE", "txt": "VARCHAR", "bool": "BOOLEAN",
    "dec": "DECIMAL(10,2)", "date": "DATE", "ts": "TIMESTAMP", "flt": "FLOAT", "ubig": "UBIGINT",
    "huge": "HUGEINT", "small": "SMALLINT",
}


def lit(value, kind):
    if value is None:
        return "NULL"
    if kind in ("txt",):
        return "'" + str(value).replace("'", "''") + "'"
    if kind == "bool":
        return "true" if value else "false"
    if kind == "date":
        return f"DATE '{value}'"
    if kind == "ts":
        return f"TIMESTAMP '{value}'"
    if kind == "dbl" and isinstance(value, float) and value != value:
        return "'nan'::DOUBLE"
    return repr(value)


def create(name, columns, rows):
    """CREATE TABLE statements for `name` with `columns` [(col, kind)] and `rows`."""
    quoted = '"' + name.replace('"', '""') + '"'
    cols = ", ".join(f'"{c}" {TYPES[k]}' for c, k in columns)
    sql = f"CREATE TABLE {quoted} ({cols});"
    if rows:
        values = ", ".join(
            "(" + ", ".join(lit(v, k) for v, (_, k) in zip(row, columns)) + ")" for row in rows
        )
        sql += f" INSERT INTO {quoted} VALUES {values};"
    return sql


def value(kind):
    r = rng.random()
    if kind in ("int", "small"):
        return rng.choice([0, 1, 2, 3, 7, 10, 11, 99, 100, -1, -5])
    if kind == "big":
        return rng.choice([1, 10, 2**40, 10**12, 10**12 + 9, 9007199254740993, -7])
    if kind == "ubig":
        return rng.choice([0, 5, 2**63 + 11, 10**18])
    if kind == "huge":
        return rng.choice([0, 12, 10**20, -3])
    if kind == "dbl":
        return rng.choice([0.0, 1.5, 2.0, 9.0, 9.999, 10.0, 0.1, 1e-3, 1e16, 123.456, -2.25, 3.0])
    if kind == "flt":
        return rng.choice([0.5, 0.1, 1.25, 7.0])
    if kind == "dec":
        return rng.choice([1.5, 0.1, 10.0, 99.99, 2.0])
    if kind == "txt":
        return rng.choice(["a", "b", "B", "10", "9", "1.0", "x y", "", "None", "nan", "2.0", "Zed"])
    if kind == "bool":
        return r < 0.5
    if kind == "date":
        return rng.choice(["2020-01-02", "2019-12-31", "2021-06-30"])
    if kind == "ts":
        return rng.choice(["2020-01-02 03:04:05", "2020-01-02 00:00:00", "2020-01-02 03:04:05.250"])
    raise ValueError(kind)


def random_table(kinds, rows, nulls):
    return [[None if nulls and rng.random() < 0.2 else value(k) for k in kinds] for _ in range(rows)]


def perturb(rows, kinds, how):
    """The predicted rows for `how`."""
    rows = [list(r) for r in rows]
    if how == "same":
        return rows
    if how == "shuffle_rows":
        rng.shuffle(rows)
        return rows
    if how == "scramble_columns" and rows:
        columns = [list(c) for c in zip(*rows)]
        for c in columns:
            rng.shuffle(c)
        return [list(r) for r in zip(*columns)]
    if how == "nudge" and rows:
        i, j = rng.randrange(len(rows)), rng.randrange(len(kinds))
        v = rows[i][j]
        if isinstance(v, (int, float)) and not isinstance(v, bool) and kinds[j] in ("dbl", "flt", "dec"):
            rows[i][j] = round(v + rng.choice([0.004, 0.009, 0.011, 0.02, -0.006]), 6)
        elif isinstance(v, int) and not isinstance(v, bool):
            rows[i][j] = v + rng.choice([1, 9])
        else:
            rows[i][j] = value(kinds[j])
        return rows
    if how == "drop_row" and rows:
        rows.pop(rng.randrange(len(rows)))
        return rows
    if how == "dup_row" and rows:
        rows.append(list(rng.choice(rows)))
        return rows
    if how == "null_one" and rows:
        rows[rng.randrange(len(rows))][rng.randrange(len(kinds))] = None
        return rows
    return rows


HOWS = ["same", "shuffle_rows", "scramble_columns", "nudge", "drop_row", "dup_row", "null_one"]
KIND_SETS = [
    ["int", "txt"], ["int", "dbl"], ["dbl", "dbl"], ["txt", "txt"], ["int"], ["dbl"], ["txt"],
    ["big", "txt"], ["big", "dbl"], ["int", "bool"], ["bool"], ["dec", "txt"], ["date", "int"],
    ["ts"], ["date"], ["flt", "int"], ["flt", "small"], ["ubig", "big"], ["ubig", "txt"],
    ["huge", "txt"], ["int", "int", "txt"], ["small", "int"], ["txt", "dbl", "int"],
]

cases = []


def add(gold_tables, pred_tables, tabs, cols, orders, what):
    cid = f"c{len(cases):04d}"
    ren = lambda t: t.replace("@", cid)
    cases.append({
        "id": cid,
        "gold_sql": " ".join(create(ren(n), c, r) for n, c, r in gold_tables),
        "pred_sql": " ".join(create(ren(n), c, r) for n, c, r in pred_tables),
        "condition_tabs": [ren(t) for t in tabs],
        "condition_cols": cols,
        "ignore_orders": orders,
        "what": what,
    })


# Random tables under every perturbation, order ignored or kept, all columns or a subset,
# with and without NULLs, sometimes with an extra predicted column or reordered columns.
for kinds in KIND_SETS:
    for how in HOWS:
        for ignore in (True, False):
            for nulls in (False, True):
                n = rng.choice([0, 1, 2, 3, 4, 6])
                columns = [(f"k{i}", k) for i, k in enumerate(kinds)]
                gold = random_table(kinds, n, nulls)
                pred = perturb(gold, kinds, how)
                pcols = list(columns)
                shape = rng.random()
                if shape < 0.25:  # an extra predicted column
                    pcols.append(("extra", "int"))
                    pred = [r + [value("int")] for r in pred]
                elif shape < 0.45 and len(kinds) > 1:  # predicted columns reversed
                    pcols = pcols[::-1]
                    pred = [r[::-1] for r in pred]
                cond = [] if rng.random() < 0.6 else sorted(rng.sample(range(len(kinds)), 1))
                add([("@_t", columns, gold)], [("@_t", pcols, pred)], ["@_t"], [cond], [ignore],
                    f"{'+'.join(kinds)} {how} ignore_order={ignore} nulls={nulls} cond={cond}")

# Hand-written quirks.
def pair(gcols, grows, pcols, prows, what, ignore=True, cond=None, name="@_t"):
    add([(name, gcols, grows)], [(name, pcols, prows)], [name], [cond or []], [ignore], what)

I, D, T = "int", "dbl", "txt"
pair([("a", I), ("b", I)], [[1, 2], [3, 4]], [("a", I), ("b", I)], [[1, 4], [3, 2]], "rows scrambled across columns")
pair([("a", I), ("b", I)], [[1, 1], [2, 2]], [("a", I)], [[1], [2]], "one predicted column stands for two gold columns")
pair([("a", "big")], [[10**12]], [("a", "big")], [[10**12 + 9]], "big ints 9 apart (relative tolerance)")
pair([("a", "big")], [[10**15]], [("a", "big")], [[10**15 + 999999]], "big ints 999999 apart")
pair([("a", "big")], [[10**5]], [("a", "big")], [[10**5 + 1]], "small ints 1 apart")
pair([("a", D)], [[9.0], [10.0]], [("a", D)], [[9.005], [10.004]], "string sort keeps tolerance pairs")
pair([("a", D)], [[9.999], [10.0]], [("a", D)], [[10.0], [10.005]], "string sort vs tolerance")
pair([("a", D)], [[9.0], [9.999]], [("a", D)], [[9.001], [10.0]], "9.999 sorts after 9.0, 10.0 before")
pair([("a", T)], [["10"]], [("a", I)], [[10]], "text that looks numeric vs int")
pair([("a", T)], [["1.0"]], [("a", D)], [[1.0]], "text 1.0 vs float")
pair([("a", I)], [[1]], [("a", "bool")], [[True]], "1 vs True")
pair([("a", I)], [[None]], [("a", I)], [[None]], "NULL vs NULL int")
pair([("a", T)], [[None]], [("a", T)], [[None]], "NULL vs NULL text")
pair([("a", I)], [[None]], [("a", I)], [[0]], "NULL vs 0")
pair([("a", D)], [[None]], [("a", T)], [[None]], "NULL double vs NULL text")
pair([("a", D)], [[float("nan")]], [("a", D)], [[None]], "NaN vs NULL")
pair([("a", I), ("b", D)], [[1, 1.5], [2, None]], [("a", I), ("b", D)], [[2, None], [1, 1.5]], "int column beside a float column with NULL")
pair([("a", T)], [["x"]], [("a", T)], [["x"]], "a name needing quotes", name="@ my table")
pair([("a", T)], [["x"]], [("a", T)], [["x"]], "a name with a hyphen", name="@-t")
pair([("a", T)], [["x"]], [("a", T)], [["x"]], "a mixed-case name", name="@_MiXed")
pair([("a", I)], [[1], [2]], [("a", I)], [[1], [2]], "condition column out of range", cond=[3])
pair([("a", I)], [], [("a", I)], [], "both empty")
pair([("a", I)], [], [("a", T)], [], "both empty, other types")
pair([("a", I)], [[1]], [("a", I)], [], "gold one row, prediction empty")
pair([("a", D)], [[0.1]], [("a", "dec")], [[0.1]], "double vs decimal")
pair([("a", D)], [[1e16]], [("a", "big")], [[10**16]], "1e16 vs int")
pair([("a", "ubig")], [[2**63 + 11]], [("a", "ubig")], [[2**63 + 2]], "ubigint 9 apart")
pair([("a", "huge")], [[10**20]], [("a", "huge")], [[10**20 + 5]], "hugeint as float")
pair([("a", "date")], [["2020-01-02"]], [("a", "ts")], [["2020-01-02 00:00:00"]], "date vs timestamp at midnight")
pair([("a", "date"), ("b", I)], [["2020-01-02", 1]], [("a", "date")], [["2020-01-02"]], "date beside int vs date alone")
pair([("a", "date")], [[None], ["2020-01-02"]], [("a", "date"), ("b", T)], [["2020-01-02", "x"], [None, "y"]], "NULL date: None vs NaT")
pair([("a", T)], [["b"], ["a"]], [("a", T)], [["a"], ["b"]], "order kept, rows swapped", ignore=False)
pair([("a", I)], [[2], [10]], [("a", D)], [[10.0], [2.0]], "int vs float sorted as text")
pair([("a", I), ("b", T)], [[1, "x"], [1, "y"]], [("a", I), ("b", T)], [[1, "y"], [1, "x"]], "ties")

# A missing predicted table, and two tables where the second differs.
add([("@_t", [("a", I)], [[1]])], [], ["@_t"], [[]], [True], "the predicted table is missing")
add([("@_a", [("a", I)], [[1]]), ("@_b", [("a", T)], [["x"]])],
    [("@_a", [("a", I)], [[1]]), ("@_b", [("a", T)], [["y"]])], ["@_a", "@_b"], [[], []], [True, True],
    "two tables, the second differs")
add([("@_a", [("a", I)], [[1]]), ("@_b", [("a", T)], [["x"]])],
    [("@_a", [("a", I)], [[1]]), ("@_b", [("a", T)], [["x"]])], ["@_a", "@_b"], [[], [0]], [True, False],
    "two tables, both match")

for case in cases:
    print(json.dumps(case, sort_keys=True))
