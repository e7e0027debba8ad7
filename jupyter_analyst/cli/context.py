"""``jupyter analyst context verify``: a finished turn made a verified query of the team's
context folder and a task of its regression suite (``jupyter analyst eval context``).
``jupyter analyst context add-metric``: a metric saved to the folder as dbt's YAML (what a
turn that computed a measure the folder lacks suggests)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from pathlib import Path


def context_folder(args: argparse.Namespace) -> Path:
    """The context folder of ``--context``, else ``context/`` beside the workspace folder."""
    from ..turns import AnalystConfig

    return AnalystConfig(workspace=args.workspace, context_dir=args.context).context_folder(Path(args.workspace).expanduser().resolve())


def verify(args: argparse.Namespace) -> int:
    """``context verify``: see the module docstring."""
    from ..evals import verify_answer
    from ..mcp import named_sources
    from ..sql import display_spec
    from ..turns import AnalystConfig
    from ..untrusted import terminal_text
    from ..workspace import Workspace

    folder = context_folder(args)
    config = AnalystConfig(workspace=args.workspace, store=args.store, context_dir=folder)
    workspace = Workspace(args.workspace, store=args.store)
    try:
        thread = workspace.store.get_thread(args.thread)
        spec = thread.source or ""
        name = args.source_name or (next(iter(named_sources([(None, spec)]))) if spec else "source")
        verified = asyncio.run(verify_answer(
            workspace.store, thread_id=args.thread, turn=args.turn, call_id=args.step, context_folder=folder,
            verified_by=args.by or getpass.getuser(), source_spec=spec, source_name=name, config=config,
            name=args.name, tolerance=args.tolerance))
    finally:
        workspace.close()
    if args.json:
        print(verified.model_dump_json())
        return 0
    # The question and the SQL are the user's and the model's words: shown inert.
    print(terminal_text(f"verified turn {verified.turn} of {verified.thread_id}: {verified.question}"))
    print(f"  query: {folder / verified.query_file}")
    print(f"  task:  {verified.task_id!r} in {folder / verified.suite_file}, answer "
          f"{terminal_text(json.dumps(verified.answer))[:200]} (tolerance {verified.tolerance:g})")
    if verified.queries > 1:
        print(f"  the turn ran {verified.queries} queries: its gold SQL is {verified.call_id}'s "
              "(--step CALL_ID chooses another)")
    # A file is named as it is reached from here; a URL is not repeated (it may hold a password).
    where = display_spec(spec) if spec and "://" not in spec else "PATH_OR_URL"
    print(terminal_text(f"run the suite: jupyter analyst eval context --source {verified.source}={where}"))
    return 0


def add_metric(args: argparse.Namespace) -> int:
    """``context add-metric``: see the module docstring."""
    from ..knowledge import MetricDraft, save_metric
    from ..untrusted import terminal_text

    folder = context_folder(args)
    draft = MetricDraft(name=args.name, table=args.table, agg=args.agg, expr=args.expr, filters=args.filters,
                        label=args.label, description=args.description)
    saved = save_metric(folder, draft, dialect=args.dialect, write=not args.dry_run)
    if args.dry_run:
        print(terminal_text(saved.yaml), end="")
        print(f"not written (--dry-run): {folder / saved.file}", file=sys.stderr)
        return 0
    print(terminal_text(f"saved the metric {saved.name} to {folder / saved.file}: {saved.definition}"))
    return 0
