"""One tool call through the pipeline every call takes, the model's and the user's alike.

In DESIGN decision 4's order: the call is read (its arguments brought to canonical form),
its payload checked, the names it reads checked, the turn's state checked; then it is
planned (its logical key; SQL is checked against the schema here), reused or run, and
recorded (its expectation checked, its artifacts and result told, its step kept for the
notebook). A call that fails a guard is refused with a reason code and never runs.

A tool whose spec drives the call itself (``clarify``, ``plan``) takes over after the
payload check, through a :class:`~.tools.CallHost`; a plan's steps come back through
:meth:`CallPipeline.handle` one by one.
"""

from __future__ import annotations

import contextlib
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._text import model_json
from ..errors import AnalystError, InvalidArguments, ToolRetry
from ..events import (
    ArtifactRecorded,
    Event,
    ReasonCode,
    State,
    ToolCallStarted,
    ToolResult,
)
from .guards import Refusal, invented_names, payload_refusal, state_refusal, unreadable
from .llm import ToolCall
from .spec import CallContext, StepOutcome, StepPlan, ToolSpec, registered, spec_of
from .tools import ToolBox, normalize_arguments_verbose
from .turn_record import StepTrace, TurnRun

if TYPE_CHECKING:
    from ..agent_state import StateDelta
    from ..artifacts import StepRecord
    from .environment import ThreadEnvironment

log = logging.getLogger(__name__)

#: A function name OpenAI-compatible servers accept in the conversation they are sent back.
_FUNCTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class NormalisedCall:
    """A tool call as read: its arguments in canonical form, or why it cannot run."""

    call: ToolCall
    arguments: dict[str, Any] | None
    problem: AnalystError | None = None
    rescues: tuple[str, ...] = ()
    """What the normaliser had to rescue (``alias:query``, ``nested:arguments``...)."""

    @property
    def id(self) -> str:
        return self.call.id

    @property
    def name(self) -> str:
        return self.call.name

    def echoed(self) -> dict[str, Any]:
        """The call as it is sent back to the model in the conversation: its canonical
        arguments, under a name servers accept; a call the model can copy as it stands (no
        marker of what was rescued, which a model would copy into its next calls)."""
        return {"id": self.id, "type": "function",
                "function": {"name": echoed_name(self.name), "arguments": model_json(dict(self.arguments or {}))}}


def normalise(call: ToolCall) -> NormalisedCall:
    """The call's arguments in canonical form, or why the call cannot run; never raises."""
    if spec_of(call.name) is None:
        shown = call.name if len(call.name) <= 80 else f"{call.name[:80]}..."
        known = ", ".join(sorted(spec.name for spec in registered()))
        return NormalisedCall(call, None, InvalidArguments(
            "a tool call without a name" if not call.name else f"unknown tool {shown!r}",
            reason="unknown_tool",
            hint=f"call one of the tools by its name: {known}",
        ))
    try:
        args, rescues = normalize_arguments_verbose(call.name, call.arguments)
    except InvalidArguments as exc:
        if call.cut_short is not None:
            # Not a malformed call: the reply ran out before the call was whole.
            exc = InvalidArguments(
                f"the call was cut off before its arguments were complete: {call.cut_short}",
                reason=exc.reason,
                hint="send a shorter call (less SQL or code at once), or split the work into several calls",
            )
        return NormalisedCall(call, None, exc)
    except Exception as exc:  # noqa: BLE001 - reading the model's arguments must never end the turn
        log.exception("the arguments of %s could not be normalised", call.name)
        return NormalisedCall(call, None, InvalidArguments(
            f"the arguments could not be read ({type(exc).__name__})",
            hint="send the arguments as one JSON object, as the tool's schema describes",
        ))
    return NormalisedCall(call, args, rescues=tuple(rescues))


def echoed_name(name: str) -> str:
    """The name a call is echoed under in the conversation sent back to the model.

    Servers refuse a conversation whose calls have an empty or malformed function name, so
    such a call is echoed under a placeholder; its tool message says what was wrong.

    >>> echoed_name("run_sql"), echoed_name(""), echoed_name("no such tool")
    ('run_sql', 'invalid_tool_name', 'invalid_tool_name')
    """
    return name if _FUNCTION_NAME.fullmatch(name) else "invalid_tool_name"


