# BIRD-Critic's test-case call, shared by the PostgreSQL and MySQL runners: appended to
# helpers_pg.py or helpers_mysql.py, before the test-case loop (test_loop.py).
#
# Under the sound profile (`bird_critic_sound`) the gold's statements are marked (gold_text.py,
# shared with helpers.py: `sol_sqls`, `ex_base`'s second list, what a string method, `+`, `%` or
# remove_distinct makes of them, and the EXPLAINs of a plan comparison), and a request running
# any of them carries "side": "gold": sqlgate runs it on the item's
# twin clone (the template after the item's preprocess and gold), never on the prediction's. An
# `efficiency` item's job is never marked (its `sol_sqls` is the prediction).


def _sound_ex_base(pred_sqls, sol_sqls, db_name, conn):
    """`ex_base` with its second list run on the gold's twin clone (the sound profile)."""
    return ex_base(pred_sqls, _gold(sol_sqls or []), db_name, conn)


def _profiled(names, job):
    """The test globals `names`, with the sound profile's `ex_base` under it."""
    if job["profile"] == "sound":
        names["ex_base"] = _sound_ex_base
    return names


def _tests(job):
    return job["tests"]


def _test_call(source, job, conn):
    sol_sqls = _gold(job["sol_sqls"]) if job["profile"] == "sound" else job["sol_sqls"]
    local = {"conn": conn, "pred_sqls": job["pred_sqls"], "sol_sqls": sol_sqls,
             "db_name": "sqlgate-item-clone"}
    code = ("from datetime import date\n" + source +
            "\n__test_case_result__ = test_case(pred_sqls, sol_sqls, db_name, conn)")
    return code, local
