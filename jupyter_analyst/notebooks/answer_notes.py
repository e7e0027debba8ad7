"""An answer's receipts as the audit notebook's footnotes: under the answer, each cited
number (or name) with the step cell that made it, a link to that cell, and the row and
column that hold it; a number derived from two cited ones with what it is derived from;
an unsupported one marked; then the team's definitions the answer's queries followed, each
with its file and the step that followed it.

The answer is left as the model wrote it (a mark inside its table or emphasis would break
the markdown around it); the notes follow it in the same cell. A cell is linked by its id
(``#cell-id=...``), the anchor nbconvert's HTML gives each cell, so the links hold in the
exported page too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ..receipts import Citation, DefinitionCitation, OperandCell, UnsupportedClaim
from ..untrusted import code_span

#: Notes written at most; the rest are counted.
MAX_NOTES = 40

_OPERATIONS = {"difference": "difference", "sum": "sum", "ratio": "ratio", "percent_change": "percent change",
               "share": "share", "total": "total"}


class StepCell(NamedTuple):
    """Where a step's code cell is: its id and its execution count."""

    cell_id: str
    count: int


def answer_notes(citations: Sequence[Citation], unsupported: Sequence[UnsupportedClaim],
                 cells: Mapping[str, StepCell], definitions: Sequence[DefinitionCitation] = ()) -> str:
    """The footnotes of an answer with these receipts, given the step cells by call id; empty
    when it has none.

    >>> from jupyter_analyst.receipts import Citation, Derivation, UnsupportedClaim
    >>> cited = [Citation(start=0, end=3, text="792", kind="number", value=792, call_id="call_1",
    ...                   artifact_id="a1", row=0, column="orders"),
    ...          Citation(start=8, end=11, text="595", kind="number", value=595, call_id="call_1",
    ...                   artifact_id="a1", row=1, column="orders"),
    ...          Citation(start=20, end=23, text="197", kind="number", value=197, call_id=None,
    ...                   derived=Derivation(operation="difference", of=(0, 1)))]
    >>> lost = [UnsupportedClaim(start=30, end=33, text="12%", kind="percent", value=12.0)]
    >>> print(answer_notes(cited, lost, {"call_1": StepCell("c-7", 3)}))
    **Receipts**
    <BLANKLINE>
    1. `792`: step [In [3]](#cell-id=c-7), row 1, column `orders`
    2. `595`: step [In [3]](#cell-id=c-7), row 2, column `orders`
    3. `197`: derived, the difference of `792` and `595`
    4. `12%`: ⚠️ no step shows this number

    A number computed from cells the answer does not cite names them:

    >>> from jupyter_analyst.receipts import OperandCell
    >>> rows = [OperandCell(call_id="call_1", row=r, column="orders") for r in (0, 1)]
    >>> total = Citation(start=0, end=5, text="1,387", kind="number", value=1387, call_id=None,
    ...                  derived=Derivation(operation="total", cells=rows))
    >>> print(answer_notes([total], [], {"call_1": StepCell("c-7", 3)}).splitlines()[-1])
    1. `1,387`: derived, the total of step [In [3]](#cell-id=c-7)'s column `orders`, rows 1, 2
    """
    lines = []
    for citation in citations:
        lines.append(f"{code_span(citation.text)}: {_source(citation, citations, cells)}")
    for claim in unsupported:
        lines.append(f"{code_span(claim.text)}: ⚠️ no step shows this number")
    used = _definitions(definitions, cells)
    if not lines:
        return used
    shown = [f"{n}. {line}" for n, line in enumerate(lines[:MAX_NOTES], start=1)]
    if len(lines) > MAX_NOTES:
        shown.append(f"\n… and {len(lines) - MAX_NOTES} more (the turn's receipts in the thread hold them all)")
    return "**Receipts**\n\n" + "\n".join(shown) + (f"\n\n{used}" if used else "")


def _definitions(definitions: Sequence[DefinitionCitation], cells: Mapping[str, StepCell]) -> str:
    """The definitions the answer's queries followed, as a note (names and files are the
    context folder's, shown as code).

    >>> d = DefinitionCitation(name="revenue", definition="metric", file="context/m.yml:4", call_id="call_1")
    >>> print(_definitions([d], {"call_1": StepCell("c-7", 3)}))
    **Definitions used**: the team's metric `revenue` (`context/m.yml:4`), in step [In [3]](#cell-id=c-7)
    """
    said = []
    for definition in definitions:
        what = "metric" if definition.definition == "metric" else "verified query"
        cell = cells.get(definition.call_id)
        step = f", in step [In [{cell.count}]](#cell-id={cell.cell_id})" if cell is not None else ""
        said.append(f"the team's {what} {code_span(definition.name)} ({code_span(definition.file)}){step}")
    return f"**Definitions used**: {'; '.join(said)}" if said else ""


def _cells(operands: Sequence[OperandCell], cells: Mapping[str, StepCell]) -> str:
    """The uncited cells a number was computed from: their step, column and rows."""
    first = operands[0]
    cell = cells.get(first.call_id)
    step = f"step [In [{cell.count}]](#cell-id={cell.cell_id})" if cell is not None else \
        f"step {code_span(first.call_id)}"
    columns = ", ".join(dict.fromkeys(code_span(o.column) for o in operands))
    rows = ", ".join(dict.fromkeys(str(o.row + 1) for o in operands))
    return f"{step}'s column {columns}, row{'s' * (len(set(o.row for o in operands)) != 1)} {rows}"


def _source(citation: Citation, citations: Sequence[Citation], cells: Mapping[str, StepCell]) -> str:
    """Where one cited value comes from, in words, with a link to its step's cell."""
    if citation.derived is not None:
        operation = _OPERATIONS.get(citation.derived.operation, citation.derived.operation)
        if citation.derived.of is None:
            return f"derived, the {operation} of {_cells(citation.derived.cells, cells)}"
        first, second = (citations[i].text for i in citation.derived.of)
        return f"derived, the {operation} of {code_span(first)} and {code_span(second)}"
    cell = cells.get(citation.call_id or "")
    # A step of the thread the notebook does not show (it failed, or ran in a cut-off turn).
    step = f"step [In [{cell.count}]](#cell-id={cell.cell_id})" if cell is not None else \
        f"step {code_span(citation.call_id or '?')}"
    where = [step]
    if citation.row is not None:
        where.append(f"row {citation.row + 1}")
    if citation.column is not None:
        where.append(f"column {code_span(citation.column)}")
    return ", ".join(where)
