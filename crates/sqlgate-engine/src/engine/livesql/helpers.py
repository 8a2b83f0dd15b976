# sqlgate's runner for LiveSQLBench-style Python test cases (issue 46).
#
# Written for sqlgate from the documented behaviour of the helpers the benchmark's test cases call
# (docs/design/state-changing-sql.md, section 1.5); no upstream code. It holds no database driver,
# no file name and no socket: every helper that touches the database asks sqlgate over this
# process's stdin / stdout (one JSON object a line), and sqlgate runs the statements on the item's
# own copy with its guards and deadline. `conn` and `db_path` are opaque handles.
#
# Protocol: sqlgate writes one job line (the runner serves one job after another, each test with
# fresh globals); the runner answers with requests
# {"op": "exec", "sqls": [...]} / {"op": "query", "sql": ...}, each followed by one reply line
# from sqlgate, and ends with {"op": "done", "results": [{"passed": bool, "message": str}, ...]}.
# Under the sound profile the gold's statements are marked (_GoldText: `sol_sqls`, `ex_base`'s
# second list, and what remove_* make of them), and a request running any of them carries
# "side": "gold": sqlgate runs it on the gold's twin copy, never on the prediction's.
import io
import json
import re
import sys
from datetime import date, datetime
from decimal import Decimal, ROUND_HALF_UP

_PROTO_OUT = sys.stdout
_PROTO_IN = sys.stdin


class Error(Exception):
    """Base of the database errors a helper raises (the classes Python's sqlite3 names)."""


class DatabaseError(Error):
    pass


class OperationalError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class ProgrammingError(DatabaseError):
    pass


class DataError(DatabaseError):
    pass


class InterfaceError(Error):
    pass


_ERRORS = {c.__name__: c for c in (Error, DatabaseError, OperationalError, IntegrityError,
                                   ProgrammingError, DataError, InterfaceError)}


class _Handle:
    """The opaque connection handle test cases pass around."""

    def __repr__(self):
        return "<sqlgate item connection>"


def _decode(value):
    if isinstance(value, dict):
        if "$f" in value:
            return float(value["$f"])
        if "$b" in value:
            return bytes.fromhex(value["$b"])
    return value


def _rows(raw):
    if raw is None:
        return None
    return [tuple(_decode(v) for v in row) for row in raw]


def _ask(request):
    _PROTO_OUT.write(json.dumps(request) + "\n")
    _PROTO_OUT.flush()
    line = _PROTO_IN.readline()
    if not line:
        raise SystemExit(3)
    return json.loads(line)


def execute_queries(queries, db_path, conn, logger=None, section_title="", return_error=False):
    """Runs the statements in order on the item's connection, stopping at the first error.

    Returns (rows of the last statement that ran, execution error, timeout error[, message]).
    """
    if isinstance(queries, str):
        queries = [queries]
    reply = _exec_by_side({"op": "exec"}, list(queries), stop_at_error=True)
    rows = _rows(reply["rows"])
    if return_error:
        return rows, reply["exec_error"], reply["timeout"], reply["message"]
    return rows, reply["exec_error"], reply["timeout"]


def perform_query_on_sqlite_databases(query, db_path, conn=None, query_timeout=30):
    """Runs one statement; returns (rows, conn) or raises the error's class."""
    reply = _ask({"op": "query", "sql": query, **_side([query])})
    if reply.get("error"):
        raise _ERRORS.get(reply["error"]["class"], DatabaseError)(reply["error"]["message"])
    return _rows(reply["rows"]), conn


def _round_number(item, places):
    if isinstance(item, Decimal):
        return item.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if isinstance(item, float):
        return round(item, places)
    if isinstance(item, (list, tuple)):
        return type(item)(_round_number(x, places) for x in item)
    if isinstance(item, dict):
        return {k: _round_number(v, places) for k, v in item.items()}
    return item


def preprocess_results(results, decimal_places=2):
    """Each row as a tuple: dates as YYYY-MM-DD, numbers rounded, lists / dicts as sorted JSON."""
    out = []
    for row in results:
        cells = []
        for item in row:
            if isinstance(item, (date, datetime)):
                cells.append(item.strftime("%Y-%m-%d"))
                continue
            item = _round_number(item, decimal_places)
            if isinstance(item, (dict, list)):
                item = json.dumps(item, sort_keys=True)
            cells.append(item)
        out.append(tuple(cells))
    return out


def remove_distinct(sql_list):
    """Drops every space-separated token that is DISTINCT (any case)."""
    return [_like(sql, " ".join(t for t in sql.split(" ") if t.lower() != "distinct"))
            for sql in sql_list]


