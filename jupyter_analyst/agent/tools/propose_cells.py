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
from ..spec import CallContext, StepOutcome, StepPlan, ToolSpec, clip, printed, spec_of
from .result_models import ResultModel
from .toolbox import ToolBox

if TYPE_CHECKING:
    from ...receipts import Evidence
    from ...notebooks import Proposal, ProposedChange, ProposedRun
    from ..environment import ThreadEnvironment

#: What the model is told of a proposed cell's printed output (and of its last value).
_SHOWN_CHARS = 600
_PRINT_LESS = "the cell prints this in the user's notebook too: print less, e.g. df.head()"


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
    from ...notebooks import Proposal, cell_needs, read_changes, stale

    content = _notebook_content(env)
    if env.proposals is None:
        raise InvalidArguments("proposals cannot be kept in this conversation", reason="no_notebook",
                               hint="answer with run_python steps instead")
    withdrawn = await _withdrawable(env, ctx.thread_id, args.get("withdraw"))
    if withdrawn is not None and not args.get("changes"):
        await _withdraw(env, ctx.thread_id, *withdrawn)
        return StepOutcome(status="ok", result={
            "status": "withdrawn", "withdrawn": withdrawn[0],
            "note": f"its {len(withdrawn[1])} pending change(s) are no longer offered to the user; say so in the "
                    "answer"})
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
    # An accepted cell runs in the user's kernel, which has only what the notebook defines; the
    # sandbox has the conversation's names, and none of the notebook's.
    needs = cell_needs(content, changes)
    for change in changes:
        change.undefined = needs.get(change.change_id, ([], []))[0]
    made: list[tuple[Artifact, bool]] = []
    previews: dict[str, dict[str, Any]] = {}
    ran = 0
    for change in changes:
        if change.op != "delete" and change.cell_type == "code":
            ran += 1
            change.run, previews[change.change_id] = await _run_cell(env, change.source, ctx, ran, made)
    assert env.attached is not None
    proposal = Proposal(proposal_id=new_id("prop"), thread_id=ctx.thread_id, turn_id=ctx.turn_id,
                        call_id=ctx.call_id, notebook=env.attached.path, changes=changes, created_at=utc_now())
    await asyncio.to_thread(env.proposals.record_proposal, ctx.thread_id, ctx.turn_id, proposal.proposal_id,
                            proposal.notebook, proposal.model_dump(mode="json"))
    if withdrawn is not None:
        await _withdraw(env, ctx.thread_id, *withdrawn)
    shown = []
    for change in changes:
        item: dict[str, Any] = {"change_id": change.change_id, "op": change.op}
        item["after" if change.op == "insert" else "cell_id"] = change.anchor
        if change.run is not None:
            item["run"] = change.run.status
            if change.run.error:
                item["error"] = clip(change.run.error, _SHOWN_CHARS)
            item.update(previews.get(change.change_id, {}))
        if change.undefined:
            item["not_in_notebook"] = change.undefined
        lacking = _lacking(change, needs.get(change.change_id, ([], []))[1])
        if lacking:
            item["not_in_sandbox"] = lacking
        shown.append(item)
    result: dict[str, Any] = {
        "proposal_id": proposal.proposal_id,
        "status": "failed" if proposal.failed else "proposed",
        "changes": shown,
        "note": _note(proposal, any("not_in_sandbox" in item for item in shown)),
    }
    if withdrawn is not None:
        result["withdrawn"] = withdrawn[0]
    return StepOutcome(status="ok", result=result, artifacts=made)


def _lacking(change: ProposedChange, from_notebook: list[str]) -> list[str]:
    """The notebook's own names a cell failed on in the sandbox (where no notebook cell runs)."""
    error = change.run.error if change.run is not None and change.run.status == "error" else None
    return [n for n in from_notebook if error and f"NameError: name '{n}' is not defined" in error]


def _note(proposal: Proposal, unchecked: bool = False) -> str:
    """What the model is to do next with the proposal it made."""
    parts = ["nothing in the notebook changes until the user accepts"]
    if unchecked:
        parts.append("not_in_sandbox names are the notebook's own (its cells never run in your kernel), so the "
                     "sandbox could not check those cells; they may work in the user's kernel. To check one, give "
                     "your kernel the same names first (run_sql with name= the notebook's DataFrame name) and "
                     "propose again, or tell the user it is unchecked")
    if proposal.failed:
        parts.append("a cell failed in the sandbox, so the proposal cannot be accepted whole: propose the fix "
                     f"with withdraw={proposal.proposal_id!r}, or say why")
    unbound = [c for c in proposal.changes if c.undefined]
    if unbound:
        names = sorted({n for c in unbound for n in c.undefined})
        parts.append(
            f"cell(s) {', '.join(c.change_id for c in unbound)} read {', '.join(names)}, which no notebook cell "
            "before them defines: your sandbox kernel has them, the user's kernel does not, so once accepted they "
            "raise NameError there. Propose again with withdraw=" + repr(proposal.proposal_id) + " and cells that "
            "define them (imports, the data loaded in the notebook), or tell the user what to run first")
    if not proposal.failed and not unbound:
        parts.append("say in the answer what was proposed and why")
    return "; ".join(parts)


