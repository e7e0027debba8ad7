"""A person's decisions on the cells the model proposed: accept, reject, revert a turn.

What the server and the CLI call, on a Jupyter contents manager (the server's own, or a
file-backed one over the notebook's folder for the CLI), so the notebook is read, written and
checkpointed as Jupyter does it. Before a proposal's first accepted change the notebook is
checkpointed (the contents manager's checkpoints API), and the text it had is kept with the
proposal; reverting a turn restores the earliest checkpoint of its proposals, byte for byte.
Each decision is kept (who, what, when) and noted in the agent state, so the next turn is told
what was accepted and is asked not to propose a rejected change again. Nothing runs in the
user's kernel: an accepted cell carries the outputs it made in the sandbox.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from jupyter_core.utils import ensure_async
from pydantic import BaseModel

from ..agent_state import Addition, StateDelta
from ..notebooks import notebook_json as dumps
from ..notebooks import (
    ChangeStatus, Proposal, ProposalConflict, ProposedChange, ProposedRun, applied, change_diff, decided,
)
from ..store import ThreadStore


class NotebookContents(Protocol):
    """The part of a Jupyter contents manager decisions use (sync or async methods)."""

    def get(self, path: str, content: bool = True, type: str | None = None, format: str | None = None) -> Any: ...
    def save(self, model: dict[str, Any], path: str) -> Any: ...
    def create_checkpoint(self, path: str) -> Any: ...
    def restore_checkpoint(self, checkpoint_id: str, path: str) -> Any: ...


class ChangeView(BaseModel):
    """One proposed change, its status and its diff against the notebook as it is now."""

    change_id: str
    op: Literal["insert", "replace", "delete"]
    cell_id: str | None
    after: str | None
    cell_type: Literal["code", "markdown"]
    source: str
    reason: str
    run: ProposedRun | None
    status: ChangeStatus
    decided_by: str | None
    diff: list[dict[str, Any]] | None
    """nbdime's diff of the cell, before and after (``None`` once decided, or when it no longer applies)."""
    conflict: str | None
    """Why a pending change no longer applies (its cell was edited or removed since)."""
    undefined: list[str] = []
    """Names the code cell reads that no notebook cell before it defines: they existed where it
    ran (the sandbox), and would not in your kernel."""


class ProposalView(BaseModel):
    """A proposal as a person reviews it."""

    proposal_id: str
    turn_id: str
    notebook: str
    created_at: str
    failed: bool
    """A cell failed in the sandbox: the proposal is not accepted whole (accept its cells one by one)."""
    changes: list[ChangeView]


class RevertResult(BaseModel):
    """A turn's accepted changes undone: the notebook restored to its checkpoint."""

    turn_id: str
    notebook: str
    checkpoint_id: str
    reverted: list[str]
    """The change ids that were accepted, now reverted."""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def read_text(files: NotebookContents, path: str) -> str:
    """The notebook's file text, through the contents manager."""
    model = await ensure_async(files.get(path, content=True, type="file", format="text"))
    return str(model["content"])


async def _write(files: NotebookContents, path: str, nb: dict[str, Any]) -> None:
    await ensure_async(files.save({"type": "file", "format": "text", "content": dumps(nb)}, path))


def statuses(decisions: Sequence[dict[str, Any]]) -> tuple[dict[str, ChangeStatus], dict[str, str]]:
    """Each change's last decision and who took it."""
    status: dict[str, ChangeStatus] = {}
    by: dict[str, str] = {}
    for row in decisions:
        status[row["change_id"]] = row["decision"]
        by[row["change_id"]] = row["user"]
    return status, by


def _proposal(store: ThreadStore, thread_id: str, proposal_id: str) -> Proposal:
    body = store.proposal(thread_id, proposal_id)
    if body is None:
        raise ProposalConflict(f"unknown proposal {proposal_id!r}", reason="proposal_not_found",
                               hint="list the thread's proposals with GET threads/{id}/proposals")
    return Proposal.model_validate(body)


def view(proposal: Proposal, decisions: Sequence[dict[str, Any]], nb: dict[str, Any] | None) -> ProposalView:
    """``proposal`` with its changes' statuses, and diffs against ``nb`` (the notebook now)."""
    status, by = statuses(decisions)
    changes = []
    for change in proposal.changes:
        state = status.get(change.change_id, "pending")
        diff, conflict = None, None
        if state == "pending" and nb is not None:
            try:
                diff = change_diff(nb, proposal, change)
            except ProposalConflict as exc:
                conflict = exc.message
        changes.append(ChangeView(
            change_id=change.change_id, op=change.op, cell_id=change.cell_id, after=change.after,
            cell_type=change.cell_type, source=change.source, reason=change.reason, run=change.run,
            status=state, decided_by=by.get(change.change_id), diff=diff, conflict=conflict,
            undefined=change.undefined,
        ))
    return ProposalView(proposal_id=proposal.proposal_id, turn_id=proposal.turn_id, notebook=proposal.notebook,
                        created_at=proposal.created_at, failed=proposal.failed, changes=changes)


