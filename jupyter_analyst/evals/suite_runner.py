"""Running a suite: each task a new thread, its turns asked in order, at most ``concurrency``
tasks at once, each finished task written to the resume file as it ends.

Every figure comes from the turn itself: model calls, tokens, cost and what reuse saved from
the ledger its ``turn_ended`` event carries (the server's counts where it sent them, else the
estimate, and the report says which; see jupyter_analyst/ledger.py), steps from its summary,
time measured around the turn.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
from .progress_file import ResumeFile
from ..ledger import Ledger, Price
from .results import TaskResult, TurnResult, totals
from .scoring import gold_pairs, score
from .suite_sources import SourcePolicy
from .suite import Suite, Task, Turn

ANSWER_RULES = (
    "End your reply with a line `ANSWER: ` followed by the answer alone, in the format above. "
    "A list of rows: one row a line after the ANSWER line, its values separated by ` | `, no header. "
    "If the data cannot answer the question, write `ANSWER: not in the data`."
)
PAIR_RULES = "End your reply with the answer as the @name[value] pairs of the answer format above."


class EvalSettings(BaseModel):
    """How a suite is run; a resume file is only continued by a run of the same settings."""

    suite: str
    suite_sha256: str
    model: str
    base_url: str | None = None
    source: str | None = None
    """The ``--db`` given for every task, or ``None`` for each task's own."""
    sources: dict[str, str] = {}
    """The sources the tasks may name (``--source NAME=PATH_OR_URL``), besides the shipped ones."""
    concurrency: int = 2
    task_timeout_s: float = 600.0
    max_steps: int = 16
    summarizer: bool = False
    sandbox: bool = True
    price: Price | None = None
    """The model's price per million tokens the costs are counted at (``None``: tokens only)."""


def prompt_for(turn: Turn) -> str:
    """What the model is asked: the question, the task's answer format, how to mark the answer.

    >>> print(prompt_for(Turn(question="How many?", answer=3, guidelines="A whole number.")).splitlines()[:3])
    ['How many?', '', 'Answer format: A whole number.']
    """
    rules = PAIR_RULES if gold_pairs(turn.answer) else ANSWER_RULES
    return f"{turn.question}\n\nAnswer format: {turn.guidelines}\n{rules}"


def file_name(task_id: str) -> str:
    """A task's id as a file name: its safe characters and a short hash (ids are anyone's text).

    >>> file_name("q1"), file_name("../../etc/passwd")
    ('q1-c75de8c1', 'etc_passwd-3754d6cb')
    """
    safe = re.sub(r"[^A-Za-z0-9_-]+", "_", task_id).strip("_")[:60] or "task"
    return f"{safe}-{hashlib.sha256(task_id.encode()).hexdigest()[:8]}"


class _Meter:
    """Keeps a turn's ledger from its ``turn_ended`` event (a turn cut by the timeout tells
    one too), with the summarizer's call from its ``memory`` event when it runs, and its thread."""

    def __init__(self) -> None:
        self.ledger = Ledger()
        self.thread_id: str | None = None

    def __call__(self, event: Any) -> None:
        self.thread_id = self.thread_id or getattr(event, "thread_id", None) or None
        kind = getattr(event, "type", None)
        if kind == "turn_ended" and event.ledger is not None:
            self.ledger = event.ledger.model_copy(update={"summarizer": self.ledger.summarizer})
        elif kind == "memory" and event.usage is not None:
            self.ledger = self.ledger.model_copy(update={"summarizer": self.ledger.summarizer.plus(event.usage)})


