# BIRD-Critic's test-case call, shared by the PostgreSQL and MySQL runners: appended to
# helpers_pg.py or helpers_mysql.py, before the test-case loop (test_loop.py).

def _tests(job):
    return job["tests"]


def _test_call(source, job, conn):
    local = {"conn": conn, "pred_sqls": job["pred_sqls"], "sol_sqls": job["sol_sqls"],
             "db_name": "sqlgate-item-clone"}
    code = ("from datetime import date\n" + source +
            "\n__test_case_result__ = test_case(pred_sqls, sol_sqls, db_name, conn)")
    return code, local
