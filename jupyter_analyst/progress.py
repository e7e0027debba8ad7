"""A readable, line-oriented display of a turn's events for terminals and logs.

Most of what it prints is the model's (its words, its code, the names of its files): control
characters in it are shown escaped, never sent to the terminal to obey (untrusted.py).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import TextIO

from .events import (
    AnswerReady,
    MemoryUpdated,
    MetricSuggestion,
    ModelThinking,
    Starting,
    ArtifactRecorded,
    Event,
    Guarded,
    PlanMade,
    PlanStepChanged,
    StateChanged,
    StepOutput,
    StepProgress,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    TurnEnded,
    TurnStarted,
)
from ._text import row_count
from .ledger import Usage, describe, money
from .turns import TurnSummary
from .untrusted import terminal_text


def _short(text: str, width: int = 72) -> str:
    """One line of at most ``width`` characters.

    >>> _short("SELECT a\\nFROM t", 12)
    'SELECT a ...'
    """
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 4].rstrip() + " ..."


def _step_of(call_id: str) -> str:
    """`` [q1]`` for the call of a plan's step ``q1`` (its queries run together); else nothing.

    >>> _step_of("call_7.q1"), _step_of("call_7")
    (' [q1]', '')
    """
    _, dot, step = call_id.rpartition(".")
    return f" [{step}]" if dot else ""


class ProgressPrinter:
    """Prints each event as it arrives; model text is streamed inline."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr
        self._in_text = False
        self._tenths: dict[str, int] = {}
        """The tenth of its query each running step was last said to have done."""

    def _line(self, text: str) -> None:
        if self._in_text:
            self.out.write("\n")
            self._in_text = False
        self.out.write(terminal_text(text) + "\n")
        self.out.flush()

    def __call__(self, event: Event) -> None:
        match event:
            case TurnStarted():
                self._line(f"turn {event.turn_id} on thread {event.thread_id} (model: {event.model})")
            case StateChanged():
                self._line(f"  [{event.from_state or 'start'} -> {event.to_state}]")
            case TextDelta():
                if not self._in_text:
                    self.out.write("  model: ")
                    self._in_text = True
                self.out.write(terminal_text(event.text.replace("\n", " ")))
                self.out.flush()
            case ModelThinking():
                self._line("  model: thinking...")
            case Starting():
                self._line(f"  {event.message}")
            case ToolCallStarted():
                detail = event.arguments.get("sql") or event.arguments.get("code") or ""
                name = event.arguments.get("name") or event.arguments.get("table") or ""
                self._line(f"  -> {event.tool}{_step_of(event.call_id)} {name} {_short(str(detail))}".rstrip())
            case ToolResult():
                mark = {"ok": "ok", "error": "error", "refused": "refused"}[event.status]
                how = "reused" if event.reused else f"{event.duration_s:.2f}s"
                extra = ""
                if isinstance(event.result.get("rows"), int):
                    extra = f", {row_count(event.result['rows'], event.result.get('rows_estimated') is True)}"
                capped = event.result.get("row_cap")
                if isinstance(capped, dict):  # never silent: the rows the cap dropped
                    dropped = capped.get("dropped")
                    more = f"{dropped:,} more" if isinstance(dropped, int) else "more rows"
                    extra += f"; {more} dropped at the row cap of {capped.get('cap')}"
                err = event.result.get("error")
                if isinstance(err, dict):
                    extra += f": {_short(str(err.get('message', '')), 100)}"
                self._line(f"     {mark}{_step_of(event.call_id)} ({how}{extra})")
                # Never only the model's to read: where a query computes a team's metric otherwise.
                for note in event.result.get("definition_notes") or []:
                    self._line(f"     definition note: {note}")
            case StepOutput():
                # A running step's prints, as they come: a long step is seen to work.
                for line in event.text.splitlines():
                    self._line(f"     | {line}")
                if event.omitted:
                    self._line(f"     | ... {event.omitted:,} more characters (in the step's result)")
            case StepProgress():
                # A running query's progress, as its engine estimates it: a line a tenth.
                tenth = event.percent // 10
                if tenth > self._tenths.get(event.call_id, -1):
                    self._tenths[event.call_id] = tenth
                    self._line(f"     running{_step_of(event.call_id)} {event.elapsed_s:.0f} s, {event.percent} % done")
            case ArtifactRecorded():
                verb = "new" if event.created else "existing"
                self._line(f"     artifact {event.artifact_id} {event.artifact_type} {event.name} ({verb})")
            case Guarded():
                self._line(f"     guard {event.reason}: {event.message}")
            case PlanMade():
                count = sum(len(stage.steps) for stage in event.stages)
                self._line(f"     plan: {count} steps in {len(event.stages)} stages" + (f" ({_short(event.goal, 60)})" if event.goal else ""))
                for n, stage in enumerate(event.stages, start=1):
                    self._line(f"       stage {n} ({stage.mode}): {', '.join(step.id for step in stage.steps)}")
            case PlanStepChanged() if event.status == "skipped":
                self._line(f"     step {event.step_id} not run: {event.message}")
            case AnswerReady():
                pass
            case TurnEnded():
                self._line(f"turn {event.status}" + (f": {event.message}" if event.message else ""))
            case MemoryUpdated():
                if event.status == "applied":
                    changes = ", ".join(f"{n} {kind}" for kind, n in event.changes.items() if n) or "no change"
                    self._line(f"agent state updated ({changes}){_summarizer_call(event.usage)}")
                else:
                    self._line(f"agent state not updated: {event.message}{_summarizer_call(event.usage)}")