class CallPipeline:
    """Guards, plans, reuses or runs, and records the tool calls of one thread's turns."""

    def __init__(self, environment: ThreadEnvironment, *, plan_concurrency: int = 4) -> None:
        self.environment = environment
        self.tools = ToolBox(environment)
        #: How many queries of a plan's parallel stage run at once.
        self.plan_concurrency = plan_concurrency

    async def handle(self, run: TurnRun, call: NormalisedCall, *, in_plan: bool = False) -> StepOutcome:
        """One call, start to end; ``in_plan``: a step of a plan, which holds the thread's
        lock for all its steps."""
        if call.problem is not None or call.arguments is None:
            assert call.problem is not None
            return await self._refuse(run, call, unreadable(call.problem))
        spec, args = spec_of(call.name), call.arguments
        assert spec is not None  # an unknown tool is refused as the call is read
        if call.rescues:
            run.counters["arguments_normalized"] += 1
        if (refusal := payload_refusal(spec, args, run.empty_retries, run.counters)) is not None:
            return await self._refuse(run, call, refusal)
        if spec.drive is not None:
            return await spec.drive(_Host(self, run, call), args)
        invented = await run.remember(invented_names, self.environment, call.name, args)
        if invented is not None:
            return await self._refuse(run, call, Refusal("unknown_name_refused", invented))
        if (refusal := state_refusal(run.machine, spec, in_plan=in_plan)) is not None:
            return await self._refuse(run, call, refusal)
        # The step's logical key; planning it also checks SQL against the schema (off the loop).
        try:
            plan = await self.tools.plan(call.name, args)
        except ToolRetry as exc:
            return await self._plan_refused(run, call, exc)
        outcome = await self._reuse_or_run(run, call, spec, plan, in_plan=in_plan)
        await self._record(run, call, spec, outcome)
        return outcome

    async def _refuse(self, run: TurnRun, call: NormalisedCall, refusal: Refusal) -> StepOutcome:
        run.counters["blocked"] += 1
        await run.guard(refusal.reason, refusal.error.message, call.id)
        outcome = StepOutcome(status="refused", result={"error": refusal.error.to_dict()})
        # Every call has its result event, refused ones too.
        await run.emit(ToolResult(call_id=call.id, tool=call.name, status="refused", result=outcome.result))
        return outcome

    async def _plan_refused(self, run: TurnRun, call: NormalisedCall, exc: ToolRetry) -> StepOutcome:
        """Refused while it was planned (SQL the checker refused): an error the model can fix."""
        run.counters["blocked"] += 1
        run.counters[exc.reason] += 1
        if exc.reason in ("unknown_table", "unknown_column"):
            await run.guard("unknown_name_refused", exc.message, call.id)
        outcome = StepOutcome(status="error", result={"error": exc.to_dict()})
        await run.emit(ToolCallStarted(call_id=call.id, tool=call.name, arguments=call.arguments))
        await run.emit(ToolResult(call_id=call.id, tool=call.name, status="error", result=outcome.result))
        return outcome

    async def _reuse_or_run(
        self, run: TurnRun, call: NormalisedCall, spec: ToolSpec, plan: StepPlan, *, in_plan: bool
    ) -> StepOutcome:
        args, key = call.arguments or {}, plan.key
        try:
            if spec.state is not None:
                # A step of a plan after one of its steps failed: planned again, then run.
                replan: tuple[State, ...] = ("planning",) if in_plan and run.machine.state == "error" else ()
                await run.enter(*replan, spec.state)
            await run.emit(ToolCallStarted(call_id=call.id, tool=call.name, arguments=args, step_key=key))
            ctx = CallContext(thread_id=run.turn.thread_id, turn_id=run.turn.turn_id, call_id=call.id, rerun=run.rerun,
                              emit=run.emit)
            earlier = run.turn_keys.get(key) if key else None
            record = None if earlier is not None else self.tools.recorded(ctx, key)
            if earlier is not None or record is not None:
                return await self._reuse(run, call, spec, plan, record, earlier)
            async with contextlib.nullcontext() if in_plan else self.environment.lock:
                outcome = await self.tools.call(call.name, args, ctx, plan)
            run.counters["executed"] += 1
            if key is not None and outcome.status == "ok":
                run.turn_keys[key] = outcome
            if spec.step:
                run.meter.ran(key if outcome.status == "ok" else None, call.id, outcome)
            return outcome
        finally:
            # A run of the SQL started while it was checked is dropped unless the call took it
            # (the step was reused, or the turn stopped before it ran).
            await plan.drop()

    async def _reuse(
        self, run: TurnRun, call: NormalisedCall, spec: ToolSpec, plan: StepPlan,
        record: StepRecord | None, earlier: StepOutcome | None,
    ) -> StepOutcome:
        """A step done before (in this thread, or earlier in this turn): its recorded result."""
        await plan.drop()  # nothing to run: a run that started early is stopped now
        outcome = self.tools.reuse(record) if record is not None else earlier.as_reused()  # type: ignore[union-attr]
        run.counters["reused"] += 1
        if spec.step:
            # What it saved is what the step it reuses cost when it ran.
            run.meter.reused(record if record is not None else earlier)  # type: ignore[arg-type]
        await run.guard(
            "duplicate_tool_call_skipped",
            f"identical {call.name} step already done; its recorded result is returned", call.id,
        )
        # What a reused step made is what its names hold now, as if it had run.
        if spec.reused is not None:
            await spec.reused(self.environment, call.arguments or {}, outcome)
        return outcome

    async def _record(self, run: TurnRun, call: NormalisedCall, spec: ToolSpec, outcome: StepOutcome) -> None:
        """The result kept: what it establishes in the agent state and its expectation's
        verdict, its artifacts and result told, the step kept for the notebook."""
        args = call.arguments or {}
        verdict = await run.remember(
            run.memory.record_step, tool=call.name, call_id=call.id, arguments=args, outcome=outcome
        )
        if verdict is not None:
            outcome.result["expectation"] = {"status": verdict.status, "rule": verdict.rule, "detail": verdict.detail}
            if verdict.status == "failed":
                await run.guard("expectation_failed", f"{call.name} {call.id}: {verdict.detail}", call.id)
        await self._tell_artifacts(run, call, outcome)
        if outcome.status == "error" and spec.state is not None:
            await run.enter("error")
        await run.emit(ToolResult(
            call_id=call.id, tool=call.name, status=outcome.status, reused=outcome.reused,
            result=outcome.public_result, artifact_ids=outcome.artifact_ids, duration_s=outcome.duration_s,
        ))
        if spec.step:
            run.trace.steps.append(StepTrace(call.id, call.name, args, outcome, run.machine.state))

    async def _tell_artifacts(self, run: TurnRun, call: NormalisedCall, outcome: StepOutcome) -> None:
        for artifact, created in outcome.artifacts:
            if created:
                run.trace.created.add(artifact.artifact_id)
            else:
                run.trace.reused.add(artifact.artifact_id)
                if not outcome.reused:
                    await run.guard(
                        "duplicate_artifact_prevented",
                        f"{artifact.name} has the same content as artifact {artifact.artifact_id}; not stored again",
                        call.id,
                    )
            await run.emit(ArtifactRecorded(
                artifact_id=artifact.artifact_id, name=artifact.name, artifact_type=artifact.type,
                fingerprint=artifact.fingerprint, created=created, call_id=call.id,
            ))


