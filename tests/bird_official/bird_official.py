"""Runs BIRD mini-dev's official evaluation loop over a predictions file and a gold file on a live
PostgreSQL or MySQL server and writes each item's official EX and Soft-F1 as JSON lines; prints
the seconds each loop took and the versions it ran with.

    bird_official.py --dialect PostgreSQL --predicted P.json --gold G.sql --output OUT.jsonl \
        [--metrics ex,soft_f1] [--num-cpus 16] [--meta-time-out 30]

The official code is not part of this repository: it is imported from the folder the variable
SQLGATE_BIRD_OFFICIAL names, bird-bench/mini_dev's evaluation/ at UPSTREAM_COMMIT (its files'
SHA-256 are checked). Its `run_sqls_parallel`, `execute_model`, `execute_sql`, `calculate_ex`,
`calculate_f1_score`, `package_sqls` and `sort_results` run unchanged. Set from here: the
module-level `exec_result` lists the official `__main__` blocks create, and the two connect
functions, which hard-code the BIRD authors' local credentials, replaced by ones connecting to
the server whose URL the variable BIRD_OFFICIAL_URL holds (the database the test gives sqlgate)."""
import argparse
import hashlib
import importlib
import importlib.metadata
import json
import multiprocessing
import os
import platform
import sys
import time
import urllib.parse

import psycopg2
import pymysql

from py312 import behave_as_312

UPSTREAM_COMMIT = "bee73fe45272a23189aa5421dc1a2f68b59c008d"
UPSTREAM_SHA256 = {
    "evaluation_utils.py": "f6943d249caac5aeaef9bce21d43dbf29dcef85a0c965a76df032a9542f308bf",
    "evaluation_ex.py": "da1bbcd4530be83692d7c650c814ea9704bb710d0c953eb75d02ccb38233cf89",
    "evaluation_f1.py": "ba2700ee09b0c34d7e203788544757e6e6d6c99c0425bb92b3daa3927eee29bf",
}
PACKAGES = ["psycopg2-binary", "PyMySQL", "func-timeout"]


def upstream_folder():
    """The official evaluation folder, checked file by file against UPSTREAM_SHA256."""
    folder = os.environ.get("SQLGATE_BIRD_OFFICIAL", "")
    if not folder:
        raise SystemExit("bird_official: set SQLGATE_BIRD_OFFICIAL to bird-bench/mini_dev's "
                         f"evaluation/ folder at {UPSTREAM_COMMIT}")
    for name, expected in UPSTREAM_SHA256.items():
        path = os.path.join(folder, name)
        try:
            with open(path, "rb") as source:
                digest = hashlib.sha256(source.read()).hexdigest()
        except OSError as error:
            raise SystemExit(f"bird_official: SQLGATE_BIRD_OFFICIAL: cannot read {path}: {error}")
        if digest != expected:
            raise SystemExit(f"bird_official: {path} is not the file of mini_dev {UPSTREAM_COMMIT} "
                             f"(SHA-256 {digest}, expected {expected})")
    return folder


def connect_postgresql():
    """Connects to BIRD_OFFICIAL_URL with psycopg2, as the official function does locally."""
    return psycopg2.connect(os.environ["BIRD_OFFICIAL_URL"])


def connect_mysql():
    """Connects to BIRD_OFFICIAL_URL with PyMySQL, as the official function does locally."""
    url = urllib.parse.urlsplit(os.environ["BIRD_OFFICIAL_URL"])
    return pymysql.connect(
        host=url.hostname,
        port=url.port or 3306,
        user=urllib.parse.unquote(url.username),
        password=urllib.parse.unquote(url.password),
        database=url.path.lstrip("/"),
    )


def official_modules():
    """The official modules (utils, {metric: loop module}) wired to BIRD_OFFICIAL_URL."""
    sys.path.insert(0, upstream_folder())
    utils = importlib.import_module("evaluation_utils")
    utils.connect_postgresql = connect_postgresql
    utils.connect_mysql = connect_mysql
    loops = {"ex": importlib.import_module("evaluation_ex"),
             "soft_f1": importlib.import_module("evaluation_f1")}
    for loop in loops.values():
        loop.exec_result = []
    # Before the pool forks its workers, which inherit it.
    behave_as_312(loops["soft_f1"])
    return utils, loops


def versions():
    """The interpreter and client library versions the verdicts were computed with."""
    return {
        "upstream": f"bird-bench/mini_dev@{UPSTREAM_COMMIT}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "packages": {name: importlib.metadata.version(name) for name in PACKAGES},
        "pythonhashseed": os.environ.get("PYTHONHASHSEED"),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dialect", required=True, choices=["PostgreSQL", "MySQL"])
    parser.add_argument("--predicted", required=True)
    parser.add_argument("--gold", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--metrics", default="ex,soft_f1")
    # The official run_evaluation.sh: num_cpus=16, meta_time_out=30.0.
    parser.add_argument("--num-cpus", type=int, default=16)
    parser.add_argument("--meta-time-out", type=float, default=30.0)
    args = parser.parse_args()
    # The workers must inherit the wiring above (a spawned worker would re-import the official
    # modules with their hard-coded credentials).
    multiprocessing.set_start_method("fork")
    utils, loops = official_modules()

    predicted, _ = utils.package_sqls(args.predicted, "", mode="pred")
    golds, db_places = utils.package_sqls(args.gold, "", mode="gt")
    pairs = list(zip(predicted, golds))
    scores = {}
    seconds = {}
    for name in args.metrics.split(","):
        loop = loops[name]
        started = time.perf_counter()
        loop.run_sqls_parallel(
            pairs,
            db_places=db_places,
            num_cpus=args.num_cpus,
            meta_time_out=args.meta_time_out,
            sql_dialect=args.dialect,
        )
        seconds[name] = time.perf_counter() - started
        results = utils.sort_results(loop.exec_result)
        if [r["sql_idx"] for r in results] != list(range(len(pairs))):
            raise SystemExit(f"{name}: the official loop returned {len(results)} of {len(pairs)} items")
        scores[name] = [r["res"] for r in results]
    with open(args.output, "w") as out:
        for index in range(len(pairs)):
            line = {"index": index}
            line.update({name: values[index] for name, values in scores.items()})
            out.write(json.dumps(line) + "\n")
    print(json.dumps({"items": len(pairs), "seconds": seconds, "versions": versions()}))


if __name__ == "__main__":
    main()
