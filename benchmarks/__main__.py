"""``make bench``: each figure beside its raw floor and the peer a user would pick instead.

The machine is shared and noisy, so nothing here asserts a time: it prints medians of
several repetitions as they come, each benchmark in a process of its own (one that crashes
loses nothing of the others), and writes them all to ``benchmarks/results.json``, from
which ``--readme`` rewrites the table in docs/benchmarks.md.

    python -m benchmarks [--only NAME ...] [--quick] [--rows N] [--repeat K] [--out FILE]
    python -m benchmarks --readme
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import harness, readme
from .common import from_json, print_rows
from .one import BENCHES

QUICK_ROWS, QUICK_REPEAT = 100_000, 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help=f"run only these: {', '.join(BENCHES)} (or module:function)")
    parser.add_argument("--quick", action="store_true",
                        help=f"a short run: {QUICK_ROWS:,} rows, {QUICK_REPEAT} repetition, small data sets")
    parser.add_argument("--rows", type=int, help="rows of the large SQL results (default 1,000,000)")
    parser.add_argument("--repeat", type=int, help="repetitions per measurement (default 5)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds one benchmark may take")
    parser.add_argument("--out", type=Path, default=harness.RESULTS, help="the results file")
    parser.add_argument("--readme", action="store_true",
                        help="rewrite docs/benchmarks.md's table from the results file, and run nothing")
    args = parser.parse_args(argv)
    if args.readme:
        changed = readme.rewrite(harness.PAGE, harness.load(args.out))
        print(f"{harness.PAGE.relative_to(harness.ROOT)} " + ("updated" if changed else "already up to date"))
        return 0
    specs = args.only or list(BENCHES)
    for spec in specs:
        if spec not in BENCHES and ":" not in spec:
            parser.error(f"unknown benchmark {spec!r}: one of {', '.join(BENCHES)}")
    rows = args.rows or (QUICK_ROWS if args.quick else 1_000_000)
    repeat = args.repeat or (QUICK_REPEAT if args.quick else 5)
    results = harness.run(specs, out=args.out, rows=rows, repeat=repeat, quick=args.quick, timeout_s=args.timeout)
    failed = []
    for spec in specs:
        entry = results["benches"][spec]
        rows_, notes = from_json(entry)
        print(f"\n# {spec}: {entry['status']} in {entry['seconds']} s")
        print_rows(rows_, notes)
        if entry["status"] != "ok":
            failed.append(spec)
            print(f"  {entry['status']}: {entry['error']}")
    print(f"\nwritten to {args.out}" + (f"; did not finish: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