class _Host:
    """What a tool that runs its own course (``clarify``, ``plan``) is given: its call, the
    turn's counters and state, and the pipeline's own moves (see spec/contract.py)."""

    def __init__(self, pipeline: CallPipeline, run: TurnRun, call: NormalisedCall) -> None:
        self._pipeline = pipeline
        self._run = run
        self._call = call
        self.call = call.call
        self.counters = run.counters
        self.turn_number = run.turn.number
        self.concurrency = pipeline.plan_concurrency
        self.lock = pipeline.environment.lock

    @property
    def state(self) -> State:
        return self._run.machine.state

    async def emit(self, event: Event) -> Event:
        return await self._run.emit(event)

    async def guard(self, reason: ReasonCode, message: str) -> None:
        await self._run.guard(reason, message, self.call.id)

    async def refuse(self, reason: ReasonCode, error: AnalystError) -> StepOutcome:
        return await self._pipeline._refuse(self._run, self._call, Refusal(reason, error))

    async def remember(self, delta: StateDelta) -> None:
        await self._run.remember(self._run.memory.apply, delta, "tool")

    async def step(self, call: ToolCall, arguments: dict[str, Any]) -> StepOutcome:
        return await self._pipeline.handle(self._run, NormalisedCall(call, arguments), in_plan=True)
