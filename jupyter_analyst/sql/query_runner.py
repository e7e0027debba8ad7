"""The query runner: executes prepared queries off the event loop, straight to Parquet.

The runner knows no engine: each source runs its own queries (``source_engine.py``), and the
runner gives each run its thread, its time limit and its end. The same query on the same data
must give the same bytes (fingerprints are sha256 of the file), so a query without its own
ORDER BY gets a total order, and the writer's settings are fixed. The file is written in one
pass from the engine and hashed on its way to the disk (``stream.py``, ``batch_writer.py``);
what the step reports (columns, a sample, the time range) is read from the file's footer and
first rows, never from a second run of the query.

Rows past the row cap are dropped, never silently: the result says how many (counted
within a time allowance; past it, only that there were more).
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from ..errors import QueryFailed
from .batch_writer import cap_dropped
from .stream import Staging
from .query_model import ClearedQuery, PreparedQuery, QueryResult
from .query_progress import QueryProgress
from .source_engine import QueryRun, RunningQuery, SourceEngine

#: Counting the rows past the cap may take this long at least (or as long as the query did).
COUNT_ALLOWANCE_S = 2.0


#: How often a query that is no longer wanted is interrupted again until its thread ends.
_INTERRUPT_EVERY_S = 0.05
#: How long a query's thread is waited for once it is stopped (past its timeout, or no longer
#: wanted): an interrupt lands within a vector, so a call still running by then is one that
#: takes none (a single huge value). On DuckDB its engine process is then killed; on other
#: engines its connection is parked until it returns (``parking.py``).
GIVE_UP_S = 2.0
#: How long a thread is waited for once its engine process was killed (its calls fail at once).
KILLED_LETS_GO_S = 5.0


class QueryRunner:
    """Runs queries of one source in its worker threads, with a timeout and a row cap."""

    def __init__(
        self, source: SourceEngine, *, timeout_s: float = 60.0, row_cap: int = 1_000_000, give_up_s: float = GIVE_UP_S,
    ) -> None:
        self.source = source
        self.timeout_s = timeout_s
        self.row_cap = row_cap
        self.give_up_s = give_up_s

    async def run_to_parquet(
        self, query: PreparedQuery | ClearedQuery, dest: Path, progress: QueryProgress | None = None
    ) -> QueryResult:
        """Execute ``query`` and write its rows to ``dest``, a new path in a folder of the
        host's own (a staging file: the caller publishes it); returns a summary with the
        file's fingerprint. When the query fails, nothing is left at ``dest``. While it runs,
        ``progress`` has the engine's estimate of it, where the engine makes one (DuckDB).

        A query whose engine call takes no interrupt ends at its timeout all the same: where
        the engine can (DuckDB) its process is killed (the next query starts another), on
        other engines its connection is set aside until the call returns (``parking.py``).

        Raises:
            QueryFailed: ``query_timeout`` past the timeout, ``query_memory`` past the engine
                worker's memory, ``query_failed`` on an engine error (or its worker's death),
                ``engine_busy`` while the source has as many calls set aside as it may.
            FileExistsError: ``dest`` exists.
        """
        self.source.admit()
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.touch(exist_ok=False)  # ours alone from here on
        started = time.perf_counter()
        try:
            result = await self._run(query, dest, started, progress)
        except BaseException:
            dest.unlink(missing_ok=True)
            raise
        result.elapsed_s = time.perf_counter() - started
        return result

    async def _run(
        self, query: PreparedQuery | ClearedQuery, dest: Path, started: float, progress: QueryProgress | None
    ) -> QueryResult:
        cap = int(self.row_cap)
        running = self.source.start(QueryRun(
            sql=query.executable, ordered=query.has_order, row_cap=cap, timeout_s=self.timeout_s,
            count_allowance_s=COUNT_ALLOWANCE_S, started=started,
        ))
        staging = Staging(dest)
        kill = running.kill if running.kills else None
        watched = progress if progress is not None and running.reports_progress else None
        runs: list[Future] = []

        def work() -> QueryResult:  # the name a query's thread is known by while it runs
            return running.write(dest, staging)

        try:
            if watched is not None:
                # Read on the event loop while the statement runs; never after this returns.
                watched.watch(running.progress)
            try:
                result = await self._with_timeout(work, cancel=running.interrupt, kill=kill, runs=runs)
            finally:
                if watched is not None:
                    watched.unwatch()
            if running.counts_apart and result.rows >= cap:
                total = await self._count(running, started, runs)
                cap_dropped(result, total, cap)
            return result
        finally:
            left = [run for run in runs if not run.done()]
            if left:
                staging.give_up()
                running.abandon(left)

    async def _count(self, running: RunningQuery, started: float, runs: list[Future]) -> int | None:
        """All the rows of the query, or ``None`` when counting takes longer than allowed."""
        spent = time.perf_counter() - started
        allowance = min(max(COUNT_ALLOWANCE_S, spent), max(self.timeout_s - spent, 0.0))
        try:
            return await self._with_timeout(running.count, cancel=running.interrupt,
                                            kill=running.kill if running.kills else None,
                                            timeout_s=allowance, runs=runs)
        except QueryFailed:
            return None

    # ------------------------------------------------------------------ shared

    async def _with_timeout(
        self, work, *, cancel, kill=None, timeout_s: float | None = None, runs: list[Future] | None = None
    ) -> Any:
        """Run ``work`` in one of the source's threads; past the timeout ``cancel`` stops it in
        the engine and ``query_timeout`` is raised once its thread has let go, or after
        ``give_up_s`` when it does not: then ``kill`` (when given) ends its engine process, and
        the thread lets go (``runs`` gets the thread's call: whether it let go)."""
        seconds = self.timeout_s if timeout_s is None else timeout_s
        call = self.source.executor.submit(work)
        if runs is not None:
            runs.append(call)
        returned = _returned(call)
        try:
            done, _ = await asyncio.wait([returned], timeout=seconds)
            if not done:
                raise _timeout(seconds, await _stop(call, returned, cancel, kill=kill, give_up_s=self.give_up_s))
            return call.result()
        except asyncio.CancelledError:
            # A query nobody wants any more (a stopped turn, a run started early and then not
            # needed): stopped, and its thread done with its files before this returns; when
            # its call takes no interrupt, its engine process killed, or (SQLAlchemy) its
            # connection set aside like a timed-out query's.
            await asyncio.shield(_stop(call, returned, cancel, kill=kill, give_up_s=self.give_up_s))
            raise
        except QueryFailed:
            raise
        except Exception as exc:  # the engine's own errors (SQLAlchemy's, the drivers')
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise QueryFailed(f"the query failed: {message}", reason="query_failed") from exc


def _returned(call: Future) -> asyncio.Future:
    """A future of the running loop's, done when ``call`` (a thread's) has returned.

    Unlike ``asyncio.wrap_future`` it carries no outcome: a call that outlives its query (and
    perhaps the loop) settles nothing on a loop that is gone, and its outcome stays with it.
    """
    loop = asyncio.get_running_loop()
    returned = loop.create_future()

    def settle() -> None:
        if not returned.done():
            returned.set_result(None)

    def on_return(_call: Future) -> None:
        try:
            loop.call_soon_threadsafe(settle)
        except RuntimeError:  # the loop has closed: nobody waits for this call any more
            pass

    call.add_done_callback(on_return)
    return returned


async def _stop(call: Future, returned: asyncio.Future, cancel: Any, *, give_up_s: float, kill: Any = None) -> str:
    """Stop the statement ``call`` runs: ``"stopped"`` when its thread let go, ``"killed"``
    when its engine process had to be ended for it, ``"left"`` when it runs on.

    A call still queued for a thread never starts. An interruption that comes before the
    statement has begun is lost, so it is repeated until the thread is done; past
    ``give_up_s`` (a call that takes no interrupt) ``kill`` ends its engine process, whose
    statements then fail at once, or without one the thread is left to end on its own.
    """
    if call.cancel():
        return "stopped"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + give_up_s
    while not call.done():
        if loop.time() >= deadline:
            if kill is None:
                return "left"
            kill()
            await asyncio.wait([returned], timeout=KILLED_LETS_GO_S)
            return "killed" if call.done() else "left"
        cancel()
        await asyncio.wait([returned], timeout=_INTERRUPT_EVERY_S)
    return "stopped"


_SLOW_HINT = ("read fewer rows: filter before joining (a WHERE on a date or a key), join on keys, "
              "aggregate before a join; a LIMIT only shortens what is returned")


def _timeout(seconds: float, how: str) -> QueryFailed:
    """The error of a query past its time limit: ``how`` it ended (see :func:`_stop`).

    >>> _timeout(2, "killed").message
    'the query ran past 2 s; its engine call took no interrupt, so its engine process was ended'
    >>> _timeout(2, "stopped").hint
    'read fewer rows: filter before joining (a WHERE on a date or a key), join on keys, aggregate before a join; a LIMIT only shortens what is returned'
    >>> _timeout(2, "left").message
    'the query ran past 2 s; it was given up, and its engine call is still finishing (its connection is set aside)'
    """
    # The time goes into the rows a query reads and joins, not the rows it returns: a LIMIT
    # does not shorten a count or a sum, so the hint names what does.
    if how == "stopped":
        return QueryFailed(f"the query ran past {seconds:g} s and was stopped", reason="query_timeout",
                           hint=_SLOW_HINT)
    hint = ("a single value built in one call (a huge string, list or regular-expression replace) "
            "cannot be stopped midway: build smaller values; " + _SLOW_HINT)
    if how == "killed":
        return QueryFailed(
            f"the query ran past {seconds:g} s; its engine call took no interrupt, so its engine process was ended",
            reason="query_timeout", hint=hint,
        )
    return QueryFailed(
        f"the query ran past {seconds:g} s; it was given up, and its engine call is still finishing "
        "(its connection is set aside)",
        reason="query_timeout", hint=hint,
    )
