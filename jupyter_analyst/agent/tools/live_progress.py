"""How far a running SQL step is, told while it runs.

A long query used to show only how long it had run. Where the engine estimates how much of
a query is done (DuckDB), :class:`LiveProgress` reads that estimate every ``every_s`` once the
query has run ``after_s`` (a quick query says nothing), and tells it as a ``step_progress``
event when its whole percentage has risen: at most a hundred events a step, however long it
runs, persisted like any event so a reload shows where it got. An engine without an
estimate tells nothing: no percentage is ever made up. Reading the estimate never waits on
the query, so the step's result, its stop and its timeout are the query's as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ...events import StepProgress
from ...sql import QueryProgress

#: How often the engine's estimate is read while a query runs (seconds).
EVERY_S = 0.5
#: How long a query runs before its progress is told (seconds): a quick one says nothing.
AFTER_S = 1.0

Emit = Callable[[StepProgress], Awaitable[Any]]


class LiveProgress:
    """A running query's progress, told through ``emit`` as it rises."""

    def __init__(
        self, emit: Emit, call_id: str, progress: QueryProgress, *, every_s: float | None = None,
        after_s: float | None = None,
    ) -> None:
        self._emit = emit
        self._call_id = call_id
        self._progress = progress
        self._every_s = EVERY_S if every_s is None else every_s
        self._after_s = AFTER_S if after_s is None else after_s
        self._told = -1
        self._task = asyncio.get_running_loop().create_task(self._tell_forever())

    async def close(self) -> None:
        """The step ended (or was stopped): nothing more is told."""
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _tell_forever(self) -> None:
        # The run may have started before the step was called (while its SQL was checked).
        await asyncio.sleep(max(self._after_s - (time.perf_counter() - self._progress.started), 0.0))
        while True:
            await self._tell()
            await asyncio.sleep(self._every_s)

    async def _tell(self) -> None:
        percent = self._progress.percent()
        if percent is None or percent <= self._told:
            return
        self._told = percent
        elapsed = round(time.perf_counter() - self._progress.started, 3)
        await self._emit(StepProgress(call_id=self._call_id, percent=percent, elapsed_s=elapsed))
