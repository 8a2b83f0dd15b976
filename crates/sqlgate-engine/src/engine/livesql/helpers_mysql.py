# sqlgate's runner for BIRD-Critic's MySQL Python test cases (issue 46).
#
# Written for sqlgate from the documented behaviour of the helpers the benchmark's MySQL test
# cases call (docs/METRICS.md, "On MariaDB / MySQL"); no upstream code. Like the other runners it
# holds no database driver, no file name and no socket: every helper that touches the database
# asks sqlgate over stdin / stdout (one JSON object a line), and sqlgate runs the statement on the
# item's own clone, as the clone's own user, under the item's deadline.
#
# Protocol: one job line; requests {"op": "exec", "sqls": [...], "is_solution": bool} and
# {"op": "query", "sql": ...}, each answered by one line; {"op": "done", "results": [...]} ends
# the job. A result travels as {"types": [tag, ...], "data": [[text or null, ...], ...]} (no
# columns and no rows for a statement without a result set, which PyMySQL's fetchmany returns as
# an empty tuple too; null where no statement ran cleanly) and becomes the tuple of tuples
# PyMySQL builds from the same text.
# Under bird_critic_sound a request running a gold statement also says "side": "gold"
# (bird_critic_runner.py), and sqlgate runs it on the item's twin clone.
import datetime
import io
import json
import re
import sys
from datetime import date
from decimal import Decimal

_PROTO_OUT = sys.stdout
_PROTO_IN = sys.stdin


class MySQLError(Exception):
    """Base of the database errors a helper raises (the classes PyMySQL names)."""


class Error(MySQLError):
    pass


class InterfaceError(Error):
    pass


class DatabaseError(Error):
    pass


class OperationalError(DatabaseError):
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
                                   ProgrammingError, IntegrityError, DataError, InternalError,
                                   NotSupportedError)}


class _Handle:
    """The opaque connection handle test cases pass around."""

    def __repr__(self):
        return "<sqlgate item connection>"


def _fraction(text):
    return int(text.ljust(6, "0")[:6]) if text else 0


_DATETIME = re.compile(r"(\d{1,4})-(\d{1,2})-(\d{1,2})[T ](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?")
_TIMEDELTA = re.compile(r"(-)?(\d{1,3}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?")


def _date(text):
    try:
        return datetime.date(*[int(x) for x in text.split("-", 2)])
    except ValueError:
        return text


def _datetime(text):
    m = _DATETIME.fullmatch(text)
    if not m:
        return _date(text)
    try:
        groups = list(m.groups())
        groups[-1] = _fraction(groups[-1])
        return datetime.datetime(*[int(x) for x in groups])
    except ValueError:
        return _date(text)


def _timedelta(text):
    m = _TIMEDELTA.fullmatch(text)
    if not m:
        return text
    try:
        sign, hours, minutes, seconds, fraction = m.groups()
        delta = datetime.timedelta(hours=int(hours), minutes=int(minutes), seconds=int(seconds),
                                   microseconds=_fraction(fraction))
        return -delta if sign else delta
    except ValueError:
        return text


_CASTS = {
    "int": int,
    "float": float,
    "decimal": Decimal,
    "date": _date,
    "datetime": _datetime,
    "timedelta": _timedelta,
    "bytes": bytes.fromhex,
    "text": lambda v: v,
}


def _rows(raw):
    if raw is None:
        return None
    casts = [_CASTS.get(tag, _CASTS["text"]) for tag in raw["types"]]
    return tuple(tuple(None if v is None else cast(v) for cast, v in zip(casts, row)) for row in raw["data"])


def _ask(request):
    _PROTO_OUT.write(json.dumps(request) + "\n")
    _PROTO_OUT.flush()
    line = _PROTO_IN.readline()
    if not line:
        raise SystemExit(3)
    return json.loads(line)


def perform_query_on_mysql_databases(query, db_name, conn=None):
    """Runs one statement (committed when its text holds one of the evaluator's commit words,
    rolled back on error); returns (rows, conn) or raises the error's class."""
    reply = _ask({"op": "query", "sql": query, **_side([query])})
    if reply.get("error"):
        error = reply["error"]
        raise _ERRORS.get(error["class"], OperationalError)(error["code"], error["message"])
    return _rows(reply["rows"]), conn


def execute_queries(queries, db_name, conn, logger=None, section_title="", is_solution=True):
    """Runs every statement (an error does not stop the others); returns (rows of the last that
    ran cleanly, execution error, timeout error, the errors' text)."""
    request = {"op": "exec", "is_solution": bool(is_solution)}
    reply = _exec_by_side(request, list(queries), stop_at_error=False)
    return _rows(reply["rows"]), reply["exec_error"], reply["timeout"], reply["message"]


def preprocess_results(results):
    """Each row as a tuple, dates and datetimes as YYYY-MM-DD text."""
    out = []
    for row in results:
        out.append(tuple(v.strftime("%Y-%m-%d") if isinstance(v, (datetime.date, datetime.datetime)) else v
                         for v in row))
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
    """1 when the last results of both lists are equal as sets (dates as text); errors are not
    looked at, and an empty or missing result never matches."""
    if not pred_sqls or not sol_sqls:
        return 0
    pred, _, _, _ = execute_queries(pred_sqls, db_name, conn, None, "", True)
    gold, _, _, _ = execute_queries(sol_sqls, db_name, conn, None, "", True)
    if not pred or not gold:
        return 0
    return 1 if set(preprocess_results(pred)) == set(preprocess_results(gold)) else 0


_MEASURED = ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")


def _plan_cost(sqls, db_name, conn):
    """The summed `query_block.cost_info.query_cost` of EXPLAIN FORMAT=JSON over the statements
    that start with a measured keyword (MariaDB's plans have none: 0); any other statement is
    run, not measured; errors count nothing."""
    total = 0.0
    for sql in sqls:
        if not sql.strip().upper().startswith(_MEASURED):
            try:
                perform_query_on_mysql_databases(sql, db_name, conn)
            except Exception:
                pass
            continue
        try:
            rows, _ = perform_query_on_mysql_databases(_like(sql, f"EXPLAIN FORMAT=JSON {sql}"), db_name, conn=conn)
            if not rows:
                continue
            if len(rows[0]) > 0 and rows[0][0]:
                try:
                    plan = json.loads(rows[0][0])
                    total += float(plan.get("query_block", {}).get("cost_info", {}).get("query_cost", "0.0"))
                except Exception:
                    pass
        except Exception:
            pass
    return total


def performance_compare_by_qep(old_sqls, sol_sqls, db_name, conn):
    """1 when `sol_sqls` plan cheaper than `old_sqls` (no transaction around either)."""
    old = _plan_cost(old_sqls, db_name, conn)
    new = _plan_cost(sol_sqls, db_name, conn)
    return 1 if new < old else 0


def _globals(job):
    return _profiled({
        "perform_query_on_mysql_databases": perform_query_on_mysql_databases,
        "execute_queries": execute_queries,
        "ex_base": ex_base,
        "performance_compare_by_qep": performance_compare_by_qep,
        "check_sql_function_usage": check_sql_function_usage,
        "remove_distinct": remove_distinct,
        "preprocess_results": preprocess_results,
        "pred_query_result": _rows(job["pred_query_result"]),
        "date": date,
    }, job)


