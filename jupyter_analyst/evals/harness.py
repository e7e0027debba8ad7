"""What ``jupyter analyst eval`` does: a suite run against a model, its report written as
JSON (``REPORT.json``) and Markdown (``REPORT.md``), its threads as audit notebooks
(``REPORT.threads/``), its progress in the resume file (``REPORT.progress.jsonl``)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..turns import AnalystConfig, ModelSettings
from .progress_file import ResumeFile
from .report import compare, load_report, markdown
from .results import TaskResult
from .suite_runner import EvalSettings, SuiteRun
from .suite_sources import SourcePolicy
from .suite import load_suite


def outputs(report: Path) -> dict[str, Path]:
    """The files of a run beside its JSON report.

    >>> sorted(str(p) for p in outputs(Path("out/run.json")).values())
    ['out/run.md', 'out/run.progress.jsonl', 'out/run.threads']
    """
    return {"markdown": report.with_suffix(".md"), "resume": report.with_name(f"{report.stem}.progress.jsonl"),
            "threads": report.with_name(f"{report.stem}.threads")}


async def evaluate(
    suite_path: Path, *, report_path: Path, config: AnalystConfig, model: ModelSettings, labels: Path | None = None,
    source: str | None = None, sources: dict[str, str] | None = None, data_dir: Path | None = None,
    concurrency: int = 2, task_timeout_s: float = 600.0,
    restart: bool = False,
    on_task: Callable[[TaskResult, bool], None] = lambda result, resumed: None,
) -> dict[str, Any]:
    """Run the suite (continuing the resume file of an earlier run of the same settings) and
    write the report; returns it. What the tasks may read is what the user gave (see
    ``sources.SourcePolicy``): ``source`` for every task, ``sources`` by the name tasks give,
    ``data_dir`` for relative paths inside it, besides the shipped named sources.

    Raises:
        ConfigError: the suite cannot be read, a task has no source and ``source`` is not given,
            a task names a source it was not given (before any task runs), or the resume file
            is another run's.
    """
    suite = load_suite(suite_path, labels=labels)
    policy = SourcePolicy(cache=Path(config.workspace) / "eval-data", named=dict(sources or {}), data_dir=data_dir,
                          every=source)
    for task in suite.tasks:
        policy.check(task.id, task.source)
    sourceless = [t.id for t in suite.tasks if not t.source]
    if sourceless and source is None:
        raise ConfigError(f"{len(sourceless)} tasks name no data source (the first: {sourceless[0]!r})",
                          reason="no_source", hint="pass --db SOURCE for every task")
    digest = hashlib.sha256(suite_path.read_bytes() + (labels.read_bytes() if labels else b""))
    settings = EvalSettings(
        suite=str(suite_path), suite_sha256=digest.hexdigest(), model=model.model, base_url=model.base_url,
        source=source, sources=dict(sources or {}), concurrency=concurrency, task_timeout_s=task_timeout_s,
        max_steps=config.max_steps,
        summarizer=config.summarizer, sandbox=config.sandbox.enabled, price=config.price_of(model.model),
    )
    files = outputs(report_path)
    files["threads"].mkdir(parents=True, exist_ok=True)
    # A run continues one of the same suite, model and settings; the endpoint's address may change
    # between the two (a local server restarted on another port).
    # A run at another price is another run (its costs would not add up); one without a price
    # continues a resume file written before prices existed.
    # Likewise a run given no --source continues one written before the option existed.
    unpriced = {"price"} if settings.price is None else set()
    unnamed = {"sources"} if not settings.sources else set()
    resume = ResumeFile(files["resume"], settings.model_dump(mode="json", exclude={"base_url", *unpriced, *unnamed}))
    run = SuiteRun(suite, settings, config=config, model=model, threads=files["threads"].resolve(), resume=resume,
                   sources=policy, on_task=on_task)
    report = await run.run(restart=restart)
    _write(report_path, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    _write(files["markdown"], markdown(report))
    return report


def compare_reports(a: Path, b: Path) -> str:
    """``--compare A.json B.json``: the two runs side by side, as Markdown."""
    return compare(load_report(a), load_report(b), names=(a.stem, b.stem))


def _write(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a temporary file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


#: The suites shipped with the package, by name.
SHIPPED = ("sample", "nycflights13")


def suite_path(name_or_path: Path) -> Path:
    """A suite's file: a shipped suite by name, else the path given.

    >>> suite_path(Path("sample")).name, suite_path(Path("mine.jsonl")).name
    ('sample.jsonl', 'mine.jsonl')
    """
    if str(name_or_path) in SHIPPED and not name_or_path.exists():
        return Path(__file__).parent / "suites" / f"{name_or_path}.jsonl"
    return name_or_path
