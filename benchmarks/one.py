"""Run one benchmark in this process, saving its report after every figure.

The harness (``python -m benchmarks``) starts one of these per benchmark, so a benchmark
that crashes, hangs or exhausts memory loses only its own remaining figures:

    python -m benchmarks.one NAME_OR_MODULE:FUNCTION --out FILE [--rows N] [--repeat K] [--quick]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import Report

#: The registered benchmarks: name -> "module:function" under ``benchmarks``.
BENCHES: dict[str, str] = {
    "run_sql": "bench_sql:bench_run_sql",
    "tpch": "bench_tpch:bench_tpch",
    "spark_tpch": "bench_spark:bench_spark_tpch",
    "run_python": "bench_python:bench_run_python",
    "continue": "bench_continue:bench_continue",
    "sandbox": "bench_sandbox:bench_sandbox",
    "server": "bench_server:bench_server",
    "first_turn": "bench_first_turn:bench_first_turn",
    "server_start": "bench_startup:bench_server_start",
    "context": "bench_context:bench_context",
    "verify": "bench_verify:bench_verify",
    "live": "bench_live:bench_live",
    "cli": "bench_cli:bench_cli",
    "plan": "bench_plan:bench_plan",
    "latency": "bench_latency:bench_latency",
    "team": "bench_team:bench_team",
    "handoff": "bench_handoff:bench_handoff",
    "gateway": "bench_gateway:bench_gateway",
    "real_model": "bench_real_model:bench_real_model",
    "eval": "bench_eval:bench_eval",
    "engine": "bench_engine:bench_engine",
}


def resolve(spec: str) -> Callable[..., None]:
    """A benchmark function from a registered name or a ``module:function`` path."""
    target = BENCHES.get(spec)
    module, _, attr = (f"benchmarks.{target}" if target else spec).partition(":")
    if not attr:
        raise SystemExit(f"unknown benchmark {spec!r}: one of {', '.join(BENCHES)} or module:function")
    return getattr(importlib.import_module(module), attr)


def save(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` whole or not at all (a reader never sees half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.one", description=__doc__)
    parser.add_argument("bench")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--repeat", type=int, required=True)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)

    def saved(report: Report, error: str | None = None) -> None:
        save(args.out, {**report.to_json(), "error": error})

    report = Report(quick=args.quick, bench=args.bench, on_row=saved)
    saved(report)
    try:
        resolve(args.bench)(report, rows=args.rows, repeat=args.repeat)
    except Exception as exc:  # the report keeps what was measured, and says why it stopped
        traceback.print_exc()
        saved(report, f"{type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
