# sqlgate's runner for BIRD-Critic's PostgreSQL Python test cases (issue 46).
#
# Written for sqlgate from the documented behaviour of the helpers the benchmark's PostgreSQL test
# cases call (docs/METRICS.md, "State-changing SQL", PostgreSQL); no upstream code. Like the SQLite
# runner (helpers.py) it holds no database driver, no file name and no socket: every helper that
# touches the database asks sqlgate over stdin / stdout (one JSON object a line), and sqlgate runs
# the statement on the item's own clone, as the item's own role, under the item's deadline.
#
# Protocol: one job line; requests {"op": "exec", "sqls": [...]} and {"op": "query", "sql": ...},
# each answered by one line; {"op": "done", "results": [...]} ends the job. A result travels as
# {"types": [tag, ...], "data": [[text or null, ...], ...]} (null: the statement returned none)
# and becomes the Python values psycopg2 builds from the same text.
# Under bird_critic_sound a request running a gold statement also says "side": "gold"
# (bird_critic_runner.py), and sqlgate runs it on the item's twin clone.
import io
import json
import re
import sys
from datetime import date, datetime
from decimal import Decimal

_PROTO_OUT = sys.stdout
_PROTO_IN = sys.stdin


class Error(Exception):
    """Base of the database errors a helper raises (the classes psycopg2 names)."""


class InterfaceError(Error):
    pass


class DatabaseError(Error):
    pass


class OperationalError(DatabaseError):
    pass


class QueryCanceled(OperationalError):
    pass


class TransactionRollbackError(OperationalError):
    pass


class ProgrammingError(DatabaseError):
    pass


class IntegrityError(DatabaseError):
    pass


class DataError(DatabaseError):
    pass


class InternalError(DatabaseError):
    pass


class NotSupportedError(DatabaseError):
    pass


_ERRORS = {c.__name__: c for c in (Error, InterfaceError, DatabaseError, OperationalError,
                                   QueryCanceled, TransactionRollbackError, ProgrammingError,
                                   IntegrityError, DataError, InternalError, NotSupportedError)}


class _Handle:
    """The opaque connection handle test cases pass around."""

    def __repr__(self):
        return "<sqlgate item connection>"


def _date(text):
    if text == "infinity":
        return date.max
    if text == "-infinity":
        return date.min
    return date.fromisoformat(text)


def _timestamp(text):
    if text == "infinity":
        return datetime.max
    if text == "-infinity":
        return datetime.min
    return datetime.fromisoformat(text)


_CASTS = {
    "int": int,
    "float": float,
    "decimal": Decimal,
    "bool": lambda v: v == "t",
    "date": _date,
    "timestamp": _timestamp,
    "json": json.loads,
    "bytea": lambda v: bytes.fromhex(v[2:]),
    "text": lambda v: v,
}


def _rows(raw):
    if raw is None:
        return None
    casts = [_CASTS.get(tag, _CASTS["text"]) for tag in raw["types"]]
    return [tuple(None if v is None else cast(v) for cast, v in zip(casts, row)) for row in raw["data"]]


def _ask(request):
    _PROTO_OUT.write(json.dumps(request) + "\n")
    _PROTO_OUT.flush()
    line = _PROTO_IN.readline()
    if not line:
        raise SystemExit(3)
    return json.loads(line)


def perform_query_on_postgresql_databases(query, db_name, conn=None):
    """Runs one statement in its own committed transaction; returns (rows or None, conn) or raises
    the error's class."""
    reply = _ask({"op": "query", "sql": query, **_side([query])})
    if reply.get("error"):
        raise _ERRORS.get(reply["error"]["class"], DatabaseError)(reply["error"]["message"])
    return _rows(reply["rows"]), conn


def execute_queries(queries, db_name, conn, logger=None, section_title=""):
    """Runs the statements in order, stopping at the first error; returns (rows of the last that
    ran, execution error, timeout error)."""
    reply = _exec_by_side({"op": "exec"}, list(queries), stop_at_error=True)
    return _rows(reply["rows"]), reply["exec_error"], reply["timeout"]


def preprocess_results(results):
    """Each row as a tuple, dates and datetimes as YYYY-MM-DD text."""
    out = []
    for row in results:
        out.append(tuple(v.strftime("%Y-%m-%d") if isinstance(v, (date, datetime)) else v for v in row))
    return out


def remove_distinct(sql_list):
    """Drops the word DISTINCT (any case, whole word) wherever it occurs."""
    return [_like(sql, re.sub(r"\bDISTINCT\b", "", sql, flags=re.IGNORECASE)) for sql in sql_list]


def check_sql_function_usage(sqls, required_keywords):
    """1 when every keyword occurs (case-insensitively) in the statements joined by spaces."""
    if not sqls:
        return 0
    text = " ".join(sql.lower() for sql in sqls)
    return 0 if any(kw.lower() not in text for kw in required_keywords) else 1


def ex_base(pred_sqls, sol_sqls, db_name, conn):
    """1 when both lists run cleanly and their last results are equal as sets (dates as text); an
    empty result never matches."""
    if not pred_sqls or not sol_sqls:
        return 0
    pred, pred_err, pred_to = execute_queries(pred_sqls, db_name, conn, None, "")
    gold, gold_err, gold_to = execute_queries(sol_sqls, db_name, conn, None, "")
    if pred_err or pred_to or gold_err or gold_to:
        return 0
    if not pred or not gold:
        return 0
    return 1 if set(preprocess_results(pred)) == set(preprocess_results(gold)) else 0


_MEASURED = ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")


def _plan_cost(sqls, db_name, conn):
    """The summed top-node `Total Cost` of EXPLAIN (FORMAT JSON) over the statements that start
    with a measured keyword; any other statement is run, not measured; errors count nothing."""
    total = 0.0
    for sql in sqls:
        if not sql.strip().upper().startswith(_MEASURED):
            try:
                perform_query_on_postgresql_databases(sql, db_name, conn=conn)
            except Exception:
                pass
            continue
        try:
            rows, _ = perform_query_on_postgresql_databases(_like(sql, f"EXPLAIN (FORMAT JSON) {sql}"), db_name, conn=conn)
            if not rows:
                continue
            plan = rows[0][0]
            if isinstance(plan, str):
                plan = json.loads(plan)
            if isinstance(plan, list) and plan:
                total += float(plan[0].get("Plan", {}).get("Total Cost", 0.0))
        except Exception:
            pass
    return total


def performance_compare_by_qep(old_sqls, sol_sqls, db_name, conn):
    """1 when `sol_sqls` plan cheaper than `old_sqls`, each measured between a BEGIN and a
    ROLLBACK sent as statements of their own (each statement is committed on its own, so what a
    side changes stays)."""
    if not old_sqls or not sol_sqls:
        return 0
    costs = []
    for sqls in (old_sqls, sol_sqls):
        try:
            perform_query_on_postgresql_databases("BEGIN", db_name, conn=conn)
            costs.append(_plan_cost(sqls, db_name, conn))
        finally:
            perform_query_on_postgresql_databases("ROLLBACK", db_name, conn=conn)
    return 1 if costs[1] < costs[0] else 0


def _globals(job):
    return _profiled({
        "perform_query_on_postgresql_databases": perform_query_on_postgresql_databases,
        "execute_queries": execute_queries,
        "ex_base": ex_base,
        "performance_compare_by_qep": performance_compare_by_qep,
        "check_sql_function_usage": check_sql_function_usage,
        "remove_distinct": remove_distinct,
        "preprocess_results": preprocess_results,
        "pred_query_result": _rows(job["pred_query_result"]),
        "date": date,
    }, job)


