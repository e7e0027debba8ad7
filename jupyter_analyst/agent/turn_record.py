"""What one turn is made of while it runs, and what it did: the summary the CLI prints,
the trace the notebook is made from, and the state its calls share."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from ..errors import AnalystError
from ..events import Event, Guarded, MetricSuggestion, ModelThinking, ReasonCode, State, StateChanged, TextDelta, TurnEndStatus
from ..ledger import Ledger, Usage
from ..receipts import Citation, DefinitionCitation, Receipts, UnsupportedClaim
from .machine import TurnStateMachine
from .meter import TurnMeter
from .spec import StepOutcome, spec_of

if TYPE_CHECKING:
    from ..store import Turn
    from .context import ContextPack
    from .eventlog import EventWriter
    from .memory import TurnMemory

#: What a user-driven turn records as its "model": no model spoke in it.
USER_DRIVEN = "user"


class TurnSummary(BaseModel):
    """What a turn did, as the CLI prints it with ``--json``."""

    thread_id: str
    turn_id: str
    status: TurnEndStatus
    """``needs_input``: the answer is a question to the user, whose next message answers it;
    ``step_limited``: the step budget ran out, and the answer says what is unfinished;
    ``no_answer``: the model's last reply said nothing (``message`` says how);
    ``budget_exhausted``: a spending budget was reached before a model call (``message`` says
    what was spent, the limit, and when it resets)."""
    answer: str
    message: str | None = None
    """Why the turn did not complete, as its ``turn_ended`` event says it."""
    model: str
    transitions: list[State]
    tool_calls: dict[str, int]
    artifacts: dict[str, int]
    counters: dict[str, int]
    timings: dict[str, float] = {}
    notebook: str | None = None
    error: dict[str, Any] | None = None
    ledger: Ledger | None = None
    """What the turn cost: model calls, tokens, cost where priced, and what reuse saved
    (``None`` only where it was not told: a turn another server ran and closed without it)."""
    citations: list[Citation] = []
    """The answer's numbers, dates and names tied to the step results that hold them (call id,
    artifact, row, column), or derived from two cited numbers; spans index ``answer``."""
    unsupported: list[UnsupportedClaim] = []
    """The answer's numbers and dates that no result of the thread supports: the model was
    told of them once and kept them."""
    definitions: list[DefinitionCitation] = []
    """The team's definitions (metrics, verified queries) the answer's queries followed."""
    suggestions: list[MetricSuggestion] = []
    """Measures the turn's queries computed that the team's context folder lacks: each may be
    saved by a person (``jupyter analyst context add-metric``)."""
    summarizer_pending: bool = False
    """The end-of-turn summarizer's call was still to come when this summary was made: it is
    not in ``ledger.summarizer`` (the turn's stored ledger gets it when it answers)."""

    def with_summarizer(self, usage: Usage | None) -> TurnSummary:
        """This summary once the summarizer has answered: its call (``usage``; ``None``: none
        was sent) counted in the ledger, nothing pending."""
        ledger = self.ledger
        if usage is not None:
            ledger = (ledger or Ledger()).model_copy(update={"summarizer": (ledger or Ledger()).summarizer.plus(usage)})
        return self.model_copy(update={"ledger": ledger, "summarizer_pending": False})


@dataclass
class StepTrace:
    """One executed or reused SQL/Python step, kept for the notebook."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    outcome: StepOutcome
    state: State


@dataclass
class TurnTrace:
    """Everything a turn did, in order, for the summary and the notebook."""

    steps: list[StepTrace] = field(default_factory=list)
    created: set[str] = field(default_factory=set)
    reused: set[str] = field(default_factory=set)


@dataclass
class TurnRun:
    """What one turn's calls share: its events, state machine, counters, trace and memory,
    and how the turn ends."""

    turn: Turn
    events: EventWriter
    memory: TurnMemory
    context: ContextPack
    speaker: str
    """The model that answers, or :data:`USER_DRIVEN`."""
    rerun: bool
    machine: TurnStateMachine = field(default_factory=TurnStateMachine)
    counters: Counter[str] = field(default_factory=Counter)
    trace: TurnTrace = field(default_factory=TurnTrace)
    conversation: list[dict[str, Any]] = field(default_factory=list)
    """This turn's messages; earlier turns come from the context pack."""
    turn_keys: dict[str, StepOutcome] = field(default_factory=dict)
    """Step keys run in this turn -> their outcome."""
    empty_retries: set[str] = field(default_factory=set)
    """Tools that already had their one guided retry for an empty payload."""
    remembering: asyncio.Lock = field(default_factory=asyncio.Lock)
    """The turn's memory is read and written by one call at a time (a plan's queries run together)."""
    failure: tuple[str, AnalystError] | None = None
    """A step that could not run for a reason the model cannot fix (no kernel, damaged
    data), and its tool: it fails the turn, unless a later step of the same tool ran."""
    answer: str = ""
    asked: bool = False
    """The turn ends with a question to the user (``clarify``): it ends ``needs_input``."""
    limited: bool = False
    """The turn used every model call with tools it allows: it ends ``step_limited``."""
    unanswered: str | None = None
    """Why the model's last reply had no answer: the turn ends ``no_answer``."""
    exhausted: str | None = None
    """Which budget was spent before a model call, and when it resets: the turn ends ``budget_exhausted``."""
    failed: bool = False
    error: dict[str, Any] | None = None
    message: str | None = None
    """Why the turn failed, as ``turn_ended`` says it."""
    started: float = field(default_factory=time.perf_counter)
    llm_s: float = 0.0
    tools: list[dict[str, Any]] | None = None
    """The tools offered to the model, decided at the turn's first call and kept: like the
    system message, the same bytes on every call of a turn, so a provider's prompt cache
    holds across them (a tool that becomes usable mid-turn still runs when called)."""
    summary: TurnSummary | None = None
    receipts: Receipts | None = None
    """The final answer's receipts (``None``: none were made: a question, no answer, a
    user-driven turn)."""
    receipts_of: str | None = None
    """The answer text ``receipts`` were made for."""
    checked: str | None = None
    """The answer whose unsupported numbers the model was told of (once a turn): it stands
    if the model's next reply says nothing."""
    meter: TurnMeter = field(default_factory=TurnMeter)
    """The turn's cost ledger as it runs."""

    # ------------------------------------------------------------------ events

    async def emit(self, event: Event) -> Event:
        """Persist the event (off the event loop, after those before it), then hand it on."""
        return await self.events.append(self._of(event))

    def text(self, text: str) -> None:
        """A piece of the model's text: stored and handed on in order, without holding up the stream."""
        self.events.add(self._of(TextDelta(text=text)))

    def thinking(self) -> None:
        """The model has begun to think (its monologue is never shown nor kept): told once a call."""
        self.events.add(self._of(ModelThinking()))

    def _of(self, event: Event) -> Event:
        return event.model_copy(update={"thread_id": self.turn.thread_id, "turn_id": self.turn.turn_id})

    async def enter(self, *states: State) -> None:
        """Move through ``states`` at once (no other step moves the machine in between), then
        tell the moves."""
        moves = [moved for state in states if (moved := self.machine.enter(state)) is not None]
        for before, after in moves:
            await self.emit(StateChanged(from_state=before, to_state=after))

    async def guard(self, reason: ReasonCode, message: str, call_id: str | None = None) -> None:
        """A guard acted: counted, and told."""
        self.counters[reason] += 1
        await self.emit(Guarded(reason=reason, message=message, call_id=call_id))

    # ------------------------------------------------------------------ memory

    async def remember(self, method: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``method(*args, **kwargs)`` on the turn's memory, off the event loop, one at a time."""
        async with self.remembering:
            return await asyncio.to_thread(method, *args, **kwargs)

    async def keep(self, message: dict[str, Any]) -> None:
        """A message of this turn: stored (off the event loop) before it is used."""
        await asyncio.to_thread(self.memory.remember, message)
        self.conversation.append(message)

    def open(self) -> None:
        """What the prompt changes in the agent state, and the earlier turns to send.
        Blocking: call it off the event loop."""
        self.memory.open()
        self.context.load()

    # ------------------------------------------------------------------ the end

    def fail(self, error: AnalystError) -> None:
        """The turn ends in error, for ``error``."""
        self.failed, self.error, self.message = True, error.to_dict(), str(error)

    def fail_step(self, outcome: StepOutcome) -> None:
        """The turn ends in error, for the error its one step ended with."""
        error = outcome.result.get("error")
        self.failed = True
        self.error = error if isinstance(error, dict) else None
        self.message = error.get("message") if isinstance(error, dict) else None

    definitions: list[DefinitionCitation] = field(default_factory=list)
    """The team's definitions the answer's queries followed, read once it was final."""
    suggestions: list[MetricSuggestion] = field(default_factory=list)
    """The measures the turn's queries computed that the team's folder lacks."""

    @property
    def final_receipts(self) -> Receipts | None:
        """The receipts of the turn's answer as it ends (none for an answer they are not of),
        with the definitions its queries followed."""
        if not self.answer or self.receipts_of != self.answer or self.receipts is None:
            return None
        if self.definitions:
            return self.receipts.model_copy(update={"definitions": self.definitions})
        return self.receipts

    def end_status(self) -> Literal["completed", "needs_input", "step_limited", "no_answer", "budget_exhausted",
                                    "error"]:
        """How the turn ends, once its body has run: in error, waiting for the user's answer,
        stopped by a spent budget, without an answer, cut at its step budget, or done."""
        if self.failed:
            return "error"
        if self.asked:
            return "needs_input"
        if self.exhausted is not None:
            return "budget_exhausted"
        if self.unanswered is not None:
            return "no_answer"
        return "step_limited" if self.limited else "completed"

    def summarize(self, status: TurnEndStatus, artifacts_total: int) -> TurnSummary:
        """What the turn did, once it has ended."""
        counters = self.counters
        self.summary = TurnSummary(
            thread_id=self.turn.thread_id,
            turn_id=self.turn.turn_id,
            status=status,
            answer=self.answer,
            message=self.message if status != "completed" else None,
            model=self.speaker,
            transitions=self.machine.history,
            tool_calls={"executed": counters["executed"], "reused": counters["reused"], "blocked": counters["blocked"]},
            artifacts={"created": len(self.trace.created), "reused": len(self.trace.reused), "total": artifacts_total},
            counters=dict(counters),
            timings={"total_s": round(time.perf_counter() - self.started, 4), "llm_s": round(self.llm_s, 4)},
            error=self.error,
            ledger=self.meter.ledger(),
            citations=self.final_receipts.citations if self.final_receipts is not None else [],
            unsupported=self.final_receipts.unsupported if self.final_receipts is not None else [],
            definitions=self.final_receipts.definitions if self.final_receipts is not None else [],
            suggestions=self.suggestions,
        )
        return self.summary


def step_line(tool: str, outcome: StepOutcome) -> str:
    """One line saying what the step left behind, a user-driven turn's answer (its tool's
    ``answered``; else "<tool> done"), or why it did not run.

    >>> import jupyter_analyst.agent.tools  # the built-in tools
    >>> step_line("run_sql", StepOutcome(status="ok", result={"dataset": "revenue", "rows": 4}, reused=True))
    '`revenue`: 4 rows (reused)'
    """
    if outcome.status != "ok":
        error = outcome.result.get("error")
        return str(error.get("message")) if isinstance(error, dict) else f"{tool} did not run"
    spec = spec_of(tool)
    return spec.answered(outcome) if spec is not None and spec.answered is not None else f"{tool} done"
