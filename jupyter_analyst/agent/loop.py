"""One turn of the agent: call the model, guard and run its tool calls, until it answers.

A turn the user drives (one tool call they typed, ``%analyst_sql`` in their notebook) is
:meth:`AgentLoop.run_call`: the same frame (memory, events, the state machine, the end of
the turn) and the same call pipeline (see calls.py) as a call the model makes, so the
thread's history and notebook show it as a step like any other, and a later turn of the
model sees the dataset it made. Nothing there asks a model.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .._clock import new_id
from .._text import how_many, model_json
from ..errors import AnalystError, BudgetExhausted, DiskUnavailable, ModelError
from ..events import AnswerReady, MetricSuggestion, StateChanged, TurnEnded, TurnEndStatus
from ..ledger import Ledger, Price, Tokens
from ..receipts import Receipts
from ..store import ThreadStore, Turn
from .calls import CallPipeline, NormalisedCall, normalise
from .context import ContextBudget, ContextPack, step_budget_note
from .environment import ThreadEnvironment
from .eventlog import EventSink, EventWriter
from .guards import answer_check, answer_receipts, check_answer, mark_answer, read_team_definitions
from .llm import LLMClient, ToolCall
from .memory import ThreadMemory, TurnMemory
from .meter import Spending, TurnMeter, served_usage
from .modes import classify
from .spec import StepOutcome, registered, spec_of, tool_schemas
from .turn_record import USER_DRIVEN, TurnRun, TurnSummary, TurnTrace, step_line

__all__ = ["USER_DRIVEN", "AgentLoop", "TurnSummary", "TurnTrace"]

class TurnEnding(Protocol):
    """The ``turn_ended`` of a turn the loop ran, made by the turns' one owner of a turn's
    life (``turns/life.py``): the loop says how the turn ended, not in what words."""

    def __call__(self, turn: Turn, status: TurnEndStatus, message: str | None = None, *,
                 counters: dict[str, int] | None = None, ledger: Ledger | None = None,
                 receipts: Receipts | None = None, suggestions: Sequence[MetricSuggestion] = ()) -> TurnEnded: ...


@dataclass(frozen=True)
class Answer:
    """The model answered in plain text: the turn ends with it."""

    text: str


@dataclass(frozen=True)
class RunCalls:
    """The model asked for tool calls (with what it said along with them)."""

    calls: tuple[NormalisedCall, ...]
    text: str


#: What one model call asks for.
NextStep = Answer | RunCalls


class AgentLoop:
    """Runs turns of one thread against a model and an environment."""

    def __init__(
        self,
        *,
        store: ThreadStore,
        environment: ThreadEnvironment,
        llm: LLMClient | None,
        model: str,
        ending: TurnEnding,
        emit: EventSink | None = None,
        max_steps: int = 16,
        budget: ContextBudget | None = None,
        active_ttl_s: float = 1_800.0,
        events: EventWriter | None = None,
        plan_concurrency: int = 4,
        price: Price | None = None,
        spending: Spending | None = None,
    ) -> None:
        self.store = store
        self.environment = environment
        self.calls = CallPipeline(environment, plan_concurrency=plan_concurrency)
        #: ``None`` for a loop that only runs the user's calls (:meth:`run_call`).
        self.llm = llm
        self.model = model
        self.ending = ending
        #: The one writer of this loop's events (see eventlog.py); the caller's, which told
        #: the turn's start before the loop took it.
        self._events = events or EventWriter(store, emit)
        self.max_steps = max_steps
        self.budget = budget or ContextBudget()
        self.active_ttl_s = active_ttl_s
        #: What the model's tokens cost (USD per million); ``None``: tokens only, no cost.
        self.price = price
        #: The budgets each model call is reserved against before it is sent; ``None``: no limits.
        self.spending = spending

    # ------------------------------------------------------------------ turns

    async def run(self, turn: Turn, *, rerun: bool = False) -> tuple[TurnSummary, TurnTrace]:
        """Answer ``turn.prompt``, a turn whose start the caller has told; every event is
        persisted before it is emitted."""
        assert self.llm is not None, "a loop without a model runs only the user's calls"
        async with self._turn(turn, rerun=rerun, speaker=self.model) as run:
            team = self.environment.team
            # A context file that could not be read is told once per turn; the turn goes on without it.
            for problem in team.problems if team is not None else ():
                await run.guard("context_file_invalid", f"{team.folder}/{problem}")
            chat = classify(turn.prompt) == "chat"
            if chat:
                await run.guard("chat_mode", "a greeting or a question about the assistant: answered without tools")
            for number in range(1, self.max_steps + 2):
                match await self._model_step(run, number, chat=chat):
                    case Answer(text=text):
                        if not text and run.checked is not None:
                            # Told of its numbers, the model said nothing more: its answer stands.
                            text, run.unanswered, run.message = run.checked, None, None
                        if not chat and number <= self.max_steps and await self._told_unsupported(run, text):
                            continue  # the model answers again, once, knowing which numbers nothing holds
                        run.answer = text
                        break
                    case RunCalls(calls=calls, text=text):
                        if (question := await self._run_calls(run, calls, text)) is not None:
                            # An ambiguous request: the turn ends with the question to the user.
                            run.answer, run.asked = question, True
                            break
            await self._present(run)
        assert run.summary is not None
        return run.summary, run.trace

    async def run_call(
        self, turn: Turn, tool: str, arguments: dict[str, Any], *, rerun: bool = False
    ) -> tuple[TurnSummary, TurnTrace, StepOutcome]:
        """Run ``tool`` with ``arguments`` as the one step of ``turn``, as the user asked;
        every event is persisted before it is emitted, as in :meth:`run`.

        Returns the turn's summary, its trace (for the notebook) and the call's outcome; a
        refused or failed call ends the turn with status ``error`` and its message.
        """
        outcome: StepOutcome | None = None
        async with self._turn(turn, rerun=rerun, speaker=USER_DRIVEN) as run:
            call = normalise(ToolCall(id=new_id("call"), name=tool, arguments=model_json(arguments)))
            # Recorded as a call in the conversation, so the model's next turn sees what was fetched.
            await run.keep({"role": "assistant", "content": None, "tool_calls": [
                {"id": call.id, "type": "function", "function": {"name": tool, "arguments": call.call.arguments}}]})
            run.meter.user_driven()
            outcome = await self.calls.handle(run, call)
            await self._settle(run)
            await run.keep({"role": "tool", "tool_call_id": call.id,
                            "content": model_json(outcome.model_result)})
            await self.environment.settle()
            if outcome.status == "ok":
                run.answer = step_line(tool, outcome)
                await run.enter("presenting")
                await run.emit(AnswerReady(text=run.answer))
                await run.enter("completed")
            else:
                run.fail_step(outcome)
                if run.machine.can_enter("error"):
                    await run.enter("error")
        assert run.summary is not None
        if outcome is None:  # the turn failed before the call had an outcome
            outcome = StepOutcome(status="error", result={"error": run.error or {}})
        return run.summary, run.trace, outcome

    @contextlib.asynccontextmanager
    async def _turn(self, turn: Turn, *, rerun: bool, speaker: str) -> AsyncIterator[TurnRun]:
        """The frame of every turn: its memory opened and its prompt kept, and the first
        state told; on the way out, however the body ends, ``turn_ended`` told (in the words
        of :attr:`ending`) and the turn closed in the store, with its summary in
        ``run.summary``. A failure of the product ends the turn in error; a full or
        read-only workspace, and a stop, end it and go up."""
        run = await self._open(turn, rerun=rerun, speaker=speaker)
        await run.emit(StateChanged(from_state=None, to_state="planning"))
        try:
            await asyncio.to_thread(run.open)
            yield run
        except DiskUnavailable as exc:
            # The workspace cannot be written: record the end if it still can be, then stop
            # (the caller says it in one line).
            with contextlib.suppress(AnalystError):
                await self._end(run, "error", message=str(exc))
            raise
        except AnalystError as exc:
            run.fail(exc)
            with contextlib.suppress(AnalystError):  # the turn already failed: its datasets still load
                await self.environment.settle()
            if run.machine.can_enter("error"):
                await run.enter("error")
        except asyncio.CancelledError:
            # Stopped by the user: everything done so far is kept; the turn is marked.
            await self._end(run, "interrupted", message=None)
            raise
        status = run.end_status()
        await self._end(run, status, message=run.message)
        run.summarize(status, self.environment.artifacts.count(run.turn.thread_id))

    async def _open(self, turn: Turn, *, rerun: bool, speaker: str) -> TurnRun:
        # The turn's memory reads and writes the store (and the source's schema) on every step:
        # in a worker thread, never on the event loop a server's other turns and streams share.
        memory = await asyncio.to_thread(TurnMemory, ThreadMemory(self.store, turn.thread_id), self.environment, turn)
        context = ContextPack(self.environment, memory, budget=self.budget, active_ttl_s=self.active_ttl_s)
        run = TurnRun(turn, self._events, memory, context, speaker=speaker, rerun=rerun,
                      meter=TurnMeter(price=self.price if speaker != USER_DRIVEN else None))
        await run.keep({"role": "user", "content": turn.prompt})
        return run

    async def _end(self, run: TurnRun, status: TurnEndStatus, *,
                   message: str | None) -> None:
        # Steps a cut-off reply had run still get their cost.
        await self._settle(run)
        if status == "completed" and run.final_receipts is not None:
            # The team's definitions the answer's queries followed are its receipts too; the
            # measures they computed that the folder lacks are offered, never saved here.
            run.definitions, run.suggestions = await asyncio.to_thread(
                read_team_definitions, self.environment, run.trace.steps)
        ledger = run.meter.ledger()
        await run.emit(self.ending(run.turn, status, message, counters=run.counters, ledger=ledger,
                                   receipts=run.final_receipts, suggestions=run.suggestions))
        # Ending a turn checkpoints the database (a file sync): off the event loop.
        cited = run.final_receipts or Receipts()
        await asyncio.to_thread(self.store.end_turn, run.turn.turn_id, status, answer=run.answer or None,
                                ledger=ledger, citations=cited.citations, unsupported=cited.unsupported,
                                definitions=cited.definitions)

    async def _settle(self, run: TurnRun) -> None:
        """The steps of the reply that just ran are done: their shares of its model call are
        recorded with them (what a later reuse of them saves)."""
        costs = run.meter.settle()
        if costs:
            await asyncio.to_thread(self.environment.artifacts.set_step_costs, run.turn.thread_id, costs)

    # ------------------------------------------------------------------ the model's steps

    async def _model_step(self, run: TurnRun, number: int, *, chat: bool) -> NextStep:
        """Model call number ``number``: the last one allowed gets no tools and must answer."""
        assert self.llm is not None
        if run.machine.state == "error":
            await run.enter("planning")
        final = number > self.max_steps
        current = run.conversation
        if final:
            await run.guard("step_limit_reached",
                            f"stopped after {how_many(self.max_steps, 'model call')} with tools; asking for an answer")
            run.limited = True
            calls = f"{self.max_steps} model call{'' if self.max_steps == 1 else 's'}"
            run.message = f"the step budget ({calls} with tools) ran out; the answer says what is unfinished"
            # Told in this request only: a request without tools, and no word why, reads as
            # a fault, and its answer as complete.
            current = [*run.conversation, step_budget_note(self.max_steps)]
        messages, usage = await asyncio.to_thread(run.context.messages, number, current, chat=chat)
        await run.emit(usage)
        # The tools that can be used in this turn (no notebook, no read_cells), decided once.
        if run.tools is None and not chat:
            run.tools = await asyncio.to_thread(tool_schemas, self.environment)
        tools = [] if final or chat else run.tools or []
        reservation = None
        if self.spending is not None:
            try:
                reservation = await asyncio.to_thread(self.spending.reserve, run.turn, usage.tokens)
            except BudgetExhausted as exc:
                # No call is sent: the turn ends here, saying which budget, what it spent and when it resets.
                run.exhausted = run.message = exc.message
                return Answer("")
        asked = time.perf_counter()
        run.meter.asked()
        try:
            reply = await self.llm.complete(
                messages, tools, on_text=run.text, on_tool=self._tool_named, on_thinking=run.thinking,
                callable_names=[spec.name for spec in registered()],
            )
        except ModelError as exc:
            await self._spent(reservation, None)
            if exc.reason != "empty_reply":
                raise
            # Nothing, even when asked again: the model's doing, said as such, not a failure of ours.
            run.llm_s += time.perf_counter() - asked
            after = " after its last step" if any(m.get("role") == "tool" for m in run.conversation) else ""
            hint = f" ({exc.hint})" if exc.hint else ""
            run.unanswered = run.message = f"the model replied with nothing{after}, also when asked again{hint}"
            return Answer("")
        run.llm_s += time.perf_counter() - asked
        counted = served_usage(reply.usage)
        tokens = run.meter.call(number, counted, prompt_estimate=usage.tokens, reply_chars=len(reply.text) + sum(
            len(c.name) + len(c.arguments or "") for c in reply.tool_calls))
        await self._spent(reservation, tokens)
        if counted is not None:
            # The estimate told before the call, now with the server's own counts.
            await run.emit(usage.model_copy(update=counted))
        cut = reply.cut_short
        if not reply.tool_calls or final:
            text = reply.text.strip()
            if not text and reply.refusal:
                await run.guard("model_refused", f"the model declined: {reply.refusal}")
                text = f"The model declined to answer: {reply.refusal}"
            elif cut is not None:
                # Never shown as complete: the answer says it was cut, and why.
                await run.guard("answer_cut_short", f"{cut}: the answer may be incomplete")
                text = f"{text}\n\n[incomplete: {cut}]".strip()
            if not text:
                # An empty answer is never an empty success: the turn says what happened.
                if reply.tool_calls:
                    why = "the model kept calling tools after its last step (none were offered) and gave no answer"
                elif any(m.get("role") == "tool" for m in run.conversation):
                    why = "the model replied with nothing after its last step"
                else:
                    why = "the model replied with nothing"
                run.unanswered = run.message = why
            return Answer(text)
        calls = reply.tool_calls if cut is None else [c.model_copy(update={"cut_short": cut}) for c in reply.tool_calls]
        return RunCalls(tuple(normalise(c) for c in calls), reply.text)

    async def _spent(self, reservation: str | None, tokens: Tokens | None) -> None:
        """The reserved call's cost, as the ledger counts it, in place of its estimate."""
        if self.spending is not None and reservation is not None:
            await asyncio.to_thread(self.spending.settle, reservation, tokens)

    def _tool_named(self, name: str) -> None:
        """The model has started a call to ``name``: what the tool needs starts now (the SQL
        checker, which takes a moment to import), instead of when the arguments are in."""
        spec = spec_of(name)
        if spec is not None and spec.named is not None:
            spec.named(self.environment)

    async def _run_calls(self, run: TurnRun, calls: tuple[NormalisedCall, ...], text: str) -> str | None:
        """The calls of one reply, in order; the question to the user one of them asked, if any."""
        await run.keep({"role": "assistant", "content": text or None, "tool_calls": [c.echoed() for c in calls]})
        question = None
        for call in calls:
            # Each call of a reply is judged on its own: one that failed before it left the turn
            # in error, which is planned past here as before the next model call.
            if run.machine.state == "error":
                await run.enter("planning")
            outcome = await self.calls.handle(run, call)
            if outcome.failure is not None:
                run.counters[outcome.failure.reason] += 1
                run.failure = (call.name, outcome.failure)
            elif (run.failure is not None and run.failure[0] == call.name and outcome.status == "ok"
                  and not outcome.reused):
                run.failure = None  # a later step of the same tool ran: the turn recovered
            content = outcome.model_result
            question = content.get("question_for_user") or question
            await run.keep({"role": "tool", "tool_call_id": call.id, "content": model_json(content)})
        await self._settle(run)
        return question

    async def _receipts(self, run: TurnRun, answer: str) -> Receipts:
        """``answer``'s receipts against every result of the thread (read off the event loop),
        kept as the turn's."""
        def made() -> Receipts:
            results = self.store.events(run.turn.thread_id, types=["tool_result"])
            return answer_receipts(answer, results, asked=run.turn.prompt, given=run.context.given())
        found = await asyncio.to_thread(made)
        run.receipts, run.receipts_of = found, answer
        return found

    async def _told_unsupported(self, run: TurnRun, text: str) -> bool:
        """Whether the model, answering ``text``, was just told (once a turn) of the numbers in
        it that no result supports: then its answer and the telling are this turn's last
        messages, and its next reply answers again. Nothing is asked when all are supported."""
        if run.checked is not None or not text or run.unanswered is not None:
            return False
        found = await self._receipts(run, text)
        if not found.unsupported:
            return False
        run.checked = text
        check = answer_check(text, found.unsupported)
        await run.guard("unsupported_claim_flagged", "the answer states numbers no result holds: "
                        + ", ".join(c.text for c in found.unsupported))
        # In this turn's requests only, not the thread's history: the next answer replaces this one.
        run.conversation += [{"role": "assistant", "content": text}, check]
        return True

    async def _present(self, run: TurnRun) -> None:
        """The answer, checked for names that do not exist, shown; the turn completed, or in
        error when a step that was asked for could not run (the answer stands)."""
        # The turn's last datasets are in the kernel before it ends (loaded in the background).
        await self.environment.settle()
        flagged: list[str] = []
        flags = await asyncio.to_thread(check_answer, self.environment, run.memory.state, run.answer)
        if flags:
            flagged = [f.describe() for f in flags]
            await run.guard("invented_name_flagged", "the answer cites names that do not exist: " + "; ".join(flagged))
            run.answer = mark_answer(run.answer, flags)
        if not run.asked:
            await run.remember(run.memory.answered, run.answer)
        # The shown answer's receipts: made again unless they are of this very text (a new
        # answer after the check, names marked since); none for a question or no answer.
        if run.asked or not run.answer:
            run.receipts = None
        elif run.receipts is None or run.receipts_of != run.answer:
            await self._receipts(run, run.answer)
        await run.enter("presenting")
        await run.emit(AnswerReady(text=run.answer, flagged=flagged))
        await run.keep({"role": "assistant", "content": run.answer})
        if run.failure is not None:
            run.fail(run.failure[1])
            await run.enter("error")
        else:
            await run.enter("completed")