def _summarizer_call(usage: Usage | None) -> str:
    """The summarizer's call, as the line after the turn's summary says it.

    >>> _summarizer_call(Usage(calls=1, prompt_tokens=900, completion_tokens=40, counted_by="server"))
    '; summarizer: 1 model call, 900 prompt + 40 completion tokens, no price'
    >>> _summarizer_call(None)
    ''
    """
    if usage is None:
        return ""
    return (f"; summarizer: {usage.calls} model call{'s' * (usage.calls != 1)}, {usage.prompt_tokens:,} prompt + "
            f"{usage.completion_tokens:,} completion tokens, {money(usage.cost_usd)}")


def add_metric_command(suggestion: MetricSuggestion, context: Path | str | None = None) -> str:
    """The command that saves a suggested metric, every value quoted for a shell.

    >>> from jupyter_analyst.events import MetricSuggestion
    >>> print(add_metric_command(MetricSuggestion(name="paid", table="orders", agg="sum", expr="amount",
    ...                          filters=["status = 'paid'"], measure="", call_id="c")))
    jupyter analyst context add-metric paid --table orders --agg sum --expr amount --filter 'status = '"'"'paid'"'"''
    """
    words = ["jupyter", "analyst", "context", "add-metric", suggestion.name, "--table", suggestion.table,
             "--agg", suggestion.agg, "--expr", suggestion.expr]
    for condition in suggestion.filters:
        words += ["--filter", condition]
    if suggestion.dialect != "duckdb":
        words += ["--dialect", suggestion.dialect]
    if context is not None:
        words += ["--context", str(context)]
    return shlex.join(words)


def _steps_among(summary: TurnSummary) -> str:
    """How many of the executed tool calls were SQL/Python steps, the ones the cost line's
    "steps executed in" counts (a lookup such as ``find`` is a tool call, not a step)."""
    if summary.ledger is None:
        return ""
    steps = summary.ledger.steps
    return f" ({steps} of them SQL/Python step{'s' * (steps != 1)})"


def print_summary(summary: TurnSummary, out: TextIO | None = None, *, context: Path | str | None = None) -> None:
    """The answer and the turn's counts, for people; ``context``: the ``--context`` the turn was
    given, which a suggested command repeats."""
    out = out or sys.stdout
    calls, arts = summary.tool_calls, summary.artifacts
    out.write(f"\n{terminal_text(summary.answer)}\n\n")
    if summary.status == "needs_input":
        out.write(f"waiting for your answer: reply with `run --thread {summary.thread_id} \"...\"`\n")
    elif summary.status != "completed":
        out.write(f"turn {summary.status}" + (f": {summary.message}" if summary.message else "") + "\n")
    out.write(
        f"tool calls: {calls['executed']} executed{_steps_among(summary)}, {calls['reused']} reused, "
        f"{calls['blocked']} blocked; "
        f"artifacts: {arts['created']} created, {arts['reused']} reused, {arts['total']} in the inventory\n"
        f"cost: {describe(summary.ledger) if summary.ledger is not None else 'not recorded'}"
        f"{'; the summarizer call after the turn is pending' if summary.summarizer_pending else ''}\n"
        f"states: {' -> '.join(summary.transitions)}\n"
        f"thread: {summary.thread_id}   notebook: {summary.notebook}\n"
    )
    if summary.citations or summary.unsupported:
        numbers = sum(1 for c in summary.citations if c.kind != "name")
        kept = ", ".join(u.text for u in summary.unsupported)
        out.write(f"receipts: {numbers} cited" + (f"; unsupported: {terminal_text(kept)}" if kept else "") + "\n")
    for definition in summary.definitions:
        what = "metric" if definition.definition == "metric" else "verified query"
        out.write(terminal_text(f"definition used: the team's {what} {definition.name} ({definition.file})") + "\n")
    for suggestion in summary.suggestions:
        # The SQL is the model's: shown inert, and quoted so that pasting it runs only this command.
        out.write(terminal_text(f"not defined in the team's context: {suggestion.measure}") + "\n"
                  f"  save it as a definition: {terminal_text(add_metric_command(suggestion, context))}\n")
