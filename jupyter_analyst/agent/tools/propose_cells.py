"""The ``propose_cells`` tool: cells the model suggests for the user's attached notebook.

Nothing in the notebook changes here (DESIGN decision 14). Each change names its cell by id
from the outline and keeps a digest of the source the model was shown, so a change is
applied later only while the cell still holds it. Each proposed code cell runs first in the
thread's sandboxed kernel exactly as a Python step does (the same payload check, the same
sandbox, the same step key and inventory), so a person sees real outputs before deciding; a
proposal with a failing cell is kept as failed. The proposal is kept in the thread's store,
where the server and the CLI apply a person's decisions.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..._clock import new_id, utc_now
from ...artifacts import Artifact
from ...errors import AnalystError, ConfigError, InvalidArguments
from ...step_kinds import CODE_STEP
from ..spec import CallContext, StepOutcome, StepPlan, ToolSpec, clip, spec_of
from .result_models import ResultModel
from .toolbox import ToolBox

if TYPE_CHECKING:
    from ...notebooks import ProposedRun
    from ..environment import ThreadEnvironment

#: What the model is told of a proposed cell's printed output.
_SHOWN_CHARS = 600


def _notebook_content(env: ThreadEnvironment) -> dict[str, Any]:
    attached = env.attached
    if attached is None:
        raise InvalidArguments("no notebook is attached to this conversation, so there is nothing to propose cells "
                               "for", reason="no_notebook", hint="answer with run_python steps instead")
    if attached.problem:
        raise InvalidArguments(f"the attached notebook {attached.path} cannot be read: {attached.problem}",
                               reason="no_notebook", hint="answer with run_python steps instead")
    return attached.content


async def propose_cells(env: ThreadEnvironment, args: dict[str, Any], ctx: CallContext, plan: StepPlan) -> StepOutcome:
    from ...notebooks import Proposal, read_changes, stale

    content = _notebook_content(env)
    if env.proposals is None:
        raise InvalidArguments("proposals cannot be kept in this conversation", reason="no_notebook",
                               hint="answer with run_python steps instead")
    try:
        changes = read_changes(content, args.get("changes"))
    except ConfigError as exc:
        raise InvalidArguments(exc.message, reason=exc.reason, hint=exc.hint) from None
    assert env.attached is not None
    # The user may have edited the notebook since the turn read it: a change is proposed only
    # against cells that still hold what the model read.
    now = await env.attached.now()
    if now is not None and not now.problem:
        edited = stale(now.content, changes)
        if edited:
            env.attached = now  # read_cells reads the notebook as it is now
            raise InvalidArguments(
                f"the notebook changed under this proposal: cell(s) {', '.join(map(repr, edited))} no longer hold "
                "what you read (edited or removed since); nothing was proposed", reason="notebook_changed",
                hint="read those cells again with read_cells, then propose against what they hold now")
    made: list[tuple[Artifact, bool]] = []
    ran = 0
    for change in changes:
        if change.op != "delete" and change.cell_type == "code":
            ran += 1
            change.run = await _run_cell(env, change.source, ctx, ran, made)
    assert env.attached is not None
    proposal = Proposal(proposal_id=new_id("prop"), thread_id=ctx.thread_id, turn_id=ctx.turn_id,
                        call_id=ctx.call_id, notebook=env.attached.path, changes=changes, created_at=utc_now())
    await asyncio.to_thread(env.proposals.record_proposal, ctx.thread_id, ctx.turn_id, proposal.proposal_id,
                            proposal.notebook, proposal.model_dump(mode="json"))
    shown = []
    for change in changes:
        item: dict[str, Any] = {"change_id": change.change_id, "op": change.op}
        item["after" if change.op == "insert" else "cell_id"] = change.anchor
        if change.run is not None:
            item["run"] = change.run.status
            if change.run.error:
                item["error"] = clip(change.run.error, _SHOWN_CHARS)
            printed = "".join(str(o.get("text", "")) for o in change.run.outputs if o.get("output_type") == "stream")
            if printed:
                item["stdout"] = clip(printed, _SHOWN_CHARS)
        shown.append(item)
    result: dict[str, Any] = {
        "proposal_id": proposal.proposal_id,
        "status": "failed" if proposal.failed else "proposed",
        "changes": shown,
        "note": ("nothing in the notebook changes until the user accepts; "
                 + ("a cell failed in the sandbox, so the proposal cannot be accepted whole: fix it with a new "
                    "proposal, or say why" if proposal.failed else "say in the answer what was proposed and why")),
    }
    return StepOutcome(status="ok", result=result, artifacts=made)


async def _run_cell(env: ThreadEnvironment, code: str, ctx: CallContext, n: int,
                    made: list[tuple[Artifact, bool]]) -> ProposedRun:
    """One proposed code cell run as a Python step (checked, keyed, reused or run in the
    sandbox, recorded), its outputs as notebook outputs."""
    from ...notebooks import ProposedArtifact, ProposedRun

    spec = spec_of(CODE_STEP.tool)
    assert spec is not None and spec.plan is not None
    args = {CODE_STEP.payload: code}
    sub = CallContext(thread_id=ctx.thread_id, turn_id=ctx.turn_id, call_id=f"{ctx.call_id}-{n}", rerun=ctx.rerun)
    box = ToolBox(env)
    try:
        if spec.check is not None:
            spec.check(args)
        plan = await box.plan(CODE_STEP.tool, args)
    except AnalystError as exc:
        return ProposedRun(status="error", error=exc.message)
    record = box.recorded(sub, plan.key)
    if record is not None:
        outcome = box.reuse(record)
        if spec.reused is not None:
            await spec.reused(env, args, outcome)
    else:
        outcome = await box.call(CODE_STEP.tool, args, sub, plan)
    made += outcome.artifacts
    outputs = list(outcome.notebook_outputs)
    for artifact, _ in outcome.artifacts:
        if artifact.type == "image":
            outputs.append(await asyncio.to_thread(_figure_output, env, artifact))
    error = outcome.result.get("error")
    message = error.get("message") if isinstance(error, Mapping) else None
    return ProposedRun(
        status="ok" if outcome.status == "ok" and error is None else "error",
        outputs=outputs, step_key=outcome.step_key, error=message,
        artifacts=[ProposedArtifact(id=a.artifact_id, name=a.name, type=a.type, fingerprint=a.fingerprint)
                   for a, _ in outcome.artifacts],
    )


def _figure_output(env: ThreadEnvironment, artifact: Artifact) -> dict[str, Any]:
    """A figure the cell made, as the notebook output that shows it."""
    data = env.artifacts.read_bytes(artifact.artifact_id)
    value = data.decode("utf-8", "replace") if artifact.mime == "image/svg+xml" else base64.b64encode(data).decode()
    return {"output_type": "display_data", "data": {artifact.mime: value}, "metadata": {}}


def _offered(env: ThreadEnvironment) -> bool:
    return env.attached is not None and not env.attached.problem and env.proposals is not None


def _summarized(args: Mapping[str, Any]) -> str | None:
    changes = args.get("changes")
    return f"propose_cells: {len(changes)} change(s)" if isinstance(changes, list) else None


class ProposedChangeShown(ResultModel):
    """One change as the model is told it."""

    change_id: str
    op: Literal["insert", "replace", "delete"]
    cell_id: str | None = None
    after: str | None = None
    run: Literal["ok", "error"] | None = None
    """How a code cell ran in the sandbox."""
    error: str | None = None
    stdout: str | None = None


class ProposeCellsResult(ResultModel):
    """A proposal kept for the user to accept or reject; the notebook is unchanged."""

    proposal_id: str
    status: Literal["proposed", "failed"]
    changes: list[ProposedChangeShown]
    note: str


PROPOSE_CELLS = ToolSpec(
    name="propose_cells",
    description="Propose changes to the user's notebook (cell ids from its outline): insert after a cell ('' "
                "for the top), replace or delete cell_id; each with a one-line reason. Code cells run first in "
                "your kernel; nothing changes until the user accepts.",
    properties={
        "changes": {
            "type": "array", "minItems": 1, "maxItems": 20, "description": "in order",
            "items": {
                "type": "object",
                "properties": {
                    "op": {"enum": ["insert", "replace", "delete"]},
                    "cell_id": {"type": "string"}, "after": {"type": "string"},
                    "cell_type": {"enum": ["code", "markdown"]},
                    "source": {"type": "string"}, "reason": {"type": "string"},
                },
                "required": ["op", "reason"],
            },
        },
    },
    required=("changes",),
    state="analyzing",
    payload="changes",
    aliases={"ops": "changes", "operations": "changes", "cells": "changes", "edits": "changes"},
    run=propose_cells,
    offered=_offered,
    summarized=_summarized,
    result_model=ProposeCellsResult,
)
