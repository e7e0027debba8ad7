"""Proposals: cells the model suggests for the user's notebook, and how a person's decision
applies them.

The model never edits a notebook (DESIGN decision 14). It proposes changes (a new cell after
a cell, a cell's source replaced, a cell deleted), each naming its cell by id from the outline
and carrying a digest of the source the model was shown. A change applies only while the cell
still holds that source: a cell the user edited since is a conflict, said plainly, never
overwritten.

Everything here is a pure function of notebook JSON (a dict, as ``outline.py`` reads it) and
of the proposal; writing files, checkpoints and the store are the callers'. The diff model is
nbdime's (the Jupyter project's notebook diff), imported when a diff is asked for.
"""

from __future__ import annotations

import copy
import hashlib
import secrets
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel

from ..errors import ConfigError
from .outline import _cell_id, _cells, _text

ChangeOp = Literal["insert", "replace", "delete"]
CellKind = Literal["code", "markdown"]
ChangeStatus = Literal["pending", "accepted", "rejected", "reverted", "withdrawn"]
#: Who a withdrawal is recorded as taken by: the model, not a person.
WITHDRAWN_BY = "model"
#: The key of an accepted cell's provenance in its metadata.
META_KEY = "jupyter_analyst"
#: Changes one proposal may hold.
MAX_CHANGES = 20


class ProposalConflict(ConfigError):
    """A change that no longer applies: its cell was edited, moved away or deleted since the
    model read it, or the proposal is not in a state to be decided so."""

    reason = "notebook_changed"


def source_digest(source: Any) -> str:
    """The digest of a cell's source as text (a list of lines or a string give the same).

    >>> source_digest(["x = 1\\n", "y"]) == source_digest("x = 1\\ny")
    True
    """
    return hashlib.sha256(_text(source).encode("utf-8")).hexdigest()[:16]


def new_cell_id() -> str:
    """An nbformat 4.5 cell id for a proposed cell."""
    return "prop-" + secrets.token_hex(4)


class ProposedArtifact(BaseModel):
    """An artifact a proposed cell made when it ran in the sandbox."""

    id: str
    name: str
    type: str
    fingerprint: str


class ProposedRun(BaseModel):
    """How a proposed code cell ran in the thread's sandboxed kernel."""

    status: Literal["ok", "error"]
    outputs: list[dict[str, Any]] = []
    """Its outputs as notebook outputs (streams, errors, results, figures)."""
    step_key: str | None = None
    artifacts: list[ProposedArtifact] = []
    error: str | None = None
    """Why it failed, in one line."""


class ProposedChange(BaseModel):
    """One change of a proposal."""

    change_id: str
    """Its id: a new cell's id for an insert, the cell's id for a replace or a delete."""
    op: ChangeOp
    cell_id: str | None = None
    """The notebook cell replaced or deleted."""
    after: str | None = None
    """An insert: the notebook cell it follows (``None``: at the top)."""
    cell_type: CellKind = "code"
    source: str = ""
    reason: str
    base_digest: str | None = None
    """The digest of the source of ``cell_id`` (or ``after``) as the model was shown it."""
    run: ProposedRun | None = None
    """A code cell's run in the sandbox (``None``: not code, or a delete)."""
    undefined: list[str] = []
    """Names the code cell reads that no notebook cell before it defines: they exist in the
    sandbox kernel (the conversation's datasets and variables), not in the user's."""

    @property
    def failed(self) -> bool:
        return self.run is not None and self.run.status != "ok"

    @property
    def anchor(self) -> str | None:
        """The notebook cell the change needs to be where the model saw it."""
        return self.after if self.op == "insert" else self.cell_id


