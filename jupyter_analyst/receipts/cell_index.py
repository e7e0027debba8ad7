"""The evidence's values, indexed so that each claim is a lookup, not a scan of every cell.

Numbers are kept in one list sorted by value: the cells that support a claim are those in
its interval, found by bisection, and the one nearest the value written is next to where
the value would sort. An answer with hundreds of claims over results with tens of thousands
of cells costs a sort and a few bisections a claim. Dates are kept by day and by month.

Where several cells hold the same value, their order is the preference, so it is
deterministic: the latest step first (a model refines its queries; the answer reports what
it saw last), then a table's cells before the step's named values (a row and column say
more), then the earliest row, then the leftmost column.

Text cells holding a number or an ISO date (a preview that rendered a decimal or a date as
text) count as that number or date.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from .evidence import Cell, Evidence

#: The cells indexed at most; past them the receipts say they were cut.
MAX_CELLS = 500_000
#: The cells of one value handed back for a claim to choose among (by the names beside them).
GROUP = 64
_NUMERIC_TEXT = re.compile(r"[-+]?[$€£¥]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d{1,3})?%?")
_MARKS = re.compile(r"[,$€£¥%]")
_ISO_TEXT = re.compile(r"(\d{4})-(\d{2})(?:-(\d{2})(?:[T ][\d:.+\-Z]{0,30})?)?")

#: A cell's place in the preference among cells of one value (smaller first).
_Order = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CellRef:
    """Where one value is: the step (its index in the evidence), the row (None for a named
    value) and the column or name."""

    evidence: int
    row: int | None
    column: str
    value: Cell
    number: float | None = None
    """The value as a number, when it is one."""


class CellIndex:
    """The numbers and dates of a list of :class:`Evidence`, looked up by interval and day.

    >>> from .evidence import Evidence
    >>> index = CellIndex([Evidence(call_id="a", tool="run_sql", columns=["n"], rows=[[21.93], [22.4]])])
    >>> distance, refs = index.nearest(21.85, 21.95, 21.9)
    >>> [(r.row, r.value) for r in refs]
    [(0, 21.93)]
    >>> index.nearest(21.85, 21.95, 21.9 + 10)
    """

    def __init__(self, evidence: Sequence[Evidence], max_cells: int = MAX_CELLS) -> None:
        self.evidence = list(evidence)
        self.truncated = False
        keyed: list[tuple[float, _Order, CellRef]] = []
        days: dict[date, list[tuple[_Order, CellRef]]] = {}
        months: dict[tuple[int, int], list[tuple[_Order, CellRef]]] = {}
        seen = 0
        for position, item in enumerate(self.evidence):
            cells = [(row, column, index, value) for row, values in enumerate(item.rows)
                     for index, (column, value) in enumerate(zip(item.columns, values, strict=True))]
            cells += [(None, name, index, value) for index, (name, value) in enumerate(item.scalars.items())]
            for row, column, column_index, value in cells:
                seen += 1
                if seen > max_cells:
                    self.truncated = True
                    break
                order: _Order = (-position, row is None, row or 0, column_index)
                if (number := _number(value)) is not None:
                    keyed.append((number, order, CellRef(position, row, column, value, number)))
                    continue
                ref = CellRef(position, row, column, value)
                if (day := _day(value)) is not None:
                    whole_day, first = day
                    if whole_day is not None:
                        days.setdefault(whole_day, []).append((order, ref))
                    month = (first.year, first.month)
                    months.setdefault(month, []).append(((whole_day not in (None, first),) + order, ref))
            if self.truncated:
                break
        keyed.sort(key=lambda k: (k[0], k[1]))
        self._values = [k[0] for k in keyed]
        self._refs = [k[2] for k in keyed]
        self._days = {d: [ref for _, ref in sorted(found, key=lambda f: f[0])] for d, found in days.items()}
        self._months = {m: [ref for _, ref in sorted(found, key=lambda f: f[0])] for m, found in months.items()}

    def nearest(self, low: float, high: float, target: float) -> tuple[float, list[CellRef]] | None:
        """The cells of the value in [``low``, ``high``] nearest ``target`` (at most
        :data:`GROUP`, preferred first) and its distance from ``target``; None if none is there.

        The interval is closed and widened by a billionth of the value, so a float that
        prints as the edge (21.85 is 21.850000000000001) is inside.
        """
        slack = 1e-9 * max(1.0, abs(target))
        low, high = low - slack, high + slack
        i = bisect_left(self._values, target)
        found = [v for v in (self._values[i] if i < len(self._values) else None,
                             self._values[i - 1] if i > 0 else None) if v is not None and low <= v <= high]
        if not found:
            return None
        value = min(found, key=lambda v: (abs(v - target), -v))
        start = bisect_left(self._values, value)
        end = min(bisect_right(self._values, value), start + GROUP)
        return abs(value - target), self._refs[start:end]

    def on_day(self, day: date) -> list[CellRef]:
        """The cells holding ``day`` (a date, a time on that day, or its ISO text)."""
        return self._days.get(day, [])[:GROUP]

    def in_month(self, year: int, month: int) -> list[CellRef]:
        """The cells holding a day of that month, its first day (the month as a grouped
        query writes it) or its ``YYYY-MM`` text first."""
        return self._months.get((year, month), [])[:GROUP]


def _number(value: Cell) -> float | None:
    """The cell as a finite number, if it is one (a boolean is not).

    >>> _number(1620), _number("1,620.00"), _number("45%"), _number(True), _number(float("nan")), _number("Q3"), _number(10**400)
    (1620.0, 1620.0, 45.0, None, None, None, None)
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int) and abs(value) >= 10**300:
        return None  # past a float's range
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str) and len(value) <= 40 and _NUMERIC_TEXT.fullmatch(text := value.strip()):
        number = float(_MARKS.sub("", text))
    else:
        return None
    return number if math.isfinite(number) else None


def _day(value: Cell) -> tuple[date | None, date] | None:
    """The cell as a date: its day (None for a ``YYYY-MM`` text) and its month's first day.

    >>> _day(datetime(2024, 3, 5, 10)), _day("2024-03"), _day("2024-13-01")
    ((datetime.date(2024, 3, 5), datetime.date(2024, 3, 1)), (None, datetime.date(2024, 3, 1)), None)
    """
    if isinstance(value, datetime):
        day: date | None = value.date()
    elif isinstance(value, date):
        day = value
    elif isinstance(value, str) and len(value) <= 40 and (iso := _ISO_TEXT.fullmatch(value.strip())):
        try:
            first = date(int(iso[1]), int(iso[2]), 1)
            day = date(int(iso[1]), int(iso[2]), int(iso[3])) if iso[3] else None
        except ValueError:
            return None
        return day, first
    else:
        return None
    assert day is not None
    return day, day.replace(day=1)
