"""Proposals as a person (or a client agent) reviews them outside JupyterLab: each change with
the cell's source before and after, a unified diff of the two, and how its cell ran in the
sandbox. ``%%ask`` draws these in the cell's output; the MCP ``ask`` returns them as
structured content.

Built from :class:`~.notebook_changes.ProposalView` (the local store's, or a Jupyter server's
``GET .../proposals`` answer) and the notebook as it is now, so the local engine and a server
give the same review. Pure functions: reading the notebook is the caller's.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel

from ..notebooks import ChangeStatus
from .notebook_changes import ChangeView, ProposalView

#: A proposed cell's printed output, as a review shows it at most.
SHOWN_OUTPUT_CHARS = 2_000

#: A proposal as a whole: its changes' one status, ``failed`` (pending, a cell failed), or a mix.
ProposalStatus = Literal["pending", "failed", "accepted", "rejected", "reverted", "withdrawn", "partly_decided"]


class SandboxOutcome(BaseModel):
    """How a proposed code cell ran in the thread's sandboxed kernel (never in the user's)."""

    status: Literal["ok", "error"]
    error: str | None = None
    """Why it failed, in one line."""
    output: str = ""
    """What it printed (streams and text results), cut at :data:`SHOWN_OUTPUT_CHARS`."""
    figures: int = 0
    """Figures it drew (shown in the cell when it is accepted)."""
    artifacts: list[str] = []
    """The fingerprints of what it made, in the thread's inventory."""


class ChangeDiff(BaseModel):
    """One change: the cell before and after, and their unified diff."""

    change_id: str
    op: Literal["insert", "replace", "delete"]
    cell_id: str | None
    """The notebook cell replaced or deleted (an insert: the new cell's id is ``change_id``)."""
    after: str | None
    """An insert: the cell it follows (``None``: the top)."""
    cell_type: Literal["code", "markdown"]
    reason: str
    status: ChangeStatus
    old_source: str | None
    """The cell's source in the notebook now (``""`` for an insert; ``None`` when the notebook
    could not be read, or the cell is gone)."""
    new_source: str | None
    """What the cell would hold (``None`` for a delete)."""
    diff: str
    """``old_source`` to ``new_source`` as a unified diff."""
    sandbox: SandboxOutcome | None
    """A code cell's run (``None``: markdown, or a delete)."""
    conflict: str | None = None
    """Why a pending change no longer applies (its cell was edited or removed since)."""


class ProposalDiff(BaseModel):
    """One proposal of a turn, as it is reviewed."""

    proposal_id: str
    turn_id: str
    notebook: str
    status: ProposalStatus
    failed: bool
    """A cell failed in the sandbox: accept its cells by id, not the proposal whole."""
    changes: list[ChangeDiff]


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source or "")


def _printed(outputs: Sequence[dict[str, Any]]) -> tuple[str, int]:
    """What the outputs printed (streams, text results, errors) and how many figures they drew."""
    parts, figures = [], 0
    for out in outputs:
        kind = out.get("output_type")
        if kind == "stream":
            parts.append(_text(out.get("text")))
        elif kind == "error":
            parts.append(f"{out.get('ename')}: {out.get('evalue')}\n")
        elif kind in ("execute_result", "display_data"):
            data = out.get("data") or {}
            if any(str(m).startswith("image/") for m in data):
                figures += 1
            elif "text/plain" in data:
                parts.append(_text(data["text/plain"]) + "\n")
    text = "".join(parts)
    return (text if len(text) <= SHOWN_OUTPUT_CHARS else text[:SHOWN_OUTPUT_CHARS] + "\n[... cut]"), figures


def unified(old: str | None, new: str | None, notebook: str, change: ChangeView) -> str:
    """The change as a unified diff of the cell's source, named ``NB#cell``.

    >>> view = ChangeView(change_id="c2", op="replace", cell_id="c2", after=None, cell_type="code",
    ...     source="y = 3", reason="r", run=None, status="pending", decided_by=None, diff=None, conflict=None)
    >>> print(unified("y = 2", "y = 3", "nb.ipynb", view), end="")
    --- nb.ipynb#c2
    +++ nb.ipynb#c2 (proposed)
    @@ -1 +1 @@
    -y = 2
    +y = 3
    """
    name = f"{notebook}#{change.cell_id or change.change_id}"
    before = "/dev/null" if change.op == "insert" else name
    after = "/dev/null" if change.op == "delete" else f"{name} (proposed)"
    lines = difflib.unified_diff((old or "").splitlines(), (new or "").splitlines(), before, after, lineterm="")
    return "".join(line + "\n" for line in lines)


def review(views: Sequence[ProposalView], nb: dict[str, Any] | None) -> list[ProposalDiff]:
    """``views`` with each change's source before (from ``nb``, the notebook now) and after."""
    sources = {c.get("id"): _text(c.get("source")) for c in (nb or {}).get("cells", []) if isinstance(c, dict)}
    out = []
    for view in views:
        changes = []
        for change in view.changes:
            if change.op == "insert":
                old: str | None = ""
            else:
                old = sources.get(change.cell_id) if nb is not None else None
            new = None if change.op == "delete" else change.source
            sandbox = None
            if change.run is not None:
                printed, figures = _printed(change.run.outputs)
                sandbox = SandboxOutcome(status=change.run.status, error=change.run.error, output=printed,
                                         figures=figures, artifacts=[a.fingerprint for a in change.run.artifacts])
            changes.append(ChangeDiff(
                change_id=change.change_id, op=change.op, cell_id=change.cell_id, after=change.after,
                cell_type=change.cell_type, reason=change.reason, status=change.status, old_source=old,
                new_source=new, diff=unified(old, new, view.notebook, change), sandbox=sandbox,
                conflict=change.conflict,
            ))
        out.append(ProposalDiff(proposal_id=view.proposal_id, turn_id=view.turn_id, notebook=view.notebook,
                                status=_status(view), failed=view.failed, changes=changes))
    return out


def _status(view: ProposalView) -> ProposalStatus:
    states = {c.status for c in view.changes}
    if "pending" in states:
        if len(states) > 1:
            return "partly_decided"
        return "failed" if view.failed else "pending"
    return states.pop() if len(states) == 1 else "partly_decided"  # type: ignore[return-value]
