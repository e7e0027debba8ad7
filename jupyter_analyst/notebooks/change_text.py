"""A proposal as plain text for a terminal: each change's source difference, and each output
the cell made in the sandbox in one line.

nbdime's pretty printer shows a notebook's JSON structure (metadata, output mime bundles,
escape codes kept in tracebacks); a person deciding on a proposal reads the code. This says
what changes in the cell's source, line by line, and what the cell showed, summarised; the
terminal's colours are the caller's (``Line.kind`` says which).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from .outline import _cells, _text
from .proposals import Proposal, ProposedChange

LineKind = Literal["head", "add", "remove", "same", "note"]
#: How much of one output line is shown.
OUTPUT_CHARS = 100
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Line:
    kind: LineKind
    text: str


def plain(text: str) -> str:
    """``text`` without terminal escape codes and control characters.

    >>> plain("\\x1b[0;31mValueError\\x1b[0m: boom\\r")
    'ValueError: boom'
    """
    return _CONTROL.sub("", _ANSI.sub("", text))


def _one_line(text: str) -> str:
    lines = [ln for ln in plain(text).splitlines() if ln.strip()]
    if not lines:
        return "(empty)"
    # A short first line (a table's header, a Series' index name) says little alone: the
    # next one goes along.
    shown = 2 if len(lines) > 1 and len(lines[0].strip()) < 30 else 1
    first = " | ".join(ln.strip() for ln in lines[:shown])
    if len(first) > OUTPUT_CHARS:
        first = first[: OUTPUT_CHARS - 3] + "..."
    return first + (f" (+{len(lines) - shown} more lines)" if len(lines) > shown else "")


def output_line(output: dict[str, Any]) -> str:
    """One notebook output in one line.

    >>> output_line({"output_type": "stream", "name": "stdout", "text": "sum is 42\\n"})
    'stdout: sum is 42'
    >>> output_line({"output_type": "execute_result", "data": {"text/plain": "region_id\\n5    192506.67\\n1    150581.09"}})
    'result: region_id | 5    192506.67 (+1 more lines)'
    >>> output_line({"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "<Figure>"}})
    'display: image/png'
    >>> output_line({"output_type": "error", "ename": "NameError", "evalue": "name 'rev' is not defined"})
    "error: NameError: name 'rev' is not defined"
    """
    kind = output.get("output_type")
    if kind == "stream":
        return f"{output.get('name', 'stdout')}: {_one_line(_text(output.get('text')))}"
    if kind == "error":
        return f"error: {plain(str(output.get('ename', '')))}: {_one_line(str(output.get('evalue', '')))}"
    data = output.get("data") if isinstance(output.get("data"), dict) else {}
    rich = [m for m in data if m != "text/plain"]
    label = "result" if kind == "execute_result" else "display"
    if rich and not (kind == "execute_result" and "text/plain" in data):
        return f"{label}: {', '.join(sorted(rich))}"
    return f"{label}: {_one_line(_text(data.get('text/plain')))}"


def _source_of(nb: dict[str, Any], cell_id: str | None) -> str:
    for cell in _cells(nb):
        if cell.get("id") == cell_id:
            return _text(cell.get("source"))
    return ""


def _diff(old: str, new: str) -> Iterator[Line]:
    if not old:
        yield from (Line("add", f"+ {ln}") for ln in new.splitlines())
        return
    hunks = 0
    for ln in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=2):
        if ln.startswith(("---", "+++")):
            continue
        if ln.startswith("@@"):
            hunks += 1
            if hunks > 1:
                yield Line("note", "  ...")  # unchanged lines between two changed parts
            continue
        mark = ln[:1]
        kind: LineKind = "add" if mark == "+" else "remove" if mark == "-" else "same"
        yield Line(kind, f"{mark or ' '} {ln[1:]}")


def change_lines(nb: dict[str, Any], change: ProposedChange, status: str = "pending") -> Iterator[Line]:
    """One change: a heading (what, where, why, and its status when decided), the source's
    difference, and its sandbox outputs one line each."""
    where = f"after {change.after or 'the top'}" if change.op == "insert" else f"cell {change.cell_id}"
    what = {"insert": f"new {change.cell_type} cell {change.change_id}", "replace": "replace",
            "delete": "delete"}[change.op]
    said = "" if status == "pending" else f" [{status}]"
    yield Line("head", f"{what} {where}: {change.reason}{said}")
    if status == "withdrawn":
        return  # the model took it back: nothing of it is offered
    old = _source_of(nb, change.cell_id) if change.op != "insert" else ""
    new = "" if change.op == "delete" else change.source
    if change.op == "delete":
        yield from (Line("remove", f"- {ln}") for ln in old.splitlines())
    else:
        lines = list(_diff(old, new))
        yield from lines if lines else [Line("note", "  (source unchanged)")]
    if change.run is not None:
        if not change.run.outputs:
            yield Line("note", f"  ran in the sandbox: {change.run.status}, no output")
        for output in change.run.outputs:
            yield Line("note", f"  output {output_line(output)}")
        if change.run.status != "ok" and change.run.error and not any(
                o.get("output_type") == "error" for o in change.run.outputs):
            yield Line("note", f"  failed: {_one_line(change.run.error)}")
    if change.undefined:
        yield Line("note", f"  reads {', '.join(change.undefined)}, which no cell before it defines: "
                           "run in your kernel it raises NameError")


def proposal_lines(nb: dict[str, Any], proposals: Iterable[Proposal],
                   statuses: dict[str, str] | None = None) -> list[Line]:
    """The proposals' changes against ``nb`` (the notebook as it was when proposed), each as
    :func:`change_lines` says it."""
    out: list[Line] = []
    for proposal in proposals:
        said = [(statuses or {}).get(c.change_id, "pending") for c in proposal.changes]
        if said and all(s == "withdrawn" for s in said):
            out.append(Line("head", f"proposal {proposal.proposal_id}: withdrawn by the model, replaced or taken back"))
            continue
        failed = ", a cell failed in the sandbox" if proposal.failed else ""
        out.append(Line("head", f"proposal {proposal.proposal_id} ({len(proposal.changes)} change(s){failed})"))
        for change in proposal.changes:
            out.extend(change_lines(nb, change, (statuses or {}).get(change.change_id, "pending")))
    return out