def remove_comments(sql_list):
    """Drops block comments and `--` comments that end at a line end; collapses blank lines."""
    out = []
    for sql in sql_list:
        text = re.sub(r"/\*.*?\*/", "", sql, flags=re.DOTALL)
        text = re.sub(r"--.*?(\r\n|\r|\n)", r"\1", text)
        text = re.sub(r"\n\s*\n+", "\n", text)
        out.append(_like(sql, text.strip()))
    return out


def _first_argument_end(text, at):
    depth = 0
    for i in range(at, len(text)):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                return i
            depth -= 1
        elif ch == "," and depth == 0:
            return i
    return len(text)


def _closing_paren(text, opening):
    depth = 0
    for i in range(opening, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _strip_round_calls(sql):
    call = re.compile(r"ROUND\s*\(", re.IGNORECASE)
    while True:
        found = call.search(sql)
        if not found:
            return sql
        opening = found.end() - 1
        closing = _closing_paren(sql, opening)
        if closing == -1:
            return sql
        argument = sql[opening + 1:_first_argument_end(sql, opening + 1)].strip()
        sql = sql[:found.start()] + argument + sql[closing + 1:]


def remove_round(sql_list):
    """Replaces every ROUND(...) call (any case, anywhere in the text) by its first argument."""
    return [_like(sql, _strip_round_calls(sql)) for sql in sql_list]


def check_sql_function_usage(sqls, required_keywords):
    """1 when every keyword occurs (case-insensitively) in the statements joined by spaces."""
    if not sqls:
        return 0
    text = " ".join(sql.lower() for sql in sqls)
    return 0 if any(kw.lower() not in text for kw in required_keywords) else 1


def ex_base(pred_sqls, sol_sqls, db_path, conn, conditions=None):
    """1 when both lists run without error and their last results match (set, or list with
    `conditions["order"]`); an empty result never matches."""
    if not pred_sqls or not sol_sqls:
        return 0
    pred, pred_err, pred_to = execute_queries(pred_sqls, db_path, conn, None, "")
    print(f"Predicted results: {pred}")
    gold, gold_err, gold_to = execute_queries(sol_sqls, db_path, conn, None, "")
    print(f"Ground truth results: {gold}")
    if pred_err or pred_to or gold_err or gold_to:
        return 0
    pred = preprocess_results(pred)
    gold = preprocess_results(gold)
    if not pred or not gold:
        return 0
    if conditions is not None and conditions.get("order", False):
        return 1 if pred == gold else 0
    return 1 if set(pred) == set(gold) else 0


def performance_compare_by_qep(old_sqls, sol_sqls, db_path, conn):
    """1 when `sol_sqls` is cheaper than `old_sqls` (sqlgate's plan cost; sound profile only)."""
    reply = _ask({"op": "cost", "old": list(old_sqls), "new": list(sol_sqls),
                  **_side(old_sqls, sol_sqls)})
    return 1 if reply["new"] < reply["old"] else 0


def _sound_ex_base(pred_sqls, sol_sqls, db_path, conn, conditions=None):
    """`ex_base` with its second list run on the gold's twin copy (the sound profile)."""
    return ex_base(pred_sqls, _gold(sol_sqls or []), db_path, conn, conditions)


DEFAULT_TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    pred_sqls = remove_round(remove_distinct(remove_comments(pred_sqls)))
    sol_sqls = remove_round(remove_distinct(remove_comments(sol_sqls)))
    result = ex_base(pred_sqls, sol_sqls, db_path, conn, conditions)
    assert result == 1, f"ex_base returned {result} but expected 1."
    return result
"""


def _globals(job):
    names = {
        "perform_query_on_sqlite_databases": perform_query_on_sqlite_databases,
        "execute_queries": execute_queries,
        "ex_base": ex_base,
        "check_sql_function_usage": check_sql_function_usage,
        "remove_distinct": remove_distinct,
        "remove_comments": remove_comments,
        "remove_round": remove_round,
        "preprocess_results": preprocess_results,
        "pred_query_result": _rows(job["pred_query_result"]),
        "date": date,
    }
    if job["profile"] == "sound":
        names["performance_compare_by_qep"] = performance_compare_by_qep
        names["ex_base"] = _sound_ex_base
    return names


def _tests(job):
    return job["tests"] or [DEFAULT_TEST]


def _test_call(source, job, conn):
    kwargs = {"conditions": job["conditions"]} if job["pass_conditions"] else {}
    sol_sqls = _gold(job["sol_sqls"]) if job["profile"] == "sound" else job["sol_sqls"]
    local = {"conn": conn, "pred_sqls": job["pred_sqls"], "sol_sqls": sol_sqls,
             "db_path": "sqlgate-item-copy", "kwargs": kwargs}
    code = ("import datetime\nfrom datetime import date\n" + source +
            "\n__test_case_result__ = test_case(pred_sqls, sol_sqls, db_path, conn, **kwargs)")
    return code, local