class Proposal(BaseModel):
    """Cells the model proposed for a notebook in one call."""

    proposal_id: str
    thread_id: str
    turn_id: str
    call_id: str
    notebook: str
    """The notebook's path as the turn named it."""
    changes: list[ProposedChange]
    created_at: str

    @property
    def failed(self) -> bool:
        """A proposal with a cell that failed in the sandbox is never accepted whole at once."""
        return any(c.failed for c in self.changes)

    def change(self, change_id: str) -> ProposedChange:
        for change in self.changes:
            if change.change_id == change_id:
                return change
        raise ProposalConflict(f"proposal {self.proposal_id} has no change {change_id!r}", reason="unknown_change",
                               hint="use the change ids GET .../proposals lists")


# ---------------------------------------------------------------------- reading the model's changes

def _require_ids(nb: dict[str, Any]) -> None:
    if any(not isinstance(c.get("id"), str) or not c.get("id") for c in _cells(nb)):
        raise ConfigError("the notebook's cells have no ids (nbformat before 4.5), so a change cannot name its "
                          "cell", reason="notebook_without_ids",
                          hint="open and save the notebook in JupyterLab, which gives its cells ids")


def read_changes(nb: dict[str, Any], raw: Any) -> list[ProposedChange]:
    """The model's ``changes`` checked against the notebook it was shown (``nb``): each op
    known, each cell id in the notebook, each insert and replace with a source, each with a
    reason. Ids of new cells are made here.

    Raises:
        ConfigError: one clear sentence on the first change that cannot be read.

    >>> nb = {"cells": [{"id": "a", "cell_type": "code", "source": "x = 1"}]}
    >>> [(c.op, c.after, c.base_digest == source_digest("x = 1")) for c in read_changes(nb, [
    ...     {"op": "insert", "after": "a", "source": "x + 1", "reason": "show x"}])]
    [('insert', 'a', True)]
    """
    if not isinstance(raw, list) or not raw:
        raise ConfigError("a proposal needs 'changes': a non-empty list of insert, replace or delete operations",
                          reason="empty_proposal",
                          hint='e.g. {"changes": [{"op": "insert", "after": "<cell id>", "source": "...", '
                               '"reason": "..."}]}')
    if len(raw) > MAX_CHANGES:
        raise ConfigError(f"a proposal holds at most {MAX_CHANGES} changes; this one has {len(raw)}",
                          reason="too_many_changes", hint="propose the most useful cells first")
    _require_ids(nb)
    sources = {_cell_id(c, i): _text(c.get("source")) for i, c in enumerate(_cells(nb))}
    touched: set[str] = set()
    out: list[ProposedChange] = []
    for n, item in enumerate(raw, start=1):
        where = f"change {n}"
        if not isinstance(item, dict):
            raise ConfigError(f"{where} is not an object with 'op', 'cell_id' or 'after', 'source' and 'reason'",
                              reason="invalid_change")
        op = item.get("op")
        if op not in ("insert", "replace", "delete"):
            raise ConfigError(f"{where}: unknown op {op!r}; an op is insert, replace or delete",
                              reason="invalid_change_op")
        reason = item.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigError(f"{where} ({op}) needs a one-line 'reason'", reason="invalid_change")
        kind = item.get("cell_type") or "code"
        if kind not in ("code", "markdown"):
            raise ConfigError(f"{where}: cell_type is code or markdown, not {kind!r}", reason="invalid_change")
        source = item.get("source")
        if op != "delete" and (not isinstance(source, str) or not source.strip()):
            raise ConfigError(f"{where} ({op}) needs the cell's new 'source'", reason="invalid_change")
        target = item.get("after") if op == "insert" else item.get("cell_id")
        if op != "insert" and not isinstance(target, str):
            raise ConfigError(f"{where} ({op}) needs the 'cell_id' of the cell it changes, from the outline",
                              reason="invalid_change")
        if target is not None and target != "" and target not in sources:
            raise ConfigError(f"{where} ({op}): unknown cell id {target!r}; use the ids the notebook outline lists",
                              reason="unknown_cell")
        target = target or None
        if op != "insert":
            assert target is not None
            if target in touched:
                raise ConfigError(f"{where}: cell {target!r} is changed twice in one proposal", reason="invalid_change")
            touched.add(target)
        digest = source_digest(sources[target]) if target is not None else None
        out.append(ProposedChange(
            change_id=new_cell_id() if op == "insert" else str(target), op=op,
            cell_id=target if op != "insert" else None, after=target if op == "insert" else None,
            cell_type=kind, source=source if op != "delete" else "", reason=reason.strip().splitlines()[0][:200],
            base_digest=digest,
        ))
    return out


