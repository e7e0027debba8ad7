"""``make bench``: each figure is a ratio against a raw baseline measured in the same run.

The machine is shared and noisy, so nothing here asserts a time; it prints medians of
several repetitions and the ratio ours / baseline.

    python -m benchmarks [--only NAME ...] [--rows N] [--repeat K]
"""

from __future__ import annotations

import argparse
import sys

from .common import Report
from .bench_context import bench_context
from .bench_continue import bench_continue
from .bench_live import bench_live
from .bench_python import bench_run_python
from .bench_sandbox import bench_sandbox
from .bench_server import bench_server
from .bench_sql import bench_run_sql
from .bench_verify import bench_verify

BENCHES = {
    "run_sql": bench_run_sql,
    "run_python": bench_run_python,
    "continue": bench_continue,
    "sandbox": bench_sandbox,
    "server": bench_server,
    "context": bench_context,
    "verify": bench_verify,
    "live": bench_live,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--only", nargs="*", choices=sorted(BENCHES), help="run only these")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the run_sql result")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per measurement")
    args = parser.parse_args(argv)
    report = Report()
    for name in args.only or list(BENCHES):
        print(f"running {name} ...", file=sys.stderr, flush=True)
        BENCHES[name](report, rows=args.rows, repeat=args.repeat)
    report.print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
