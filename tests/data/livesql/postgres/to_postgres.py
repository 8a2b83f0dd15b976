#!/usr/bin/env python3
"""Derives the PostgreSQL form of the corpus (BIRD-Critic's PostgreSQL evaluator) from the
BIRD-Critic SQLite form (../bird_critic/items_bc.jsonl, predictions_bc.jsonl) and ../db/*.sql.

Written for sqlgate (no upstream code). What changes, and why:
- db/<db>.sql: SQLite's REAL becomes DOUBLE PRECISION (Python floats on both engines), and each
  database gets `round(double precision, integer)` (SQLite has it, PostgreSQL only for numeric),
  so the corpus' ROUND(AVG(price), 2) runs unchanged;
- SQL everywhere (predictions, gold, issue, preprocess, clean-up, the SQL inside test cases):
  json_extract(x, '$.k') -> json_extract_path_text(x::json, 'k'); strftime('%Y-%m' / '%m', x) ->
  to_char(x::date, ...); IFNULL -> COALESCE; SQLite's catalog (pragma_table_info, pragma_index_info,
  pragma_index_list, pragma_foreign_key_list, sqlite_master) -> subqueries over PostgreSQL's
  catalog returning the same columns in SQLite's spelling (INTEGER / TEXT / REAL, 0 / 1 flags).
  Anything else SQLite-only (ATTACH, VACUUM INTO, INSERT OR REPLACE, date(), RETURNING's quirk)
  is left as it is: the evaluator's verdict on it is still a verdict;
- BIRD-Critic's PostgreSQL evaluator has no default test (an item without test cases passes when
  its SQL runs), so every item without test cases gets one: `ex_base` (set comparison, empty
  never matches) by default, an ordered list comparison under conditions.order, a comparison of
  numbers rounded to conditions.decimal places for the items tagged decimal-condition;
- `efficiency` items without test cases: that evaluator hands the test (issue_sql, prediction),
  so their test is performance_compare_by_qep(pred_sqls, sol_sqls, ...) == 1 and issue_sql is the
  gold wrapped in a sort (a costlier plan than the gold's own); those with tests keep them;
- every item carries issue_sql (the evaluator requires the field; [] when there is none);
  `ex_base(..., {'order': True})` (a five-argument form it lacks) loses its fifth argument.
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
DBS = ["shop", "school", "fleet", "clinic"]
ROUND_FN = ("CREATE FUNCTION round(double precision, integer) RETURNS numeric LANGUAGE sql "
            "IMMUTABLE AS 'SELECT round($1::numeric, $2)';")
TYPE_NAME = ("CASE format_type(a.atttypid, a.atttypmod) WHEN 'integer' THEN 'INTEGER' "
             "WHEN 'text' THEN 'TEXT' WHEN 'double precision' THEN 'REAL' "
             "ELSE upper(format_type(a.atttypid, a.atttypmod)) END")
IS_PK = ("EXISTS (SELECT 1 FROM pg_index px WHERE px.indrelid = a.attrelid AND px.indisprimary "
         "AND a.attnum = ANY (px.indkey))")


def table_info(table):
    return ("(SELECT a.attname::text AS name, " + TYPE_NAME + " AS type, "
            "(a.attnotnull AND NOT " + IS_PK + ")::int AS notnull, "
            "pg_get_expr(d.adbin, d.adrelid) AS dflt_value, "
            "(row_number() OVER (ORDER BY a.attnum) - 1)::int AS cid, (" + IS_PK + ")::int AS pk "
            "FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
            f"WHERE a.attrelid = '{table}'::regclass AND a.attnum > 0 AND NOT a.attisdropped) AS pragma_table_info")


def index_info(index):
    return ("(SELECT (k.n - 1)::int AS seqno, a.attname::text AS name FROM pg_index i "
            "CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n) "
            "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
            f"WHERE i.indexrelid = to_regclass('{index}')) AS pragma_index_info")


def index_list(table):
    return ("(SELECT c.relname::text AS name, i.indisunique::int AS \"unique\" FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid "
            f"WHERE i.indrelid = '{table}'::regclass) AS pragma_index_list")


def foreign_key_list(table):
    return ("(SELECT f.relname::text AS \"table\", a.attname::text AS \"from\", b.attname::text AS \"to\" "
            "FROM pg_constraint k JOIN pg_class f ON f.oid = k.confrelid "
            "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1] "
            "JOIN pg_attribute b ON b.attrelid = k.confrelid AND b.attnum = k.confkey[1] "
            f"WHERE k.contype = 'f' AND k.conrelid = '{table}'::regclass) AS pragma_foreign_key_list")


SQLITE_MASTER = ("(SELECT c.relname::text AS name, CASE c.relkind WHEN 'r' THEN 'table' "
                 "WHEN 'v' THEN 'view' WHEN 'i' THEN 'index' END AS type, "
                 "coalesce(t.relname, c.relname)::text AS tbl_name FROM pg_class c "
                 "JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public' "
                 "LEFT JOIN pg_index i ON i.indexrelid = c.oid LEFT JOIN pg_class t ON t.oid = i.indrelid "
                 "WHERE c.relkind IN ('r', 'v', 'i')) AS sqlite_master")

# (pattern, replacement) applied in order; the quote may be escaped (\') inside a test's Python.
Q = r"(\\?')"
REWRITES = [
    (re.compile(r"pragma_table_info\(" + Q + r"(\w+)\\?'\)"), lambda m: table_info(m.group(2))),
    (re.compile(r"pragma_index_info\(" + Q + r"(\w+)\\?'\)"), lambda m: index_info(m.group(2))),
    (re.compile(r"pragma_index_list\(" + Q + r"(\w+)\\?'\)"), lambda m: index_list(m.group(2))),
    (re.compile(r"pragma_foreign_key_list\(" + Q + r"(\w+)\\?'\)"), lambda m: foreign_key_list(m.group(2))),
    (re.compile(r"\bsqlite_master\b"), lambda m: SQLITE_MASTER),
    (re.compile(r"json_extract\((\w+), " + Q + r"\$\.(\w+)\\?'\)", re.I),
     lambda m: f"json_extract_path_text({m.group(1)}::json, {m.group(2)}{m.group(3)}{m.group(2)})"),
    (re.compile(r"strftime\(" + Q + r"%Y-%m\\?', (\w+)\)"),
     lambda m: f"to_char({m.group(2)}::date, {m.group(1)}YYYY-MM{m.group(1)})"),
    (re.compile(r"strftime\(" + Q + r"%m\\?', (\w+)\)"),
     lambda m: f"to_char({m.group(2)}::date, {m.group(1)}MM{m.group(1)})"),
    (re.compile(r"\bIFNULL\(", re.I), lambda m: "COALESCE("),
    (re.compile(r"ex_base\(pred_sqls, sol_sqls, db_path, conn, \{[^}]*\}\)"),
     lambda m: "ex_base(pred_sqls, sol_sqls, db_path, conn)"),
]

EX_BASE_TEST = """def test_case(pred_sqls, sol_sqls, db_name, conn):
    result = ex_base(pred_sqls, sol_sqls, db_name, conn)
    assert result == 1, f"ex_base returned {result} but expected 1."
    return result
