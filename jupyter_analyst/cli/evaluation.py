"""``jupyter analyst eval``: a suite run against the configured model, a line per task as it
ends and the report's table at the end; or two reports compared; or a suite's gold answers
checked against the data.

``eval context`` runs the team's suite (the context folder's ``suite.jsonl``, made by
``context verify``) as a regression test: every task is asked again (no resume: a prompt or
context change is a new run), with the context folder the turns read, and the exit status is
1 when any answer is wrong. ``eval context --gold check`` tells the other cause of a failure:
the data moved, so a task's recorded answer is no longer what its gold SQL computes.
"""

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

    team = _team_folder(args)
    suite = suite_path(args.suite) if team is None else _team_suite(team)
    if args.gold:
        return _gold(suite, args)
    return _run(suite, args, team=team)


def _team_folder(args: argparse.Namespace) -> Path | None:
    """The context folder when the suite asked for is ``context`` (and no file of that name)."""
    if str(args.suite) != TEAM_SUITE or args.suite.is_file():
        return None
    from .context import context_folder

    return context_folder(args)


def _team_suite(folder: Path) -> Path:
    from ..knowledge import team_suite

    return team_suite(folder)


#: The suite name that means the team's own: the context folder's ``suite.jsonl``.
TEAM_SUITE = "context"


def _run(suite: Path, args: argparse.Namespace, *, team: Path | None = None) -> int:
    """Run the suite; exit 0 once every task has a result, whatever the score; the team's
    suite (``team``: its context folder) exits 1 unless every answer is right."""
    from ..evals import evaluate as run_suite, outputs
    from ..kernel import SandboxPolicy
    from ..turns import AnalystConfig, ModelSettings
    from .._text import how_many
    from ..untrusted import terminal_text

    model = ModelSettings.resolve(model=args.model, base_url=args.base_url)
    config = AnalystConfig(workspace=args.workspace, store=args.store, blobs=args.blobs,
                           blobs_endpoint=args.blobs_endpoint, max_steps=args.max_steps,
                           context_dir=team if team is not None else args.context,
                           sandbox=SandboxPolicy(enabled=not args.no_sandbox), summarizer=args.summarizer,
                           prices={model.model: args.price} if args.price is not None else {})
    default = Path(args.workspace) / "context-eval.json" if team is not None else Path(f"{suite.stem}-report.json")
    report_path = args.output or default

    def told(result, resumed: bool) -> None:
        how = "resumed" if resumed else f"{result.time_s:.1f} s"
        mark = "correct" if result.correct else f"wrong ({result.failure})"
        print(terminal_text(f"{result.id}: {mark}, {how_many(result.model_calls, 'call')}, {how}"), file=sys.stderr, flush=True)

    report = asyncio.run(run_suite(
        suite, report_path=report_path, config=config, model=model, labels=args.labels, source=args.source,
        sources=dict(args.sources), data_dir=args.data_dir,
        concurrency=args.concurrency, task_timeout_s=args.task_timeout, on_task=told,
        # The team's suite is a regression test: every run asks every task (the prompts, the
        # model's settings or the context may have changed, which the resume file cannot tell).
        restart=args.restart or team is not None,
    ))
    files = outputs(report_path)
    # The table holds the model's words: shown inert on a terminal.
    print(terminal_text(files["markdown"].read_text(encoding="utf-8")), end="")
    print(f"\nreport: {report_path}  table: {files['markdown']}  threads: {files['threads']}/")
    if team is not None:
        wrong = [t for t in report["tasks"] if not t["correct"]]
        if wrong:
            shown = ", ".join(f"{t['id']} ({t['failure']})" for t in wrong[:10])
            print(terminal_text(f"{len(wrong)} of {len(report['tasks'])} verified answers failed: {shown}"))
            print("if the data changed, `jupyter analyst eval context --gold check` names the tasks whose answer "
                  "moved with it")
            return EXIT_FAILED
        print(f"every verified answer holds ({len(report['tasks'])} tasks)")
    return 0 if len(report["tasks"]) else EXIT_FAILED


def _gold(suite: Path, args: argparse.Namespace) -> int:
    """``--gold check|write``: the suite's answers recomputed from its gold SQL."""
    from ..evals import regenerate_gold

    differences = regenerate_gold(suite, cache=Path(args.workspace) / "eval-data", write=args.gold == "write",
                                  sources=dict(args.sources), data_dir=args.data_dir, db=args.source)
    for line in differences:
        print(line)
    if not differences:
        print("every gold answer matches the data" + (": a task that fails is the model's failure"
                                                      if _team_folder(args) is not None else ""))
        return 0
    if args.gold == "write":
        print(f"{len(differences)} gold answers rewritten in {suite}")
        return 0
    print(f"{len(differences)} gold answers differ from the data: it moved since they were recorded "
          "(--gold write rewrites them)")
    return EXIT_FAILED