class SuiteRun:
    """One run of a suite against one model (see the module docstring)."""

    def __init__(self, suite: Suite, settings: EvalSettings, *, config: AnalystConfig, model: ModelSettings,
                 threads: Path, resume: ResumeFile, sources: SourcePolicy,
                 on_task: Callable[[TaskResult, bool], None] = lambda result, resumed: None) -> None:
        self.suite, self.settings, self.config, self.model = suite, settings, config, model
        self.threads, self.resume, self.sources, self.on_task = threads, resume, sources, on_task
        for task in suite.tasks:  # before any task runs: no thread holds rows of a source not given
            sources.check(task.id, task.source)

    async def run(self, *, restart: bool = False) -> dict[str, Any]:
        """Run the tasks the resume file does not hold; the report of all of them."""
        done = self.resume.open(restart=restart)
        for task in self.suite.tasks:
            if task.id in done:
                self.on_task(done[task.id], True)
        gate = asyncio.Semaphore(self.settings.concurrency)

        async def one(task: Task) -> None:
            async with gate:
                result = await self.run_task(task)
                # Written (and synced) before the next task may start: a kill loses no finished task.
                self.resume.add(result)
                self.on_task(result, False)

        await asyncio.gather(*(one(t) for t in self.suite.tasks if t.id not in done))
        return self.report()

    def report(self) -> dict[str, Any]:
        """The report: the settings, the totals, and each task in the suite's order."""
        tasks = [self.resume.done[t.id] for t in self.suite.tasks if t.id in self.resume.done]
        return {"settings": self.settings.model_dump(mode="json"), "totals": totals(tasks),
                "tasks": [t.model_dump(mode="json") for t in tasks]}

    async def run_task(self, task: Task) -> TaskResult:
        """The task's turns in one new thread; a turn that errs or times out ends the task."""
        source = self.sources.resolve(task.source)
        notebook = self.threads / f"{file_name(task.id)}.ipynb"
        thread_id: str | None = None
        results: list[TurnResult] = []
        for turn in task.turns:
            request = TurnRequest(prompt=prompt_for(turn), source=source if thread_id is None else None,
                                  thread_id=thread_id, notebook=notebook)
            result, thread_id = await self._ask(request, turn, thread_id)
            results.append(result)
            if result.failure in ("error", "timeout"):
                break
        for turn in task.turns[len(results):]:
            results.append(TurnResult(question=turn.question, gold=turn.answer, failure="error",
                                      error="not asked: an earlier turn of the task failed"))
        written = str(notebook) if notebook.exists() else None
        return TaskResult.of(task.id, results, tags=task.tags, thread_id=thread_id, notebook=written)

    async def _ask(self, request: TurnRequest, turn: Turn, thread_id: str | None) -> tuple[TurnResult, str | None]:
        """One turn, timed and scored; its thread's id (the one it opened for a first turn)."""
        meter = _Meter()
        result = TurnResult(question=turn.question, gold=turn.answer, tolerance=turn.tolerance)
        started = time.perf_counter()
        try:
            summary = await asyncio.wait_for(
                run_turn(request, config=self.config, model=self.model, on_event=meter),
                self.settings.task_timeout_s,
            )
        except TimeoutError:
            result.failure, result.status = "timeout", "timeout"
            result.error = f"no answer within {self.settings.task_timeout_s:g} s"
        except Exception as exc:  # one task's failure is recorded as its result; the run goes on
            result.failure, result.status, result.error = "error", "error", f"{type(exc).__name__}: {exc}"
        else:
            thread_id = summary.thread_id
            result.status, result.answer = summary.status, summary.answer
            result.steps_executed = summary.tool_calls.get("executed", 0)
            result.steps_reused = summary.tool_calls.get("reused", 0)
            self._score(result, summary.status, summary.counters, summary.error)
            if summary.status in ("step_limited", "no_answer") and not result.correct:
                result.error = summary.message
        result.time_s = round(time.perf_counter() - started, 3)
        # What the task paid for: the turn's calls and the summarizer's after it, if it ran.
        result.usage, result.saved = meter.ledger.usage.plus(meter.ledger.summarizer), meter.ledger.saved
        return result, thread_id or meter.thread_id

    @staticmethod
    def _score(result: TurnResult, status: str, counters: dict[str, int], error: dict[str, Any] | None) -> None:
        if status == "error":
            result.failure = "error"
            result.error = str((error or {}).get("message") or (error or {}).get("reason") or "the turn failed")
            return
        verdict = score(result.answer, result.gold, result.tolerance)
        result.correct, result.given, result.failure = verdict.correct, verdict.given, verdict.failure
        if not verdict.correct and counters.get("model_refused"):
            result.failure = "refused"
        elif not verdict.correct and status in ("step_limited", "no_answer"):
            # What the model was cut off from, or never said, is not a wrong answer.
            result.failure = status