async def _withdrawable(env: ThreadEnvironment, thread_id: str, proposal_id: Any) -> tuple[str, list[str]] | None:
    """The proposal ``withdraw`` names and its pending changes, once checked to be this
    thread's and not all decided; ``None`` when nothing is to be withdrawn.

    Raises:
        InvalidArguments: an unknown proposal, or one with nothing pending left.
    """
    if proposal_id is None or proposal_id == "":
        return None
    from ...notebooks import Proposal

    assert env.proposals is not None
    body = await asyncio.to_thread(env.proposals.proposal, thread_id, str(proposal_id)) \
        if isinstance(proposal_id, str) else None
    if body is None:
        raise InvalidArguments(f"there is no proposal {proposal_id!r} in this conversation to withdraw; nothing "
                               "was changed", reason="proposal_not_found",
                               hint="use a proposal_id a propose_cells result gave (pending ones are listed with the "
                                    "notebook), or omit withdraw")
    decisions = await asyncio.to_thread(env.proposals.decisions, thread_id, proposal_id)
    status = {d["change_id"]: d["decision"] for d in decisions}
    pending = [c.change_id for c in Proposal.model_validate(body).changes if c.change_id not in status]
    if not pending:
        raise InvalidArguments(f"proposal {proposal_id} has no pending change left to withdraw (the user decided "
                               f"it, or it was withdrawn); nothing was changed", reason="already_decided",
                               hint="propose without withdraw")
    return proposal_id, pending


async def _withdraw(env: ThreadEnvironment, thread_id: str, proposal_id: str, change_ids: list[str]) -> None:
    from ...notebooks import WITHDRAWN_BY

    assert env.proposals is not None
    await asyncio.to_thread(env.proposals.decide, thread_id, proposal_id, change_ids, "withdrawn", WITHDRAWN_BY)


async def _run_cell(env: ThreadEnvironment, code: str, ctx: CallContext, n: int,
                    made: list[tuple[Artifact, bool]]) -> tuple[ProposedRun, dict[str, Any]]:
    """One proposed code cell run as a Python step (checked, keyed, reused or run in the
    sandbox, recorded), its outputs as notebook outputs; and what the model is shown of it."""
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
        return ProposedRun(status="error", error=exc.message), {}
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
    ), _preview(outcome.result)


def _preview(result: Mapping[str, Any]) -> dict[str, Any]:
    """What a proposed cell showed in the sandbox, as a Python step's result tells it, shorter:
    its printed text, its last expression's value and what it made."""
    shown: dict[str, Any] = {}
    for key in ("stdout", "result"):
        text = result.get(key)
        if isinstance(text, str) and text:
            shown[key] = clip(text, _SHOWN_CHARS, how=_PRINT_LESS)
    made = result.get("artifacts")
    if isinstance(made, list) and made:
        shown["made"] = [f"{a.get('id')} ({a.get('type')})" for a in made if isinstance(a, Mapping)][:10]
    return shown


def _figure_output(env: ThreadEnvironment, artifact: Artifact) -> dict[str, Any]:
    """A figure the cell made, as the notebook output that shows it."""
    data = env.artifacts.read_bytes(artifact.artifact_id)
    value = data.decode("utf-8", "replace") if artifact.mime == "image/svg+xml" else base64.b64encode(data).decode()
    return {"output_type": "display_data", "data": {artifact.mime: value}, "metadata": {}}


def _evidence(call_id: str, result: Mapping[str, Any]) -> list[Evidence]:
    """What each proposed cell printed in the sandbox and its last value, as the model was sent
    them: an answer may cite them."""
    found: list[Evidence] = []
    for item in result.get("changes") or ():
        if isinstance(item, Mapping):
            found += printed(f"{call_id}:{item.get('change_id')}", "propose_cells",
                             {"stdout": item.get("stdout"), "result": item.get("result")})
    return found


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
    result: str | None = None
    """The repr of the cell's last expression, as the sandbox showed it."""
    made: list[str] | None = None
    """The artifacts (figures, files) the cell made in the sandbox: ``id (type)``."""
    not_in_notebook: list[str] | None = None
    """Names the cell reads that no notebook cell before it defines (the user's kernel lacks them)."""
    not_in_sandbox: list[str] | None = None
    """Names of the notebook's own cells the cell failed on in the sandbox, where those never ran."""


class ProposeCellsResult(ResultModel):
    """A proposal kept for the user to accept or reject (the notebook is unchanged), or a
    pending one withdrawn."""

    proposal_id: str | None = None
    status: Literal["proposed", "failed", "withdrawn"]
    changes: list[ProposedChangeShown] = []
    withdrawn: str | None = None
    """The proposal withdrawn by this call (replaced by this one, when it proposes too)."""
    note: str


PROPOSE_CELLS = ToolSpec(
    name="propose_cells",
    description="Propose notebook changes for the user to accept. Code cells run in your kernel first; accepted, "
                "in the user's, which lacks your variables.",
    properties={
        "changes": {
            "type": "array", "maxItems": 20, "description": "in order",
            "items": {
                "type": "object",
                "properties": {
                    "op": {"enum": ["insert", "replace", "delete"], "description": "insert after; replace/delete cell_id"},
                    "cell_id": {"type": "string", "description": "outline id"},
                    "after": {"type": "string", "description": "outline id, '' = top"},
                    "cell_type": {"enum": ["code", "markdown"], "description": "default code"},
                    "source": {"type": "string", "description": "whole cell"},
                    "reason": {"type": "string", "description": "one line"},
                },
                "required": ["op", "reason"],
            },
        },
        "withdraw": {"type": "string", "description": "a pending proposal_id to withdraw or replace"},
    },
    state="analyzing",
    payload="changes",
    aliases={"ops": "changes", "operations": "changes", "cells": "changes", "edits": "changes",
             "withdraw_id": "withdraw", "proposal_id": "withdraw", "supersedes": "withdraw"},
    run=propose_cells,
    offered=_offered,
    summarized=_summarized,
    result_model=ProposeCellsResult,
    evidence=_evidence,
)