def stale(nb: dict[str, Any], changes: Iterable[ProposedChange]) -> list[str]:
    """The cells ``changes`` name that ``nb`` (the notebook now) no longer holds as the model
    read them: edited, or gone.

    >>> change = ProposedChange(change_id="a", op="delete", cell_id="a", reason="r", base_digest=source_digest("x"))
    >>> stale({"cells": [{"id": "a", "source": "x"}]}, [change]), stale({"cells": [{"id": "a", "source": "y"}]}, [change])
    ([], ['a'])
    """
    out = []
    for change in changes:
        anchor = change.anchor
        if anchor is None:
            continue
        index = _index(nb, anchor)
        if index is None or source_digest(nb["cells"][index].get("source")) != change.base_digest:
            out.append(anchor)
    return list(dict.fromkeys(out))


# ---------------------------------------------------------------------- applying a change

def _index(nb: dict[str, Any], cell_id: str) -> int | None:
    for i, cell in enumerate(_cells(nb)):
        if cell.get("id") == cell_id:
            return i
    return None


def _check_anchor(nb: dict[str, Any], change: ProposedChange) -> int | None:
    """The index of the change's cell in ``nb``, once its source is checked to be the one
    the model read; ``None`` for an insert at the top.

    Raises:
        ProposalConflict: the cell is gone, or was edited since.
    """
    anchor = change.anchor
    if anchor is None:
        return None
    index = _index(nb, anchor)
    if index is None:
        raise ProposalConflict(f"cell {anchor!r} is no longer in the notebook; the change {change.change_id} "
                               "cannot be applied", hint="reject it, and ask again")
    if change.base_digest is not None and source_digest(nb["cells"][index].get("source")) != change.base_digest:
        raise ProposalConflict(f"cell {anchor!r} was edited since the model read it; the change "
                               f"{change.change_id} would overwrite or misplace that edit, so it is not applied",
                               hint="reject it, and ask again on the notebook as it is now")
    return index


def provenance(proposal: Proposal, change: ProposedChange) -> dict[str, Any]:
    """What an accepted cell carries in ``metadata.jupyter_analyst``."""
    run = change.run
    return {
        "proposal": proposal.proposal_id, "change": change.change_id, "thread": proposal.thread_id,
        "turn": proposal.turn_id, "reason": change.reason,
        "step_key": run.step_key if run is not None else None,
        "fingerprints": [a.fingerprint for a in run.artifacts] if run is not None else [],
    }


def proposed_cell(proposal: Proposal, change: ProposedChange) -> dict[str, Any]:
    """The cell an insert or a replace puts in the notebook: its source, its sandbox outputs
    and its provenance."""
    cell: dict[str, Any] = {"cell_type": change.cell_type, "id": change.change_id,
                            "metadata": {META_KEY: provenance(proposal, change)}, "source": change.source}
    if change.cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = copy.deepcopy(change.run.outputs) if change.run is not None else []
    return cell


