"""How far a running query is, as its engine estimates it.

DuckDB estimates the share of a running query's work that is done (``query_progress()``,
callable while the query runs in another thread); other engines say nothing. The runner
hands the engine's estimate to a :class:`QueryProgress` for as long as the query runs, and
whoever shows the step reads it from there, on the event loop: the estimate is only read,
never waited for, so it cannot slow, change or hold up the query, its interruption or its
timeout. A run may start before its step is called (while its SQL is still checked), so
the progress is an object of the run's, read by the step once it has one.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class QueryProgress:
    """The engine's estimate of one running query: a percentage, or nothing."""

    def __init__(self) -> None:
        self._estimate: Callable[[], float] | None = None
        self.started = time.perf_counter()
        """When the query began to run (``time.perf_counter``)."""

    def watch(self, estimate: Callable[[], float]) -> None:
        """The query has begun to run: ``estimate`` is its engine's estimate, a percentage
        (negative while it has none). Called on the event loop."""
        self.started = time.perf_counter()
        self._estimate = estimate

    def unwatch(self) -> None:
        """The query is over (its connection may close next): nothing is read from it again."""
        self._estimate = None

    def percent(self) -> int | None:
        """The whole percentage done, as the engine estimates it now; ``None`` while the
        query is not running or the engine has no estimate. Never 100 before the query ends
        (a share rounds down).

        >>> p = QueryProgress(); p.percent() is None
        True
        >>> p.watch(lambda: 43.9); p.percent()
        43
        >>> p.watch(lambda: -1.0); p.percent() is None
        True
        """
        estimate = self._estimate
        if estimate is None:
            return None
        try:
            value = float(estimate())
        except Exception:  # noqa: BLE001 - a connection closing under the query: no estimate now
            return None
        if not 0.0 <= value <= 100.0:  # -1: the engine has no estimate (or NaN)
            return None
        return min(int(value), 99)