"""
COMPARE_TEST = """def test_case(pred_sqls, sol_sqls, db_name, conn):
    from decimal import Decimal
    pred, e1, t1 = execute_queries(pred_sqls, db_name, conn, None, '')
    sol, e2, t2 = execute_queries(sol_sqls, db_name, conn, None, '')
    assert not (e1 or t1 or e2 or t2), 'execution failed'
    def norm(rows):
        return [tuple(round(float(v), DECIMAL) if isinstance(v, (float, Decimal)) else v for v in r)
                for r in preprocess_results(rows or [])]
    p, s = norm(pred), norm(sol)
    ORDERED
    return 1
"""
EFFICIENCY_TEST = """def test_case(pred_sqls, sol_sqls, db_name, conn):
    assert performance_compare_by_qep(pred_sqls, sol_sqls, db_name, conn) == 1, 'plan not cheaper'
    return 1
"""


def rewrite(text):
    for pattern, repl in REWRITES:
        text = pattern.sub(repl, text)
    return text


def generated_test(item, covers):
    if item["efficiency"]:
        return EFFICIENCY_TEST
    order = item["conditions"].get("order", False)
    if "decimal-condition" not in covers and not order:
        return EX_BASE_TEST
    places = item["conditions"].get("decimal", 2) if "decimal-condition" in covers else 12
    check = "assert p == s, f'{p} != {s}'" if order else "assert sorted(map(repr, p)) == sorted(map(repr, s)), f'{p} != {s}'"
    return COMPARE_TEST.replace("DECIMAL", str(places)).replace("ORDERED", check)


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def convert_db(db):
    with open(os.path.join(HERE, "..", "db", f"{db}.sql")) as f:
        script = f.read()
    script = re.sub(r"\bREAL\b", "DOUBLE PRECISION", script)
    script = script.replace("BEGIN;\n", "BEGIN;\n" + ROUND_FN + "\n", 1)
    os.makedirs(os.path.join(HERE, "db"), exist_ok=True)
    with open(os.path.join(HERE, "db", f"{db}.sql"), "w") as f:
        f.write(script.replace("(generated by gen_dbs.py)", "(PostgreSQL form, written by postgres/to_postgres.py)"))


def main():
    for db in DBS:
        convert_db(db)
    bc = os.path.join(HERE, "..", "bird_critic")
    items = load(os.path.join(bc, "items_bc.jsonl"))
    cases = {c["instance_id"]: c for c in load(os.path.join(HERE, "..", "cases.jsonl"))}
    preds = {p["instance_id"]: p["pred_sqls"] for p in load(os.path.join(bc, "predictions_bc.jsonl"))}
    with open(os.path.join(HERE, "items_pg.jsonl"), "w") as f:
        for it in items:
            pg = dict(it)
            for key in ("sol_sql", "preprocess_sql", "clean_up_sql", "issue_sql"):
                pg[key] = [rewrite(s) for s in it.get(key, [])]
            pg["test_cases"] = [rewrite(t) for t in it["test_cases"]]
            if not pg["test_cases"]:
                pg["test_cases"] = [generated_test(it, cases[it["instance_id"]]["covers"])]
                if it["efficiency"]:
                    pg["issue_sql"] = [f"SELECT * FROM ({s}) AS slow_form ORDER BY 1" for s in pg["sol_sql"]]
            f.write(json.dumps(pg, sort_keys=True) + "\n")
    with open(os.path.join(HERE, "predictions_pg.jsonl"), "w") as f:
        for it in items:
            iid = it["instance_id"]
            f.write(json.dumps({"instance_id": iid, "pred_sqls": [rewrite(s) for s in preds[iid]]}, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