def apply_change(nb: dict[str, Any], proposal: Proposal, change: ProposedChange) -> None:
    """Apply ``change`` to ``nb`` in place, after checking its cell is as the model read it.

    Inserts after one cell keep the proposal's order (each goes after the cells of the
    same proposal already inserted there).

    Raises:
        ProposalConflict: the change no longer applies.
    """
    _require_ids(nb)
    index = _check_anchor(nb, change)
    cells = nb["cells"]
    if change.op == "insert":
        at = 0 if index is None else index + 1
        while at < len(cells) and _meta(cells[at]).get("proposal") == proposal.proposal_id \
                and _meta(cells[at]).get("after", "-") == change.after:
            at += 1
        cell = proposed_cell(proposal, change)
        cell["metadata"][META_KEY]["after"] = change.after
        cells.insert(at, cell)
    elif change.op == "replace":
        assert index is not None
        old = cells[index]
        new = proposed_cell(proposal, change)
        new["id"] = old.get("id")
        # The user's own metadata (tags, collapsed state) stays; the provenance is added.
        new["metadata"] = {**(old.get("metadata") if isinstance(old.get("metadata"), dict) else {}),
                           META_KEY: new["metadata"][META_KEY]}
        if old.get("cell_type") == new["cell_type"] == "code" and "execution_count" in old:
            new["execution_count"] = None
        cells[index] = new
    else:
        assert index is not None
        del cells[index]


def _meta(cell: dict[str, Any]) -> dict[str, Any]:
    meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    value = meta.get(META_KEY)
    return value if isinstance(value, dict) else {}


def applied(nb: dict[str, Any], proposal: Proposal, changes: Iterable[ProposedChange]) -> dict[str, Any]:
    """A copy of ``nb`` with ``changes`` applied, in the proposal's order."""
    out = copy.deepcopy(nb)
    for change in changes:
        apply_change(out, proposal, change)
    return out


# ---------------------------------------------------------------------- diffs (nbdime)

def _as_notebook(nb: dict[str, Any], cells: list[dict[str, Any]]) -> dict[str, Any]:
    return _rejoined({"nbformat": nb.get("nbformat", 4), "nbformat_minor": nb.get("nbformat_minor", 5),
                      "metadata": {}, "cells": cells})


def _rejoined(nb: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``nb`` with its multi-line strings as one string each (as nbformat reads
    them), so a source kept as a list of lines and one kept whole compare by their text."""
    from nbformat import from_dict
    from nbformat.v4.rwbase import rejoin_lines

    return rejoin_lines(from_dict(copy.deepcopy(nb)))


def change_diff(nb: dict[str, Any], proposal: Proposal, change: ProposedChange) -> list[dict[str, Any]]:
    """nbdime's diff of the cell the change touches, before and after (against ``nb`` as it
    is now): an added cell, a patched source and outputs, or a removed cell.

    Raises:
        ProposalConflict: the change no longer applies to ``nb``.
    """
    from nbdime import diff_notebooks

    index = _check_anchor(nb, change)
    before = [copy.deepcopy(nb["cells"][index])] if change.op != "insert" and index is not None else []
    after = [] if change.op == "delete" else [proposed_cell(proposal, change)]
    if change.op == "replace" and before:
        after[0]["id"] = before[0].get("id")
    return _plain(diff_notebooks(_as_notebook(nb, before), _as_notebook(nb, after)))


def _plain(value: Any) -> Any:
    """nbdime's diff entries (its own dict and list types) as plain JSON values."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def decided(changes: Sequence[ProposedChange], statuses: dict[str, ChangeStatus], wanted: Sequence[str] | None,
            *, whole: bool) -> list[ProposedChange]:
    """The pending changes a decision names (``wanted`` ids, or all of them when ``whole``).

    Raises:
        ProposalConflict: an id that is not the proposal's, or a change already decided.
    """
    ids = {c.change_id for c in changes}
    if not whole:
        unknown = [w for w in wanted or [] if w not in ids]
        if unknown:
            raise ProposalConflict(f"the proposal has no change {unknown[0]!r}", reason="unknown_change",
                                   hint="use the change ids GET .../proposals lists")
        done = [w for w in wanted or [] if statuses.get(w, "pending") != "pending"]
        if done:
            raise ProposalConflict(f"change {done[0]!r} was {statuses[done[0]]} already", reason="already_decided")
        chosen = set(wanted or [])
        return [c for c in changes if c.change_id in chosen]
    return [c for c in changes if statuses.get(c.change_id, "pending") == "pending"]
