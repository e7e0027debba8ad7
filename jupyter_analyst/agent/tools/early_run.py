"""A ``run_sql`` query's run started before its step is called.

A query's run may start while the checker is still at work on it. The checker says as soon
as the query has passed the read-only guard and names only known tables
(``SqlPreparer.prepare``'s ``on_cleared``). What runs from then on is exactly the text the
finished check would run, so it may start at once, on another core, while the columns are
checked and the step key is worked out. The run is kept when the step is then called
(:meth:`EarlyRun.take`) and dropped otherwise: when the step is reused, refused after all
(an unknown column), or the turn stops. A dropped run is interrupted and its staged file
removed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from ...sql import ClearedQuery, QueryProgress, QueryResult

#: Runs a cleared query into a staged Parquet file, telling its progress: the result and the file.
Execute = Callable[[ClearedQuery, QueryProgress], Awaitable[tuple[QueryResult, Path]]]


class EarlyRun:
    """One query's run, started when the checker cleared it."""

    def __init__(
        self, query: ClearedQuery, task: asyncio.Task[tuple[QueryResult, Path]], progress: QueryProgress
    ) -> None:
        self.query = query
        self.task = task
        self.progress = progress
        self.started = time.perf_counter()
        self.taken = False

    async def take(self, executable: str) -> asyncio.Task[tuple[QueryResult, Path]] | None:
        """The run, for the step that runs ``executable``; ``None`` (and the run dropped) if
        it ran something else, which the checker's two answers never make it do."""
        if self.query.executable != executable:
            await self.drop()
            return None
        self.taken = True
        return self.task

    async def drop(self) -> None:
        """Not wanted: interrupted if still running, its staged file removed; returns once its
        thread has let go of the source (which may be closed next). Does nothing once taken
        (the step owns the run and its file)."""
        if self.taken:
            return
        self.taken = True
        self.task.cancel()
        await asyncio.wait([self.task])
        if not self.task.cancelled() and self.task.exception() is None:  # retrieved: not logged
            self.task.result()[1].unlink(missing_ok=True)


class EarlyStart:
    """Given to the checker as ``on_cleared``: starts the run on the event loop.

    The checker calls it from one of its threads; the run starts only while the check is
    still open, so a run is never started after :meth:`close` has handed out what there is,
    and not when ``unless()`` says so. That is asked in the checker's thread (it may block),
    by :meth:`meanwhile` while the worker checks, or else when the query clears.
    """

    def __init__(self, execute: Execute, unless: Callable[[], bool] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self._execute = execute
        self._unless = unless
        self._skip: bool | None = None
        self._open = True
        self.run: EarlyRun | None = None

    def meanwhile(self) -> None:
        """Ask ``unless()`` now, before the query clears (given to the checker as ``meanwhile``)."""
        if self._unless is not None:
            self._skip = self._unless()

    def __call__(self, query: ClearedQuery) -> None:
        skip = self._skip
        if skip is None and self._unless is not None:
            skip = self._unless()
        if not skip:
            self._loop.call_soon_threadsafe(self._start, query)

    def _start(self, query: ClearedQuery) -> None:
        if self._open and self.run is None:
            progress = QueryProgress()
            self.run = EarlyRun(query, self._loop.create_task(self._execute(query, progress)), progress)

    def close(self) -> EarlyRun | None:
        """The check is over: the run started, if any (later calls start nothing)."""
        self._open = False
        return self.run