async def list_proposals(store: ThreadStore, files: NotebookContents | None, thread_id: str) -> list[ProposalView]:
    """The thread's proposals, each change with its status and, while pending, its diff
    against its notebook as it is now (when ``files`` can read it)."""
    bodies = await asyncio.to_thread(store.proposals, thread_id)
    decisions = await asyncio.to_thread(store.decisions, thread_id)
    notebooks: dict[str, dict[str, Any] | None] = {}
    out = []
    for body in bodies:
        proposal = Proposal.model_validate(body)
        if files is not None and proposal.notebook not in notebooks:
            try:
                notebooks[proposal.notebook] = json.loads(await read_text(files, proposal.notebook))
            except Exception:  # gone or unreadable: listed without diffs, never failed
                notebooks[proposal.notebook] = None
        mine = [d for d in decisions if d["proposal_id"] == proposal.proposal_id]
        out.append(view(proposal, mine, notebooks.get(proposal.notebook)))
    return out


async def accept(store: ThreadStore, files: NotebookContents, thread_id: str, proposal_id: str,
                 change_ids: Sequence[str] | None, *, user: str, path: str | None = None) -> ProposalView:
    """Accept the named changes (``None``: every pending one) into the notebook (at ``path`` in
    ``files``, else where the turn named it), checkpointed first; the proposal as it is then.

    Raises:
        ProposalConflict: the proposal failed in the sandbox and all were asked
            (``proposal_failed``), a change was decided already, or no longer applies (its
            cell edited since: ``notebook_changed``); nothing is written then.
    """
    proposal = _proposal(store, thread_id, proposal_id)
    status, _ = statuses(await asyncio.to_thread(store.decisions, thread_id, proposal_id))
    if change_ids is None and proposal.failed:
        failed = [c.change_id for c in proposal.changes if c.failed]
        raise ProposalConflict(
            f"proposal {proposal_id} has a cell that failed in the sandbox ({', '.join(failed)}), so it is not "
            "accepted whole", reason="proposal_failed",
            hint="look at the failed cell's outputs; accept the cells you want by their ids")
    chosen = decided(proposal.changes, status, change_ids, whole=change_ids is None)
    if not chosen:
        raise ProposalConflict(f"proposal {proposal_id} has no pending change left to accept", reason="already_decided")
    where = path or proposal.notebook
    text = await read_text(files, where)
    new = applied(json.loads(text), proposal, chosen)  # refuses before anything is written
    if not any(c["proposal_id"] == proposal_id for c in await asyncio.to_thread(
            store.checkpoints, thread_id, proposal.turn_id)):
        checkpoint = await ensure_async(files.create_checkpoint(where))
        await asyncio.to_thread(store.record_checkpoint, thread_id, proposal.turn_id, proposal_id,
                                proposal.notebook, str(checkpoint["id"]), _digest(text), text)
    await _write(files, where, new)
    await _decide(store, proposal, chosen, "accepted", user)
    return view(proposal, await asyncio.to_thread(store.decisions, thread_id, proposal_id), new)


async def reject(store: ThreadStore, files: NotebookContents | None, thread_id: str, proposal_id: str,
                 change_ids: Sequence[str] | None, *, user: str, path: str | None = None) -> ProposalView:
    """Reject the named changes (``None``: every pending one); the notebook is not touched."""
    proposal = _proposal(store, thread_id, proposal_id)
    status, _ = statuses(await asyncio.to_thread(store.decisions, thread_id, proposal_id))
    chosen = decided(proposal.changes, status, change_ids, whole=change_ids is None)
    if not chosen:
        raise ProposalConflict(f"proposal {proposal_id} has no pending change left to reject", reason="already_decided")
    await _decide(store, proposal, chosen, "rejected", user)
    nb = None
    if files is not None:
        try:
            nb = json.loads(await read_text(files, path or proposal.notebook))
        except Exception:  # gone or unreadable: the decision is kept, shown without diffs
            nb = None
    return view(proposal, await asyncio.to_thread(store.decisions, thread_id, proposal_id), nb)


async def revert_turn(store: ThreadStore, files: NotebookContents, thread_id: str, turn_id: str,
                      *, user: str, path: str | None = None) -> RevertResult:
    """Undo the turn's accepted changes: its notebook restored from the checkpoint taken before
    the first of them, exactly (the kept text is written when that checkpoint was replaced
    since, by a later save that made one).

    Raises:
        ProposalConflict: nothing of the turn is accepted (``nothing_to_revert``).
    """
    points = await asyncio.to_thread(store.checkpoints, thread_id, turn_id)
    bodies = [Proposal.model_validate(b) for b in await asyncio.to_thread(store.proposals, thread_id, turn_id=turn_id)]
    decisions = await asyncio.to_thread(store.decisions, thread_id)
    status, _ = statuses([d for d in decisions if d["proposal_id"] in {p.proposal_id for p in bodies}])
    accepted = [(p, c) for p in bodies for c in p.changes if status.get(c.change_id) == "accepted"]
    if not points or not accepted:
        raise ProposalConflict(f"turn {turn_id} has no accepted change to revert", reason="nothing_to_revert",
                               hint="accept a proposed change first; a reverted turn is reverted once")
    first = points[0]
    where = path or first["notebook"]
    await ensure_async(files.restore_checkpoint(first["checkpoint_id"], where))
    if _digest(await read_text(files, where)) != first["digest"]:
        await ensure_async(files.save({"type": "file", "format": "text", "content": first["body"]}, where))
    for proposal in bodies:
        mine = [c for p, c in accepted if p.proposal_id == proposal.proposal_id]
        if mine:
            await _decide(store, proposal, mine, "reverted", user)
    return RevertResult(turn_id=turn_id, notebook=first["notebook"], checkpoint_id=first["checkpoint_id"],
                        reverted=[c.change_id for _, c in accepted])


