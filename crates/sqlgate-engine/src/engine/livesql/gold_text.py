# The gold's mark, shared by every runner (helpers.py for SQLite, helpers_pg.py and
# helpers_mysql.py for the servers): under a sound profile the gold's statements are _GoldText,
# and a request running any of them carries "side": "gold" (_side), which sqlgate answers on the
# gold's twin. Prepended to each runner's source (python.rs, postgres/mod.rs, mysql/mod.rs).


class _GoldText(str):
    """A statement of the item's gold (sound profile only): the helpers run it on the gold's copy.

    What a test makes of it with a string method, `+`, `%`, `*` or an index keeps the mark (the
    methods below). An f-string or `str.join` makes a plain `str`: sqlgate then sends a request
    to the gold's copy when its statements are, word for word, the gold's alone."""

    def __str__(self):
        return self

    def __radd__(self, other):
        return _GoldText(str.__add__(other, str.__str__(self))) if isinstance(other, str) else NotImplemented

    def __rmod__(self, other):
        return _GoldText(str.__mod__(other, str.__str__(self))) if isinstance(other, str) else NotImplemented


def _marked(result):
    """`result` of a method of a gold statement, its text (or texts) marked as the gold's."""
    if isinstance(result, str):
        return _GoldText(result)
    if isinstance(result, (list, tuple)):
        return type(result)(_GoldText(r) if isinstance(r, str) else r for r in result)
    return result


def _keeping_the_mark(name):
    method = getattr(str, name)

    def marked(self, *args, **kwargs):
        return _marked(method(self, *args, **kwargs))

    marked.__name__ = name
    return marked


for _name in ("strip", "lstrip", "rstrip", "replace", "lower", "upper", "casefold", "title",
              "capitalize", "swapcase", "format", "format_map", "expandtabs", "translate",
              "center", "ljust", "rjust", "zfill", "removeprefix", "removesuffix", "split",
              "rsplit", "splitlines", "partition", "rpartition", "__add__", "__mod__",
              "__mul__", "__rmul__", "__getitem__"):
    setattr(_GoldText, _name, _keeping_the_mark(_name))


def _gold(sqls):
    """`sqls` (a statement or a list of them) marked as the gold's."""
    if isinstance(sqls, str):
        return _GoldText(sqls)
    return [_GoldText(s) if isinstance(s, str) else s for s in sqls]


def _like(source, text):
    """`text`, made from the statement `source`, marked as the gold's when `source` is."""
    return _GoldText(text) if isinstance(source, _GoldText) else text


def _side(*lists):
    """The request's side: the gold's copy when any statement of `lists` is the gold's."""
    for sqls in lists:
        items = [sqls] if isinstance(sqls, str) else sqls
        if any(isinstance(s, _GoldText) for s in items):
            return {"side": "gold"}
    return {}


def _exec_by_side(request, queries, stop_at_error):
    """`queries` run as one `exec` request (`request` its other fields) per maximal run of
    statements of one side, in order, so a request never mixes the prediction's statements with
    the gold's (a prediction's TEMP object made on the twin for the gold's statements after it:
    red team round 30). The merged reply: the rows of the last run that gave any, an error or
    timeout of any run, the messages joined; with `stop_at_error` no run starts after one failed."""
    runs = []
    for sql in queries:
        side = _side([sql])
        if runs and runs[-1][0] == side:
            runs[-1][1].append(sql)
        else:
            runs.append((side, [sql]))
    merged = {"rows": None, "exec_error": False, "timeout": False, "message": ""}
    for side, run in runs or [({}, [])]:
        reply = _ask({**request, "sqls": run, **side})
        if reply["rows"] is not None:
            merged["rows"] = reply["rows"]
        merged["exec_error"] = merged["exec_error"] or bool(reply["exec_error"])
        merged["timeout"] = merged["timeout"] or bool(reply["timeout"])
        merged["message"] = " ".join(m for m in (merged["message"], reply.get("message") or "") if m)
        if stop_at_error and (reply["exec_error"] or reply["timeout"]):
            break
    return merged
