# BIRD-Critic's test-case loop, shared by the PostgreSQL and MySQL runners: appended to
# helpers_pg.py or helpers_mysql.py, whose protocol handles (_PROTO_IN, _PROTO_OUT, _Handle) and
# test globals (_globals) it uses.

def _run_test(source, job, conn):
    local = {"conn": conn, "pred_sqls": job["pred_sqls"], "sol_sqls": job["sol_sqls"],
             "db_name": "sqlgate-item-clone"}
    code = ("from datetime import date\n" + source +
            "\n__test_case_result__ = test_case(pred_sqls, sol_sqls, db_name, conn)")
    sys.stdout = io.StringIO()
    try:
        exec(code, _globals(job), local)
        return {"passed": True, "message": ""}
    except AssertionError as e:
        return {"passed": False, "message": f"Test case failed due to assertion error: {e}"}
    except Exception as e:
        return {"passed": False, "message": f"Test case failed due to error: {e}"}
    finally:
        sys.stdout = _PROTO_OUT


def _limit_resources():
    import resource
    for limit, value in ((resource.RLIMIT_FSIZE, 0), (resource.RLIMIT_NOFILE, 16),
                         (resource.RLIMIT_AS, 1 << 30), (resource.RLIMIT_NPROC, 0)):
        try:
            resource.setrlimit(limit, (value, value))
        except (ValueError, OSError):
            pass


def main():
    """Serves jobs, one a line, until sqlgate closes the pipe; each test gets fresh globals."""
    _limit_resources()
    conn = _Handle()
    while True:
        line = _PROTO_IN.readline()
        if not line:
            return
        job = json.loads(line)
        results = [_run_test(source, job, conn) for source in job["tests"]]
        _PROTO_OUT.write(json.dumps({"op": "done", "results": results}) + "\n")
        _PROTO_OUT.flush()


main()
