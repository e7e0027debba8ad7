"""The ``plan`` tool: a checked staged plan (see staged_plan.py), run step by step.

Stages run in order. A ``parallel`` stage starts its queries together, at most
``concurrency`` at a time, each on its own cursor or connection (see sql/query_runner.py), then
runs its Python steps one after another: the thread has one kernel. A ``sequence`` stage
runs its steps in the order given. Each step is a call of its own (its own call id
``<plan call>.<step id>``, its own events, its own reuse by step key), run by the loop's
``run_step``. A step that fails fails the steps that need it, directly or through others:
they are skipped, never run on missing inputs; steps that do not need it still run.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..._text import model_json
from ...errors import AnalystError, InvalidArguments
from ...events import (
    PlanMade,
    PlanStageView,
    PlanStepChanged,
    PlanStepView,
    ToolCallStarted,
    ToolResult,
)
from ..llm import ToolCall
from ..spec import CallHost, ToolSpec, failed_mark
from ..spec import StepOutcome
from .run_python import RUN_PYTHON
from .run_sql import RUN_SQL
from .result_models import ResultModel
from .staged_plan import PlanStep, StagedPlan, read_plan

#: A step's status as the plan reports it.
PlanStepStatus = Literal["pending", "running", "ok", "error", "refused", "skipped"]

RunStep = Callable[[ToolCall, dict[str, Any]], Awaitable[StepOutcome]]
OnStep = Callable[["StepReport"], Awaitable[None]]


@dataclass
class StepReport:
    """Where one step of a plan stands."""

    step: PlanStep
    call_id: str
    status: PlanStepStatus = "pending"
    outcome: StepOutcome | None = None
    missing: list[str] = field(default_factory=list)
    """For a skipped step: the steps it needed that did not succeed."""

    @property
    def message(self) -> str | None:
        """Why the step did not succeed, in one line."""
        if self.status == "skipped":
            return f"not run: it needs {', '.join(repr(m) for m in self.missing)}, which did not succeed"
        if self.outcome is not None and self.status in ("error", "refused"):
            error = self.outcome.result.get("error")
            if isinstance(error, dict):
                return str(error.get("message") or "")[:500] or None
        return None

    def does(self) -> str:
        """What the step does, in a few words: for a Python step that ran, what it made (a
        code's first line says little), else the step's own summary.

        >>> step = PlanStep(id="c1", tool="run_python", arguments={"code": "fig, ax = plt.subplots()"})
        >>> made = StepOutcome(status="ok", result={"artifacts": [{"id": "art_1", "name": "JFK vs LGA", "type": "image"}]})
        >>> StepReport(step, "call_7.c1", status="ok", outcome=made).does()
        'python → image "JFK vs LGA"'
        >>> StepReport(step, "call_7.c1", status="ok", outcome=StepOutcome(status="ok", result={"stdout": "4"})).does()
        'python → printed output'
        """
        result = self.outcome.result if self.outcome is not None else {}
        kind = self.step.kind
        if not kind.is_query and isinstance(result, dict):
            made = [a for a in result.get("artifacts") or () if isinstance(a, dict)]
            if made:
                shown = (f'{a.get("type")} "{str(a.get("name"))[:80]}"' for a in made[:4])
                return f"{kind.language} → " + ", ".join(shown)
            if result.get("stdout"):
                return f"{kind.language} → printed output"
        return self.step.summary()

    def public(self, number: int) -> dict[str, Any]:
        """The step as the model is told it: its number in the plan, its own id and what it
        does (the dataset a query makes). Never its call id (``<plan call>.<step id>``): no
        tool takes one, and the model refers to a step by the id it gave it.

        >>> step = PlanStep(id="q1", tool="run_sql", arguments={"sql": "SELECT 1", "name": "first"})
        >>> StepReport(step, "call_7.q1", status="skipped", missing=["q0"]).public(2)
        {'step': 2, 'id': 'q1', 'tool': 'run_sql', 'does': 'query → first', 'status': 'skipped', 'not_run_because': ['q0']}
        """
        out: dict[str, Any] = {"step": number, "id": self.step.id, "tool": self.step.tool,
                               "does": self.does(), "status": self.status}
        if self.outcome is not None:
            out["result"] = self.outcome.model_result  # says ``reused`` itself
        if self.missing:
            out["not_run_because"] = self.missing
        return out


def step_call_id(plan_call_id: str, step_id: str) -> str:
    """The call id of a plan's step.

    >>> step_call_id("call_7", "q1")
    'call_7.q1'
    """
    return f"{plan_call_id}.{step_id}"


async def run_plan(
    plan: StagedPlan, *, call_id: str, run_step: RunStep, on_step: OnStep, concurrency: int = 4
) -> list[StepReport]:
    """Run ``plan``'s steps, stage by stage; every step's report, in plan order.

    ``on_step`` is told when a step starts and when it ends (or is skipped). A failure the
    model cannot fix (a full disk) or a stop ends the plan there: the stage's other queries
    are stopped, and the error goes up.
    """
    reports = {s.id: StepReport(s, step_call_id(call_id, s.id)) for s in plan.steps()}
    limit = asyncio.Semaphore(max(1, concurrency))

    async def run(report: StepReport) -> None:
        missing = [i for i in report.step.inputs if reports[i].status != "ok"]
        if missing:
            report.status, report.missing = "skipped", missing
            await on_step(report)
            return
        async with limit:
            report.status = "running"
            await on_step(report)
            call = ToolCall(id=report.call_id, name=report.step.tool, arguments=model_json(report.step.arguments))
            report.outcome = await run_step(call, dict(report.step.arguments))
            report.status = report.outcome.status
        await on_step(report)

    for stage in plan.stages:
        queries = [reports[s.id] for s in stage.in_order() if stage.mode == "parallel" and s.kind.is_query]
        if queries:
            # A task group: when one query ends the plan (a stop, a full disk), the others are stopped too.
            async with asyncio.TaskGroup() as group:
                for report in queries:
                    group.create_task(run(report))
        for step in stage.in_order():
            if reports[step.id] not in queries:
                await run(reports[step.id])
    return list(reports.values())


def plan_outcome(reports: list[StepReport], started: float) -> StepOutcome:
    """The ``plan`` call's own outcome: each step's result, and ``ok`` only when every step
    succeeded. A failure the model cannot fix in any step is the plan's failure. What the
    steps made is their own calls' (their events and artifacts), not counted again here."""
    failed = [r for r in reports if r.status != "ok"]
    result: dict[str, Any] = {
        "steps": [r.public(n) for n, r in enumerate(reports, start=1)],
        "succeeded": len(reports) - len(failed),
        "failed": len([r for r in failed if r.status != "skipped"]),
        "skipped": len([r for r in failed if r.status == "skipped"]),
    }
    if failed:
        result["note"] = ("steps that did not succeed are listed with their error; steps that needed them were not "
                          "run. Fix the failed step with a single call (or a smaller plan), then run what it feeds.")
    failure: AnalystError | None = next(
        (r.outcome.failure for r in reversed(reports) if r.outcome is not None and r.outcome.failure is not None), None)
    return StepOutcome(
        status="error" if failed else "ok", result=result, reused=bool(reports) and all(
            r.outcome is not None and r.outcome.reused for r in reports),
        duration_s=time.perf_counter() - started, failure=failure,
    )


async def run_staged_plan(host: CallHost, args: dict[str, Any]) -> StepOutcome:
    """Check a staged plan whole, then run it: each step as the same call made alone would
    be; the thread's lock is held for the whole plan."""
    call = host.call
    try:
        plan, rescues = read_plan(args)
        refusal = plan.refusal_from(host.state)
        if refusal is not None:
            raise refusal
    except InvalidArguments as exc:
        return await host.refuse("plan_refused", exc)
    if rescues:
        host.counters["arguments_normalized"] += 1
    started = time.perf_counter()
    await host.emit(ToolCallStarted(call_id=call.id, tool=call.name, arguments=args))
    await host.emit(PlanMade(call_id=call.id, goal=plan.goal, stages=[
        PlanStageView(mode=stage.mode, steps=[
            PlanStepView(id=s.id, call_id=step_call_id(call.id, s.id), tool=s.tool, summary=s.summary(),
                         inputs=s.inputs)
            for s in stage.in_order()])
        for stage in plan.stages]))

    async def changed(report: StepReport) -> None:
        await host.emit(PlanStepChanged(
            call_id=call.id, step_id=report.step.id, step_call_id=report.call_id,
            status=report.status,  # type: ignore[arg-type]
            reused=report.outcome is not None and report.outcome.reused, message=report.message))

    async with host.lock:
        reports = await run_plan(plan, call_id=call.id, run_step=host.step, on_step=changed,
                                 concurrency=host.concurrency)
    outcome = plan_outcome(reports, started)
    host.counters["plan_steps"] += len(reports)
    await host.emit(ToolResult(call_id=call.id, tool=call.name, status=outcome.status,
                               reused=outcome.reused, result=outcome.public_result,
                               duration_s=outcome.duration_s))
    return outcome


# ------------------------------------------------------------------ what its result means

def _summarized(args: Mapping[str, Any]) -> str:
    """``plan "monthly delays": q1, c1``: its goal and its steps' ids."""
    stages = args.get("stages") if isinstance(args.get("stages"), list) else [{"steps": args.get("steps") or []}]
    ids = [str(step.get("id")) for stage in stages if isinstance(stage, dict)
           for step in stage.get("steps") or () if isinstance(step, dict)]
    goal = f" {json.dumps(str(args['goal'])[:120], ensure_ascii=False)}" if args.get("goal") else ""
    return f"plan{goal}: {', '.join(ids[:16])}"


def _finished(args: Mapping[str, Any], result: Mapping[str, Any]) -> list[str]:
    """Each of its steps that ran, as a step of the turn: its tool and id, and whether it failed."""
    steps = result.get("steps")
    if not isinstance(steps, list):
        return ["plan" + failed_mark(result)]
    return [f"{step.get('tool')} {step.get('id')} of the plan"
            + (" (failed)" if step.get("status") not in ("ok", None) else "")
            for step in steps if isinstance(step, dict) and step.get("status") != "skipped"]
class PlanStepResult(ResultModel):
    """One step of a plan as the model is told it (:meth:`StepReport.public`)."""

    step: int
    """Its number in the plan, from 1."""
    id: str
    tool: str
    does: str
    status: PlanStepStatus
    result: dict[str, Any] | None = None
    """The step's own result as the model was sent it (shown.py's view: a dataset's rows as
    lists), or its error; its own ``tool_result`` event has it whole."""
    not_run_because: list[str] | None = None


class PlanResult(ResultModel):
    """Each step's result and the counts; a plan with a step that did not succeed is an ``error``."""

    steps: list[PlanStepResult]
    succeeded: int
    failed: int
    skipped: int
    note: str | None = None


PLAN = ToolSpec(
    name="plan",
    description="Several run_sql/run_python steps in one call, checked before any runs. Stages run in order; a "
                "'parallel' stage's steps are independent, a 'sequence' stage's run in turn. "
                "A failed step skips only the steps needing it.",
    properties={
        "goal": {"type": "string", "description": "what the plan is for"},
        "stages": {
            "type": "array", "maxItems": 8, "description": "at most 16 steps in all",
            "items": {
                "type": "object",
                "properties": {
                    "mode": {"type": "string", "enum": ["parallel", "sequence"]},
                    "steps": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "id": {"type": "string", "description": "unique, e.g. q1"},
                                "tool": {"type": "string", "enum": [RUN_SQL.name, RUN_PYTHON.name]},
                                "arguments": {"type": "object", "description": "the tool's arguments"},
                                "inputs": {"type": "array", "items": {"type": "string"},
                                           "description": "ids of earlier steps it needs"},
                            },
                            "required": ["id", "tool", "arguments"],
                        },
                    },
                },
                "required": ["mode", "steps"],
            },
        },
    },
    required=("stages",),
    extra_keys=frozenset({"steps"}),  # steps sent without stages are staged by their inputs
    drive=run_staged_plan,
    # A plan's queries are checked side by side: all the checker's workers start now.
    named=lambda env: env.warm_sql(side_by_side=True),
    summarized=_summarized,
    finished=_finished,
    result_model=PlanResult,
)
