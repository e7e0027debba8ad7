"""How a tool call becomes a step: planned, reused or run, and recorded.

A step is identified by its logical key (tool, canonical arguments, input fingerprints,
source data version). A step whose key was already executed in this thread is *reused*:
its recorded result is returned and nothing runs or is stored again, unless the user asked
to rerun. What each tool does is its spec's (see contract.py).
"""

from __future__ import annotations

import inspect
import time
from typing import TYPE_CHECKING, Any

from ..._clock import utc_now
from ...artifacts import StepRecord
from ...errors import AnalystError, DiskUnavailable, InvalidArguments, ToolRetry
from ..spec import spec_of
from ..spec import CallContext, StepOutcome, StepPlan, without_verdict

if TYPE_CHECKING:
    from ..environment import ThreadEnvironment


class ToolBox:
    """Executes tool calls for one thread, reusing recorded steps."""

    def __init__(self, environment: ThreadEnvironment) -> None:
        self.environment = environment

    @property
    def artifacts(self) -> Any:
        return self.environment.artifacts

    async def plan(self, tool: str, args: dict[str, Any]) -> StepPlan:
        """The step's plan: its logical key (``None`` for tools that are not steps, never reused).

        Raises:
            ToolRetry: the call is refused while it is planned (SQL the checker refuses,
                code too complex to key).
        """
        spec = spec_of(tool)
        if spec is None or spec.plan is None:
            return StepPlan()
        return await spec.plan(self.environment, args)

    def recorded(self, ctx: CallContext, key: str | None) -> StepRecord | None:
        """The earlier step with this key, if reuse is allowed."""
        if key is None or ctx.rerun:
            return None
        return self.artifacts.find_step(ctx.thread_id, key)

    def reuse(self, record: StepRecord) -> StepOutcome:
        """The outcome of a step that is not run again."""
        arts = [(self.artifacts.get(a), False) for a in record.artifact_ids]
        result = {**without_verdict(record.result), "reused": True}
        return StepOutcome(
            status=record.status,
            result=result,
            reused=True,
            step_key=record.step_key,
            artifacts=arts,
            notebook_outputs=list(record.result.get("_notebook", [])),
        )

    async def call(self, tool: str, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
        """Run one (already normalised, guarded and planned) tool call."""
        key = plan.key
        spec = spec_of(tool)
        # A run that started while the call was planned counts from its own start.
        started = plan.early.started if plan.early is not None else time.perf_counter()
        try:
            if spec is None or spec.run is None:
                raise InvalidArguments(f"unknown tool {tool!r}", reason="unknown_tool")
            outcome = spec.run(self.environment, args, ctx, plan)
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except ToolRetry as exc:
            outcome = StepOutcome(status="error", result={"error": exc.to_dict()}, step_key=key)
        except DiskUnavailable:
            raise  # a read-only or full workspace ends the turn; the model cannot help it
        except AnalystError as exc:
            outcome = StepOutcome(status="error", result={"error": exc.to_dict()}, step_key=key, failure=exc)
        outcome.duration_s = time.perf_counter() - started
        if key is not None and spec is not None and spec.step and outcome.status == "ok":
            self.artifacts.record_step(
                StepRecord(
                    thread_id=ctx.thread_id,
                    step_key=key,
                    tool=tool,
                    call_id=ctx.call_id,
                    turn_id=ctx.turn_id,
                    arguments=args,
                    status=outcome.status,
                    result={**outcome.result, "_notebook": outcome.notebook_outputs},
                    artifact_ids=outcome.artifact_ids,
                    created_at=utc_now(),
                    duration_s=outcome.duration_s,
                )
            )
        return outcome
