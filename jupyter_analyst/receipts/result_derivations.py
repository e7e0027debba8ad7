"""Numbers an answer computed from cells of one result it was shown, cited there or not: a
column's total, or one operation on two cells of a column or of a row.

"In total 159,359,854 events" may sum the two rows of a result the answer never quotes, or
quotes in another paragraph (``derivations.py`` takes its operands only from cited numbers
in the target's sentence). It is matched here, after those, within the precision written:
a sum or difference also when the writer added the operands rounded to the target's own
precision (each off by half of it), so the interval is widened by half the precision.

Operands no sentence ties to the target make chance matches likelier, so the target must be
written more precisely the more combinations could hit it:

* a column's total (one candidate a column): to :data:`TOTAL_FIGURES` significant figures;
* a pair (of a column's cells, or a row's): to :data:`PAIR_FIGURES`, and only in a result
  of at most :data:`PAIR_ROWS` rows and :data:`PAIR_COLUMNS` columns, which also bounds the
  work to a few thousand pairs a result.

The latest result is tried first (as cells are preferred), then totals before pairs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations

from .citations import OperandCell, Operation
from .claims import Claim
from .evidence import Evidence

#: Significant figures a target needs to be matched as a column's total.
TOTAL_FIGURES = 3
#: Significant figures a target needs to be matched as an operation on two uncited cells.
PAIR_FIGURES = 5
#: The largest result whose pairs of cells are tried.
PAIR_ROWS = 20
PAIR_COLUMNS = 12
#: The results tried at most (the latest).
RESULTS = 20


@dataclass(frozen=True, slots=True)
class FromResult:
    """A target matched: ``operation`` on ``cells`` of one result gives ``value``."""

    operation: Operation
    cells: list[OperandCell]
    value: float


def derive_from_results(target: Claim, evidence: Sequence[Evidence]) -> FromResult | None:
    """The first derivation of ``target`` from the cells of one result (the module's rules).

    >>> table = Evidence(call_id="c", tool="run_sql", columns=["kind", "n"],
    ...                  rows=[["web", 106176386.41], ["app", 53183468.33]])
    >>> found = derive_from_results(Claim(start=0, end=11, text="159,359,854", kind="number",
    ...                                   value=159359854.0, precision=1.0), [table])
    >>> found.operation, [(c.row, c.column) for c in found.cells]
    ('total', [(0, 'n'), (1, 'n')])
    """
    if not isinstance(target.value, float) or target.kind == "year" or not target.value or not target.precision:
        return None
    figures = -math.log10(target.precision / abs(target.value))  # about the significant figures written
    if figures < TOTAL_FIGURES - 1:
        return None
    percent = target.kind == "percent"
    low, high = target.bounds()
    slack = 1e-9 * max(1.0, abs(target.value))
    widened = (low - target.precision / 2 - slack, high + target.precision / 2 + slack)
    for item in list(evidence)[::-1][:RESULTS]:
        columns = _numeric_columns(item)
        if not percent:
            for column, cells in columns.items():
                total = math.fsum(v for _, v in cells)
                if len(cells) >= 2 and len(cells) == len(item.rows) and _within(total, target, widened, signed=True):
                    return FromResult("total", [_cell(item, r, column) for r, _ in cells], total)
        if figures < PAIR_FIGURES - 1 or len(item.rows) > PAIR_ROWS or len(item.columns) > PAIR_COLUMNS:
            continue
        groups = [[(r, c, v) for r, v in cells] for c, cells in columns.items()]
        groups += [[(r, c, v) for c, cells in columns.items() for rr, v in cells if rr == r]
                   for r in range(len(item.rows))]
        for group in groups:
            for (ra, ca, a), (rb, cb, b) in permutations(group, 2):
                for operation, value in _results(a, b, percent):
                    bounds = widened if operation in ("sum", "difference") else (low - slack, high + slack)
                    if _within(value, target, bounds, signed=operation != "percent_change" or target.signed):
                        return FromResult(operation, [_cell(item, ra, ca), _cell(item, rb, cb)], value)
    return None


def _within(value: float, target: Claim, bounds: tuple[float, float], *, signed: bool) -> bool:
    """``value`` (or its magnitude, for a change written without its sign) in ``bounds``."""
    return bounds[0] <= (value if signed or target.signed else abs(value)) <= bounds[1]


def _numeric_columns(item: Evidence) -> dict[str, list[tuple[int, float]]]:
    """Each column's numeric cells (a boolean, NaN or text is none), as (row, value)."""
    found: dict[str, list[tuple[int, float]]] = {}
    for row, values in enumerate(item.rows):
        for column, value in zip(item.columns, values, strict=True):
            if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
                found.setdefault(column, []).append((row, float(value)))
    return found


def _results(a: float, b: float, percent: bool) -> list[tuple[Operation, float]]:
    """What each operation makes of two plain cells that a target of this kind can state."""
    if percent:
        return [("percent_change", (a - b) / b * 100), ("share", a / b * 100)] if b else []
    return [("difference", a - b), ("sum", a + b)] + ([("ratio", a / b)] if b else [])


def _cell(item: Evidence, row: int, column: str) -> OperandCell:
    return OperandCell(call_id=item.call_id, artifact_id=item.artifact_id, row=row, column=column)
