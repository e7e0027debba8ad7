"""One turn of the agent: call the model, guard and run its tool calls, until it answers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections import Counter
from typing import Any, Literal


from ..errors import AnalystError, DiskUnavailable, InvalidArguments, ToolRetry
from ..store import ThreadStore, Turn
from ..events import (
    AnswerReady,
    ArtifactRecorded,
    Event,
    Guarded,
    ReasonCode,
    State,
    StateChanged,
    TextDelta,
    ToolCallStarted,
    ToolResult,
    TurnEnded,
    TurnStarted,
)
from .eventlog import EventSink, EventWriter
from .llm import LLMClient, ToolCall
from ..agent_state import StateDelta
from .modes import classify
from .guards.names import mark_answer
from .context.pack import ContextBudget
from .environment.thread import ThreadEnvironment
from .machine import TurnStateMachine
from .tools import (
    CallContext,
    StepOutcome,
    ToolBox,
    normalize_arguments_verbose,
    registered,
    spec_of,
    tool_schemas,
)
from .memory.thread_memory import TurnMemory
from .turn_record import StepTrace, TurnRun, TurnSummary, TurnTrace

__all__ = ["AgentLoop", "TurnSummary", "TurnTrace"]

log = logging.getLogger(__name__)

#: A function name OpenAI-compatible servers accept in the conversation they are sent back.
_FUNCTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class AgentLoop:
    """Runs turns of one thread against a model and a runtime."""

    def __init__(
        self,
        *,
        store: ThreadStore,
        runtime: ThreadEnvironment,
        llm: LLMClient,
        model: str,
        emit: EventSink | None = None,
        max_steps: int = 16,
        budget: ContextBudget | None = None,
        active_ttl_s: float = 1_800.0,
        events: EventWriter | None = None,
        plan_concurrency: int = 4,
    ) -> None:
        self.store = store
        self.runtime = runtime
        self.tools = ToolBox(runtime)
        self.llm = llm
        self.model = model
        #: The one writer of this loop's events (see eventlog.py); the caller's when the turn
        #: was announced before the loop was made.
        self._events = events or EventWriter(store, emit)
        self.max_steps = max_steps
        self.budget = budget or ContextBudget()
        self.active_ttl_s = active_ttl_s
        #: How many queries of a plan's parallel stage run at once.
        self.plan_concurrency = plan_concurrency

    # ------------------------------------------------------------------ events

    async def emit(self, turn: Turn, event: Event) -> Event:
        """Persist the event (off the event loop, after those before it), then hand it to the sink."""
        return await self._events.append(self._of(turn, event))

    def _text(self, turn: Turn, text: str) -> None:
        """A piece of the model's text: stored and handed on in order, without holding up the stream."""
        self._events.add(self._of(turn, TextDelta(text=text)))

    def _tool_named(self, name: str) -> None:
        """The model has started a call to ``name``: a query is coming, so the SQL checker
        starts now (it takes a moment to import) instead of when the arguments are in; for a
        plan, all its workers, since a plan's queries are checked side by side."""
        spec = spec_of(name)
        if spec is not None and spec.named is not None:
            spec.named(self.runtime)

    @staticmethod
    def _of(turn: Turn, event: Event) -> Event:
        return event.model_copy(update={"thread_id": turn.thread_id, "turn_id": turn.turn_id})

    async def _enter(self, turn: Turn, machine: TurnStateMachine, *states: State) -> None:
        """Move through ``states`` at once (no other step moves the machine in between), then
        tell the moves."""
        moves = [moved for state in states if (moved := machine.enter(state)) is not None]
        for before, after in moves:
            await self.emit(turn, StateChanged(from_state=before, to_state=after))

    async def _guard(
        self, turn: Turn, counters: Counter[str], reason: ReasonCode, message: str, call_id: str | None
    ) -> None:
        counters[reason] += 1
        await self.emit(turn, Guarded(reason=reason, message=message, call_id=call_id))

    # ------------------------------------------------------------------ the turn

    async def run(self, turn: Turn, *, rerun: bool = False, announced: bool = False) -> tuple[TurnSummary, TurnTrace]:
        """Answer ``turn.prompt``; every event is persisted before it is emitted.

        ``announced``: the caller has already emitted the turn's ``turn_started`` (through
        this loop's event writer).
        """
        # The turn's memory reads and writes the store (and the source's schema) on every step:
        # in a worker thread, never on the event loop a server's other turns and streams share.
        memory = await asyncio.to_thread(
            TurnMemory, self.store, self.runtime, turn, budget=self.budget, active_ttl_s=self.active_ttl_s
        )
        run = TurnRun(turn, TurnStateMachine(), memory, rerun)
        machine, counters, trace = run.machine, run.counters, run.trace
        user_message = {"role": "user", "content": turn.prompt}
        await asyncio.to_thread(self.store.append_message, turn.thread_id, turn.turn_id, user_message)
        # This turn's messages; earlier turns come from the context pack.
        conversation = [user_message]

        if not announced:
            await self.emit(turn, TurnStarted(prompt=turn.prompt, model=self.model, rerun=rerun))
        await self.emit(turn, StateChanged(from_state=None, to_state="planning"))
        answer = ""
        flagged: list[str] = []
        error: AnalystError | None = None
        # A step that could not run for a reason the model cannot fix (no kernel, damaged
        # data) fails the turn, unless a later step of the same tool ran: then it recovered.
        failure: tuple[str, AnalystError] | None = None
        started = time.perf_counter()
        llm_s = 0.0
        chat = classify(turn.prompt) == "chat"
        try:
            await asyncio.to_thread(memory.open)
            if chat:
                await self._guard(turn, counters, "chat_mode", "a greeting or a question about the assistant: answered without tools", None)
            for step in range(self.max_steps + 1):
                if machine.state == "error":
                    await self._enter(turn, machine, "planning")
                final_call = step == self.max_steps
                if final_call:
                    await self._guard(
                        turn, counters, "step_limit_reached",
                        f"stopped after {self.max_steps} model calls; asking for an answer", None,
                    )
                messages, usage = await asyncio.to_thread(memory.messages, step + 1, conversation, chat=chat)
                await self.emit(turn, usage)
                asked = time.perf_counter()
                reply = await self.llm.complete(
                    messages,
                    [] if final_call or chat else tool_schemas(),
                    on_text=lambda text: self._text(turn, text),
                    on_tool=self._tool_named,
                )
                llm_s += time.perf_counter() - asked
                if not reply.tool_calls or final_call:
                    answer = reply.text.strip()
                    break
                calls = [self._normalise_call(c) for c in reply.tool_calls]
                assistant = {
                    "role": "assistant",
                    "content": reply.text or None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {"name": _echoed_name(call.name), "arguments": json.dumps(args or {})},
                        }
                        for call, args, _ in calls
                    ],
                }
                await self._remember(turn, conversation, assistant)
                question = None
                for call, args, problem in calls:
                    outcome = await self._handle(run, call, args, problem)
                    if outcome.failure is not None:
                        counters[outcome.failure.reason] += 1
                        failure = (call.name, outcome.failure)
                    elif failure is not None and failure[0] == call.name and outcome.status == "ok" and not outcome.reused:
                        failure = None
                    content = outcome.public_result
                    question = content.get("question_for_user") or question
                    await self._remember(
                        turn,
                        conversation,
                        {"role": "tool", "tool_call_id": call.id, "content": json.dumps(content, default=str)},
                    )
                if question:
                    # An ambiguous request: the turn ends with the question to the user.
                    answer = question
                    break
            # The turn's last datasets are in the kernel before it ends (loaded in the background).
            await self.runtime.settle()
            flags = await asyncio.to_thread(memory.check_answer, answer)
            if flags:
                flagged = [f.describe() for f in flags]
                await self._guard(
                    turn, counters, "invented_name_flagged",
                    "the answer cites names that do not exist: " + "; ".join(flagged), None,
                )
                answer = mark_answer(answer, flags)
            await self._enter(turn, machine, "presenting")
            await self.emit(turn, AnswerReady(text=answer, flagged=flagged))
            await self._remember(turn, conversation, {"role": "assistant", "content": answer})
            if failure is not None:
                # The answer stands, but a step that was asked for could not run: not completed.
                error = failure[1]
                await self._enter(turn, machine, "error")
            else:
                await self._enter(turn, machine, "completed")
        except DiskUnavailable as exc:
            # The workspace cannot be written: record the end if it still can be, then stop
            # (the caller says it in one line).
            with contextlib.suppress(AnalystError):
                await self.emit(turn, TurnEnded(status="error", message=str(exc), counters=dict(counters)))
                await asyncio.to_thread(self.store.end_turn, turn.turn_id, "error", answer=answer or None)
            raise
        except AnalystError as exc:
            error = exc
            with contextlib.suppress(AnalystError):  # the turn already failed: its datasets still load
                await self.runtime.settle()
            if machine.can_enter("error"):
                await self._enter(turn, machine, "error")
        except asyncio.CancelledError:
            # Stopped by the user: everything done so far is kept; the turn is marked.
            await self.emit(
                turn, TurnEnded(status="interrupted", message="cancelled by the user", counters=dict(counters))
            )
            await asyncio.to_thread(self.store.end_turn, turn.turn_id, "interrupted", answer=answer or None)
            raise
        status: Literal["completed", "error"] = "completed" if error is None else "error"
        await self.emit(
            turn,
            TurnEnded(status=status, message=None if error is None else str(error), counters=dict(counters)),
        )
        # Ending a turn checkpoints the database (a file sync): off the event loop.
        await asyncio.to_thread(self.store.end_turn, turn.turn_id, status, answer=answer or None)
        total = self.runtime.artifacts.count(turn.thread_id)
        summary = TurnSummary(
            thread_id=turn.thread_id,
            turn_id=turn.turn_id,
            status=status,
            answer=answer,
            model=self.model,
            transitions=machine.history,
            tool_calls={
                "executed": counters["executed"],
                "reused": counters["reused"],
                "blocked": counters["blocked"],
            },
            artifacts={"created": len(trace.created), "reused": len(trace.reused), "total": total},
            counters=dict(counters),
            timings={"total_s": round(time.perf_counter() - started, 4), "llm_s": round(llm_s, 4)},
            error=None if error is None else error.to_dict(),
        )
        return summary, trace

    async def _remember(self, turn: Turn, conversation: list[dict[str, Any]], message: dict[str, Any]) -> None:
        # Stored off the event loop (a server's other turns share it), before it is used.
        await asyncio.to_thread(self.store.append_message, turn.thread_id, turn.turn_id, message)
        conversation.append(message)

    @staticmethod
    def _normalise_call(call: ToolCall) -> tuple[ToolCall, dict[str, Any] | None, AnalystError | None]:
        """The call's arguments in canonical form, or why the call cannot run; never raises."""
        if spec_of(call.name) is None:
            shown = call.name if len(call.name) <= 80 else f"{call.name[:80]}..."
            known = sorted(spec.name for spec in registered())
            return call, None, InvalidArguments(
                "a tool call without a name" if not call.name else f"unknown tool {shown!r}",
                reason="unknown_tool",
                hint=f"call one of the tools by its name: {', '.join(known)}",
            )
        try:
            args, rescues = normalize_arguments_verbose(call.name, call.arguments)
        except InvalidArguments as exc:
            return call, None, exc
        except Exception as exc:  # noqa: BLE001 - reading the model's arguments must never end the turn
            log.exception("the arguments of %s could not be normalised", call.name)
            return call, None, InvalidArguments(
                f"the arguments could not be read ({type(exc).__name__})",
                hint="send the arguments as one JSON object, as the tool's schema describes",
            )
        if rescues:
            args = {**args, "_rescues": rescues}
        return call, args, None

    # ------------------------------------------------------------------ one call

    async def _handle(
        self, run: TurnRun, call: ToolCall, args: dict[str, Any] | None, problem: AnalystError | None,
        *, in_plan: bool = False,
    ) -> StepOutcome:
        """Guard, plan, run (or reuse) one call and report it; ``in_plan``: a step of a plan,
        which holds the thread's lock for all its steps."""
        turn, machine, counters, trace, turn_keys = run.turn, run.machine, run.counters, run.trace, run.turn_keys

        async def refuse(reason: ReasonCode, error: AnalystError) -> StepOutcome:
            counters["blocked"] += 1
            await self._guard(turn, counters, reason, error.message, call.id)
            outcome = StepOutcome(status="refused", result={"error": error.to_dict()})
            await self.emit(
                turn,
                ToolResult(call_id=call.id, tool=call.name, status="refused", result=outcome.result),
            )
            return outcome

        if problem is not None or args is None:
            assert problem is not None
            return await refuse("unknown_tool" if problem.reason == "unknown_tool" else "invalid_arguments", problem)
        rescues = args.pop("_rescues", [])
        if rescues:
            counters["arguments_normalized"] += 1
        spec = spec_of(call.name)
        assert spec is not None  # an unknown tool is refused as the call is read
        payload = spec.payload if spec.step else None
        if payload and not str(args.get(payload) or "").strip():
            if call.name not in run.empty_retries:
                run.empty_retries.add(call.name)
                counters[f"{call.name}_empty_retry"] += 1
                return await refuse(
                    spec.empty_reason,
                    InvalidArguments(
                        f"{call.name} was called with an empty '{payload}'",
                        reason="empty_payload",
                        hint=f"call {call.name} again with the full {payload} in the '{payload}' argument",
                    ),
                )
            return await refuse(
                "empty_payload_refused",
                InvalidArguments(f"{call.name} was called with an empty '{payload}' again", reason="empty_payload"),
            )
        try:
            # Before anything parses the payload or binds a name: what no analysis could
            # handle, and names that would clobber Python or the kernel, are refused here.
            if spec.check is not None:
                spec.check(args)
        except InvalidArguments as exc:
            return await refuse("invalid_arguments", exc)
        if spec.drive is not None:
            return await spec.drive(_Host(self, run, call, refuse), args)
        invented = await run.remember(run.memory.invented_names, call.name, args)
        if invented is not None:
            return await refuse("unknown_name_refused", invented)
        if not machine.may_run(spec.state, replan=in_plan):
            target = spec.state
            return await refuse(
                "invalid_state",
                AnalystError(
                    f"{call.name} may not run now: the turn is {machine.state} and cannot move to {target}",
                    reason="invalid_state",
                ),
            )

        # The step's logical key; planning it also checks SQL against the schema (off the loop).
        try:
            plan = await self.tools.plan(call.name, args)
        except ToolRetry as exc:
            counters["blocked"] += 1
            counters[exc.reason] += 1
            if exc.reason in ("unknown_table", "unknown_column"):
                await self._guard(turn, counters, "unknown_name_refused", exc.message, call.id)
            outcome = StepOutcome(status="error", result={"error": exc.to_dict()})
            await self.emit(turn, ToolCallStarted(call_id=call.id, tool=call.name, arguments=args))
            await self.emit(
                turn, ToolResult(call_id=call.id, tool=call.name, status="error", result=outcome.result)
            )
            return outcome

        try:
            key = plan.key
            target = spec.state
            if target is not None:
                # A step of a plan after one of its steps failed: planned again, then run.
                replan: tuple[State, ...] = ("planning",) if in_plan and machine.state == "error" else ()
                await self._enter(turn, machine, *replan, target)
            await self.emit(turn, ToolCallStarted(call_id=call.id, tool=call.name, arguments=args, step_key=key))
            ctx = CallContext(thread_id=turn.thread_id, turn_id=turn.turn_id, call_id=call.id, rerun=run.rerun)

            earlier = turn_keys.get(key) if key else None
            record = None if earlier is not None else self.tools.recorded(ctx, key)
            if earlier is not None or record is not None:
                await plan.drop()  # nothing to run: a run that started early is stopped now
                outcome = self.tools.reuse(record) if record is not None else earlier.as_reused()
                counters["reused"] += 1
                await self._guard(
                    turn, counters, "duplicate_tool_call_skipped",
                    f"identical {call.name} step already done; its recorded result is returned", call.id,
                )
                # What a reused step made is what its names hold now, as if it had run.
                if spec.reused is not None:
                    await spec.reused(self.runtime, args, outcome)
            else:
                async with contextlib.nullcontext() if in_plan else self.runtime.lock:
                    outcome = await self.tools.call(call.name, args, ctx, plan)
                counters["executed"] += 1
                if key is not None and outcome.status == "ok":
                    turn_keys[key] = outcome
        finally:
            # A run of the SQL started while it was checked is dropped unless the call took it
            # (the step was reused, or the turn stopped before it ran).
            await plan.drop()

        verdict = await run.remember(
            run.memory.record_step, tool=call.name, call_id=call.id, arguments=args, outcome=outcome
        )
        if verdict is not None:
            outcome.result["expectation"] = {"status": verdict.status, "rule": verdict.rule, "detail": verdict.detail}
            if verdict.status == "failed":
                await self._guard(
                    turn, counters, "expectation_failed", f"{call.name} {call.id}: {verdict.detail}", call.id
                )

        for artifact, created in outcome.artifacts:
            if created:
                trace.created.add(artifact.artifact_id)
            else:
                trace.reused.add(artifact.artifact_id)
                if not outcome.reused:
                    await self._guard(
                        turn, counters, "duplicate_artifact_prevented",
                        f"{artifact.name} has the same content as artifact {artifact.artifact_id}; not stored again",
                        call.id,
                    )
            await self.emit(
                turn,
                ArtifactRecorded(
                    artifact_id=artifact.artifact_id,
                    name=artifact.name,
                    artifact_type=artifact.type,
                    fingerprint=artifact.fingerprint,
                    created=created,
                    call_id=call.id,
                ),
            )
        if outcome.status == "error" and target is not None:
            await self._enter(turn, machine, "error")
        await self.emit(
            turn,
            ToolResult(
                call_id=call.id,
                tool=call.name,
                status=outcome.status,
                reused=outcome.reused,
                result=outcome.public_result,
                artifact_ids=outcome.artifact_ids,
                duration_s=outcome.duration_s,
            ),
        )
        if spec.step:
            trace.steps.append(StepTrace(call.id, call.name, args, outcome, machine.state))
        return outcome