def preview_turn(store: ThreadStore, thread_id: str, turn_id: str, nb: dict[str, Any]
                 ) -> tuple[dict[str, Any], list[Proposal], list[str], dict[str, ChangeStatus]]:
    """``nb`` with every change the turn proposed applied (but those the model withdrew), as it
    would be were all accepted (a file to look at, not the notebook): the notebook, the turn's
    proposals, why a change was left out (its cell changed since), and each change's status.
    Blocking."""
    proposals = [Proposal.model_validate(b) for b in store.proposals(thread_id, turn_id=turn_id)]
    status, _ = statuses(store.decisions(thread_id))
    out, skipped = nb, []
    for proposal in proposals:
        for change in proposal.changes:
            if status.get(change.change_id) == "withdrawn":
                continue
            try:
                out = applied(out, proposal, [change])
            except ProposalConflict as exc:
                skipped.append(exc.message)
    return out, proposals, skipped, status


_TOLD = {
    "accepted": "The user accepted the proposed {what} into {nb} ({why}); it is in the notebook now.",
    "rejected": "The user rejected the proposed {what} for {nb} ({why}): do not propose it again.",
    "reverted": "The user reverted the proposed {what} in {nb} ({why}): it is no longer in the notebook.",
}


def _what(change: ProposedChange) -> str:
    if change.op == "insert":
        return f"new {change.cell_type} cell {change.change_id} after {change.after or 'the top'}"
    return f"{change.op} of cell {change.cell_id}"


async def _decide(store: ThreadStore, proposal: Proposal, changes: Sequence[ProposedChange], decision: str,
                  user: str) -> None:
    """The decision kept, and told in the agent state (the next turn's context reads it)."""
    ids = [c.change_id for c in changes]
    await asyncio.to_thread(store.decide, proposal.thread_id, proposal.proposal_id, ids, decision, user)
    delta = StateDelta(add=[Addition(section="items", value={
        "id": f"proposal:{proposal.proposal_id}:{c.change_id}", "kind": "note",
        "text": _TOLD[decision].format(what=_what(c), nb=proposal.notebook, why=c.reason),
        "ref": {"proposal": proposal.proposal_id, "change": c.change_id, "decision": decision, "by": user},
    }) for c in changes])
    await asyncio.to_thread(store.apply_state_delta, proposal.thread_id, delta, origin="user")


#: How many of the thread's pending proposals for a notebook the prompt names.
NOTED_PROPOSALS = 6


def proposal_notes(store: ThreadStore, thread_id: str, notebook: str) -> str:
    """Where the thread's proposals for ``notebook`` stand, in a few lines for the prompt (empty
    when there are none): each proposal with a change still pending, with those changes named,
    so the model knows what the user has yet to decide and can withdraw what it replaces; the
    others in one tally. Blocking.

    What the user decided is also told change by change in the agent state's notes (accepted;
    rejected: not to be proposed again); this is the one place the pending ones are said.
    """
    from pathlib import PurePath

    name = PurePath(notebook).name
    mine = [Proposal.model_validate(b) for b in store.proposals(thread_id)
            if PurePath(str(b.get("notebook", ""))).name == name]
    if not mine:
        return ""
    status, _ = statuses(store.decisions(thread_id))
    lines, tally = [], {}
    for proposal in mine:
        pending = [_what(c) for c in proposal.changes if status.get(c.change_id, "pending") == "pending"]
        for change in proposal.changes:
            state = status.get(change.change_id, "pending")
            if state != "pending":
                tally[state] = tally.get(state, 0) + 1
        if pending:
            more = f"; +{len(pending) - 3} more" if len(pending) > 3 else ""
            failed = ", a cell failed in the sandbox" if proposal.failed else ""
            lines.append(f"- {proposal.proposal_id}: {len(pending)} pending ({'; '.join(pending[:3])}{more}){failed}")
    out = []
    if lines:
        hidden = len(lines) - NOTED_PROPOSALS
        out = ["Your proposals for this notebook still pending (the user decides; withdraw one you replace):",
               *([f"- {hidden} older pending proposal(s) not listed"] if hidden > 0 else []),
               *lines[-NOTED_PROPOSALS:]]
    if tally:
        out.append("Proposed changes decided or withdrawn so far: "
                   + ", ".join(f"{n} {state}" for state, n in sorted(tally.items())) + ".")
    return "\n".join(out)
