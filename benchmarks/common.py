"""Timing helpers and the report every benchmark fills: each figure beside its raw floor and,
where a user would pick another tool instead, that peer, all measured in the same run."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any


def median_time(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of ``repeat`` calls of ``fn`` (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def median_time_async(fn: Callable[[], Awaitable[object]], repeat: int) -> float:
    """Median wall time of ``repeat`` awaited calls of ``fn`` (after one warm-up call)."""
    await fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


@dataclass
class Row:
    """One measured figure: ours, the raw floor (``baseline``) and optionally the peer."""

    name: str
    ours: float
    baseline: float
    baseline_name: str
    unit: str = "s"
    peer: float | None = None
    peer_name: str | None = None
    bench: str = ""

    @property
    def ratio(self) -> float:
        """Ours over the floor."""
        return _ratio(self.ours, self.baseline)

    @property
    def peer_ratio(self) -> float | None:
        """Ours over the peer, when a peer was measured."""
        return None if self.peer is None else _ratio(self.ours, self.peer)

    def line(self, width: int = 0) -> str:
        """The row as printed on the terminal."""
        text = (f"{self.name:<{width}}  {figure(self.ours, self.unit):>12}  {figure(self.baseline, self.unit):>12}  "
                f"{self.ratio:>6.2f}x  {self.baseline_name}")
        if self.peer is not None:
            text += f"  | peer {figure(self.peer, self.unit)} {self.peer_ratio:.2f}x  {self.peer_name}"
        return text


@dataclass
class Report:
    """What one benchmark measured. ``on_row`` sees each row as it is added, so a long run
    shows its figures as they come and a crash keeps what was measured before it."""

    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    quick: bool = False
    """A short run: smaller data, fewer repetitions; figures are indicative only."""
    bench: str = ""
    on_row: Callable[[Report], None] | None = field(default=None, repr=False)

    def add(self, name: str, ours: float, baseline: float, baseline_name: str, unit: str = "s", *,
            peer: float | None = None, peer_name: str | None = None) -> None:
        """Record a figure against its floor (and its peer when given)."""
        row = Row(name, ours, baseline, baseline_name, unit, peer, peer_name, self.bench)
        self.rows.append(row)
        print(row.line(), flush=True)
        self._changed()

    def note(self, text: str) -> None:
        """Record a sentence a reader needs to judge the figures."""
        self.notes.append(text)
        print(f"  note: {text}", flush=True)
        self._changed()

    def _changed(self) -> None:
        if self.on_row is not None:
            self.on_row(self)

    def to_json(self) -> dict[str, Any]:
        """The rows and notes as JSON-ready data (see :func:`from_json`)."""
        return {"rows": [asdict(r) for r in self.rows], "notes": list(self.notes)}

    def print(self) -> None:
        """All rows as one aligned table."""
        print_rows(self.rows, self.notes)


def from_json(data: dict[str, Any]) -> tuple[list[Row], list[str]]:
    """Rows and notes back from :meth:`Report.to_json`."""
    return [Row(**r) for r in data.get("rows", [])], list(data.get("notes", []))


def print_rows(rows: list[Row], notes: list[str] = ()) -> None:  # type: ignore[assignment]
    """An aligned table of rows, with the notes under it."""
    width = max((len(r.name) for r in rows), default=10)
    print(f"\n{'measurement':<{width}}  {'ours':>12}  {'floor':>12}  {'ratio':>7}  floor, then peer")
    for r in rows:
        print(r.line(width))
    for n in notes:
        print(f"  note: {n}")


def _ratio(ours: float, other: float) -> float:
    return ours / other if other else float("inf")


def figure(value: float, unit: str) -> str:
    """A measured value as printed: counts whole, times with four decimals.

    >>> figure(3135.0, "tok"), figure(0.49651, "s"), figure(812.0, "MB")
    ('3,135tok', '0.4965s', '812MB')
    """
    if unit in ("tok", "MB", "events", "chars", "tasks", "calls", "steps"):
        return f"{value:,.0f}{unit}"
    return f"{value:.4f}{unit}"