def _echoed_name(name: str) -> str:
    """The name a call is echoed under in the conversation sent back to the model.

    Servers refuse a conversation whose calls have an empty or malformed function name, so
    such a call is echoed under a placeholder; its tool message says what was wrong.

    >>> _echoed_name("run_sql"), _echoed_name(""), _echoed_name("no such tool")
    ('run_sql', 'invalid_tool_name', 'invalid_tool_name')
    """
    return name if _FUNCTION_NAME.fullmatch(name) else "invalid_tool_name"


class _Host:
    """What a tool that runs its own course (``clarify``, ``plan``) is given: this call,
    the turn's counters and state, and the pipeline's own moves (see tools/contract.py)."""

    def __init__(self, loop: AgentLoop, run: TurnRun, call: ToolCall, refuse: Any) -> None:
        self._loop = loop
        self._run = run
        self.call = call
        self.counters = run.counters
        self.concurrency = loop.plan_concurrency
        self.lock = loop.runtime.lock
        self.refuse = refuse

    @property
    def state(self) -> State:
        return self._run.machine.state

    async def emit(self, event: Event) -> Event:
        return await self._loop.emit(self._run.turn, event)

    async def guard(self, reason: ReasonCode, message: str) -> None:
        await self._loop._guard(self._run.turn, self._run.counters, reason, message, self.call.id)

    async def remember(self, delta: StateDelta) -> None:
        await self._run.remember(self._run.memory.apply, delta, "tool")

    async def step(self, call: ToolCall, arguments: dict[str, Any]) -> StepOutcome:
        return await self._loop._handle(self._run, call, arguments, None, in_plan=True)
