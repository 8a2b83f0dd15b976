# The test-case loop every runner ends with (LiveSQLBench's on SQLite, BIRD-Critic's on
# PostgreSQL and MySQL): appended to the runner's helpers, which define the protocol handles
# (_PROTO_IN, _PROTO_OUT, _Handle), the test globals (_globals), the tests of a job (_tests) and
# how one test case is called (_test_call: the code to run and its locals).

def _run_test(source, job, conn):
    code, local = _test_call(source, job, conn)
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
        results = [_run_test(source, job, conn) for source in _tests(job)]
        _PROTO_OUT.write(json.dumps({"op": "done", "results": results}) + "\n")
        _PROTO_OUT.flush()


main()
