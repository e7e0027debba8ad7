"""Timing helpers and the report that prints ratios."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field


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
    name: str
    ours: float
    baseline: float
    baseline_name: str
    unit: str = "s"

    @property
    def ratio(self) -> float:
        return self.ours / self.baseline if self.baseline else float("inf")


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, ours: float, baseline: float, baseline_name: str, unit: str = "s") -> None:
        self.rows.append(Row(name, ours, baseline, baseline_name, unit))

    def note(self, text: str) -> None:
        self.notes.append(text)

    def print(self) -> None:
        width = max((len(r.name) for r in self.rows), default=10)
        print(f"\n{'measurement':<{width}}  {'ours':>12}  {'baseline':>12}  {'ratio':>7}  baseline")
        for r in self.rows:
            print(
                f"{r.name:<{width}}  {_figure(r.ours, r.unit):>12}  {_figure(r.baseline, r.unit):>12}  "
                f"{r.ratio:>6.2f}x  {r.baseline_name}"
            )
        for n in self.notes:
            print(f"  note: {n}")


def _figure(value: float, unit: str) -> str:
    """A measured value as printed: counts whole, times with four decimals.

    >>> _figure(3135.0, "tok"), _figure(0.49651, "s")
    ('3,135tok', '0.4965s')
    """
    if unit == "tok":
        return f"{value:,.0f}{unit}"
    return f"{value:.4f}{unit}"
