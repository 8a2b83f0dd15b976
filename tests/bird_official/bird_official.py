"""Runs BIRD mini-dev's official evaluation loop (the official functions, copied unchanged into
official_*.py) over a predictions file and a gold file on a live PostgreSQL or MySQL server, and
writes each item's official EX and Soft-F1 as JSON lines; prints the seconds each loop took.

    bird_official.py --dialect PostgreSQL --predicted P.json --gold G.sql --output OUT.jsonl \
        [--metrics ex,soft_f1] [--num-cpus 16] [--meta-time-out 30]

The server's URL comes from the variable BIRD_OFFICIAL_URL (see official_utils.py)."""
import argparse
import json
import time

import official_ex
import official_f1
from official_utils import package_sqls, sort_results
from py312 import behave_as_312

LOOPS = {"ex": official_ex, "soft_f1": official_f1}


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
    # Before the pool forks its workers, which inherit it.
    behave_as_312(official_f1)

    predicted, _ = package_sqls(args.predicted, "", mode="pred")
    golds, db_places = package_sqls(args.gold, "", mode="gt")
    pairs = list(zip(predicted, golds))
    scores = {}
    seconds = {}
    for name in args.metrics.split(","):
        loop = LOOPS[name]
        started = time.perf_counter()
        loop.run_sqls_parallel(
            pairs,
            db_places=db_places,
            num_cpus=args.num_cpus,
            meta_time_out=args.meta_time_out,
            sql_dialect=args.dialect,
        )
        seconds[name] = time.perf_counter() - started
        results = sort_results(loop.exec_result)
        if [r["sql_idx"] for r in results] != list(range(len(pairs))):
            raise SystemExit(f"{name}: the official loop returned {len(results)} of {len(pairs)} items")
        scores[name] = [r["res"] for r in results]
    with open(args.output, "w") as out:
        for index in range(len(pairs)):
            line = {"index": index}
            line.update({name: values[index] for name, values in scores.items()})
            out.write(json.dumps(line) + "\n")
    print(json.dumps({"items": len(pairs), "seconds": seconds}))


if __name__ == "__main__":
    main()
