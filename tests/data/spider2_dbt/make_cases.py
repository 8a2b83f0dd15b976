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
    # Issue 47's column types (cases appended after the ones above, which they leave unchanged).
    "blob": "BLOB", "time": "TIME", "ival": "INTERVAL", "tstz": "TIMESTAMPTZ", "uuid": "UUID",
    "enum": "ENUM('a', 'b', 'c')", "ilist": "INTEGER[]", "tlist": "VARCHAR[]", "dlist": "DOUBLE[]",
    "nlist": "INTEGER[][]", "arr": "INTEGER[2]", "l1": "INTEGER[]", "struct": "STRUCT(a INTEGER, b VARCHAR)",
    "map": "MAP(VARCHAR, INTEGER)", "uhuge": "UHUGEINT", "ttz": "TIMETZ", "dec38": "DECIMAL(38,9)",
}
LISTS = ("ilist", "tlist", "dlist", "nlist", "arr", "l1")
# Kinds whose cases sqlgate may leave unscored (one-element lists, STRUCT, MAP): the test allows
# an unavailable verdict on such a case only.
UNSCORED_OK = ("l1", "nlist", "struct", "map")


def lit(value, kind):
    if value is None:
        return "NULL"
    if kind in LISTS:
        inner = {"ilist": "int", "tlist": "txt", "dlist": "dbl", "nlist": "ilist", "arr": "int", "l1": "int"}[kind]
        return "[" + ", ".join(lit(v, inner) for v in value) + "]"
    if kind == "blob":
        return "'" + "".join(chr(b) if chr(b).isascii() and chr(b).isalnum() else f"\\x{b:02x}" for b in value) + "'::BLOB"
    if kind in ("time", "ival", "tstz", "uuid", "ttz"):
        name = {"time": "TIME", "ival": "INTERVAL", "tstz": "TIMESTAMPTZ", "uuid": "UUID", "ttz": "TIMETZ"}[kind]
        return f"{name} '{value}'"
    if kind == "enum":
        return f"'{value}'"
    if kind == "struct":
        return "{'a': " + lit(value[0], "int") + ", 'b': " + lit(value[1], "txt") + "}"
    if kind == "map":
        return "MAP {" + ", ".join(f"{lit(k, 'txt')}: {lit(v, 'int')}" for k, v in value) + "}"
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
    if kind == "blob":
        return rng.choice([b"ab", b"", b"a'b", b"\xff\x00", b'x"y', b"10"])
    if kind == "time":
        return rng.choice(["01:02:03", "12:00:00", "23:59:59.5", "00:00:00", "10:00:00"])
    if kind == "ival":
        return rng.choice(["3 days", "1 month", "30 days", "-1 second", "01:30:00", "0 seconds", "10 days"])
    if kind == "tstz":
        return rng.choice(["2020-01-01 00:00:00+02", "2019-12-31 22:00:00+00", "2020-01-01 00:00:00+00",
                           "2021-06-30 12:34:56.5+00"])
    if kind == "uuid":
        return rng.choice(["00000000-0000-0000-0000-000000000001", "ffffffff-0000-4000-8000-00000000000a",
                           "12345678-1234-5678-9abc-def012345678"])
    if kind == "enum":
        return rng.choice(["a", "b", "c"])
    if kind == "ilist":
        return rng.choice([[1, 2], [], [2, 1], [1, None], [3, 4, 5], [10, 9]])
    if kind == "tlist":
        return rng.choice([["a", "b"], [], ["b", "a"], ["x", None]])
    if kind == "dlist":
        return rng.choice([[1.5, 2.0], [], [1.504, 2.0], [0.1, 0.2, 0.3]])
    if kind == "nlist":
        return rng.choice([[[1, 2], [3]], [], [[1]], [[1], [2]], [[4, 5]]])
    if kind == "arr":
        return rng.choice([[1, 2], [2, 1], [0, None]])
    if kind == "l1":
        return rng.choice([[1], [2], [None], [], [1, 2]])
    if kind == "struct":
        return rng.choice([(1, "x"), (2, None), (None, "y")])
    if kind == "map":
        return rng.choice([[("a", 1)], [("a", 1), ("b", 2)], []])
    if kind == "uhuge":
        return rng.choice([0, 2**100, 7])
    if kind == "ttz":
        return rng.choice(["12:00:00+02", "10:00:00+00"])
    if kind == "dec38":
        return rng.choice([12345678901234567890.123456789, 0.1, 1.005, 99999999999999999999.5])
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
    kinds = {k for _, columns, _ in gold_tables + pred_tables for _, k in columns}
    extra = {"unscored_ok": True} if kinds & set(UNSCORED_OK) else {}
    cases.append({**extra,
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

# Issue 47: the column types sqlgate did not read before (LIST, ARRAY, BLOB, TIME, INTERVAL,
# TIMESTAMPTZ, UUID, ENUM, STRUCT, MAP, UHUGEINT, TIMETZ, wide DECIMAL), random tables under
# every perturbation as above.
NEW_KIND_SETS = [
    ["blob", "int"], ["blob"], ["time"], ["time", "txt"], ["ival"], ["ival", "int"], ["ival", "ts"],
    ["tstz"], ["tstz", "ts"], ["tstz", "int"], ["uuid", "txt"], ["uuid"], ["enum"], ["enum", "int"],
    ["ilist", "int"], ["ilist"], ["tlist"], ["dlist", "dbl"], ["nlist"], ["arr"], ["l1"], ["l1", "int"],
    ["struct"], ["map", "int"], ["dec38", "int"], ["dec38"], ["uhuge", "int"], ["ttz"],
]
for kinds in NEW_KIND_SETS:
    for how in HOWS:
        for ignore in (True, False):
            for nulls in (False, True):
                n = rng.choice([0, 1, 2, 3, 4])
                columns = [(f"k{i}", k) for i, k in enumerate(kinds)]
                gold = random_table(kinds, n, nulls)
                pred = perturb(gold, kinds, how)
                pcols = list(columns)
                shape = rng.random()
                if shape < 0.25:
                    pcols.append(("extra", "int"))
                    pred = [r + [value("int")] for r in pred]
                elif shape < 0.45 and len(kinds) > 1:
                    pcols = pcols[::-1]
                    pred = [r[::-1] for r in pred]
                cond = [] if rng.random() < 0.6 else sorted(rng.sample(range(len(kinds)), 1))
                add([("@_t", columns, gold)], [("@_t", pcols, pred)], ["@_t"], [cond], [ignore],
                    f"{'+'.join(kinds)} {how} ignore_order={ignore} nulls={nulls} cond={cond}")

# Hand-written: cross-type pairs and the quirks of each new type.
pair([("a", "ilist")], [[[1, 2]]], [("a", "ilist")], [[[1, 2]]], "equal two-element lists never match")
pair([("a", "ilist")], [[None]], [("a", "ilist")], [[None]], "NULL list vs NULL list")
pair([("a", "ilist")], [[[]]], [("a", "ilist")], [[[]]], "empty list vs empty list (numpy 2 raises)")
pair([("a", "ilist"), ("b", I)], [[[1, 2], 1]], [("a", "ilist"), ("b", I)], [[[1, 2], 1]], "lists beside ints, cond on the int", cond=[1])
pair([("a", "ilist"), ("b", I)], [[None, 1], [None, 2]], [("b", I), ("a", "ilist")], [[2, None], [1, None]], "all-NULL list column", ignore=True)
pair([("a", "blob")], [[b"ab"]], [("a", T)], [["ab"]], "blob vs text")
pair([("a", "blob")], [[b"a'b"], [b'x"y']], [("a", "blob")], [[b'x"y'], [b"a'b"]], "blobs with quotes, order ignored")
pair([("a", "time")], [["01:02:03"]], [("a", T)], [["01:02:03"]], "time vs text")
pair([("a", "time"), ("b", I)], [["01:02:03", 1], [None, 2]], [("a", "time")], [[None], ["01:02:03"]], "time NULL vs NA", cond=[0])
pair([("a", "ival")], [["1 month"]], [("a", "ival")], [["30 days"]], "1 month vs 30 days")
pair([("a", "ival")], [["1 day"], ["-1 second"]], [("a", "ival"), ("b", I)], [["-1 second", 1], ["1 day", 2]], "timedelta vs Timedelta text order")
pair([("a", "ival")], [[None], ["3 days"]], [("a", "ival"), ("b", I)], [["3 days", 1], [None, 2]], "interval NULL: None vs NaT")
pair([("a", "tstz")], [["2020-01-01 00:00:00+02"]], [("a", "tstz")], [["2019-12-31 22:00:00+00"]], "same instant, other offsets")
pair([("a", "tstz")], [["2020-01-01 00:00:00+00"]], [("a", "ts")], [["2020-01-01 00:00:00"]], "aware vs naive")
pair([("a", "uuid")], [["00000000-0000-0000-0000-000000000001"]], [("a", T)], [["00000000-0000-0000-0000-000000000001"]], "uuid vs text")
pair([("a", "enum")], [["a"], [None]], [("a", T)], [["a"], [None]], "enum NULL (NaN) vs text NULL")
pair([("a", "enum")], [[None], ["b"]], [("a", "enum")], [["b"], [None]], "enum NULLs, order ignored")
pair([("a", "uhuge")], [[1]], [("a", "huge")], [[1]], "UHUGEINT gold: fetchdf raises")
pair([("a", "huge")], [[1]], [("a", "uhuge")], [[1]], "UHUGEINT prediction: fetchdf raises")
pair([("a", "ttz")], [["12:00:00+02"]], [("a", "ttz")], [["12:00:00+02"]], "TIMETZ: fetchdf raises")
pair([("a", "dec38")], [[12345678901234567890.123456789]], [("a", "dbl")], [[12345678901234567890.0]], "wide decimal vs double")
pair([("a", "struct")], [[(1, "x")]], [("a", "struct")], [[(1, "x")]], "struct vs struct")
pair([("a", "map")], [[[("a", 1)]]], [("a", "map")], [[[("a", 1)]]], "map vs map")

for case in cases:
    print(json.dumps(case, sort_keys=True))
