"""``jupyter analyst eval``: a suite run against the configured model, a line per task as it
ends and the report's table at the end; or two reports compared; or a suite's gold answers
checked against the data."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from .commands import EXIT_FAILED


def evaluate(args: argparse.Namespace) -> int:
    """``eval``: see the module docstring."""
    from ..errors import ConfigError

    if args.compare:
        from ..evals import compare_reports

        print(compare_reports(*args.compare), end="")
        return 0
    if args.suite is None:
        raise ConfigError("no suite to run", reason="bad_suite", hint="pass SUITE.jsonl, `sample` or `nycflights13`")
    from ..evals import suite_path

    suite = suite_path(args.suite)
    if args.gold:
        return _gold(suite, args)
    return _run(suite, args)


def _run(suite: Path, args: argparse.Namespace) -> int:
    """Run the suite; exit 0 once every task has a result, whatever the score."""
    from ..evals import evaluate as run_suite, outputs
    from ..kernel import SandboxPolicy
    from ..turns import AnalystConfig, ModelSettings
    from .._text import how_many
    from ..untrusted import terminal_text

    model = ModelSettings.resolve(model=args.model, base_url=args.base_url)
    config = AnalystConfig(workspace=args.workspace, store=args.store, blobs=args.blobs,
                           blobs_endpoint=args.blobs_endpoint, max_steps=args.max_steps,
                           sandbox=SandboxPolicy(enabled=not args.no_sandbox), summarizer=args.summarizer,
                           prices={model.model: args.price} if args.price is not None else {})
    report_path = args.output or Path(f"{suite.stem}-report.json")

    def told(result, resumed: bool) -> None:
        how = "resumed" if resumed else f"{result.time_s:.1f} s"
        mark = "correct" if result.correct else f"wrong ({result.failure})"
        print(terminal_text(f"{result.id}: {mark}, {how_many(result.model_calls, 'call')}, {how}"), file=sys.stderr, flush=True)

    report = asyncio.run(run_suite(
        suite, report_path=report_path, config=config, model=model, labels=args.labels, source=args.source,
        sources=dict(args.sources), data_dir=args.data_dir,
        concurrency=args.concurrency, task_timeout_s=args.task_timeout, restart=args.restart, on_task=told,
    ))
    files = outputs(report_path)
    # The table holds the model's words: shown inert on a terminal.
    print(terminal_text(files["markdown"].read_text(encoding="utf-8")), end="")
    print(f"\nreport: {report_path}  table: {files['markdown']}  threads: {files['threads']}/")
    return 0 if len(report["tasks"]) else EXIT_FAILED


def _gold(suite: Path, args: argparse.Namespace) -> int:
    """``--gold check|write``: the suite's answers recomputed from its gold SQL."""
    from ..evals import regenerate_gold

    differences = regenerate_gold(suite, cache=Path(args.workspace) / "eval-data", write=args.gold == "write",
                                  sources=dict(args.sources), data_dir=args.data_dir, db=args.source)
    for line in differences:
        print(line)
    if not differences:
        print("every gold answer matches the data")
        return 0
    if args.gold == "write":
        print(f"{len(differences)} gold answers rewritten in {suite}")
        return 0
    print(f"{len(differences)} gold answers differ from the data (--gold write rewrites them)")
    return EXIT_FAILED
