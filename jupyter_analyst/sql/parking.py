"""Engine calls that outlive their query: set aside until they return, and only so many.

SQLite's C functions take no interrupt until they return (a ``replace`` over one long value),
and a PostgreSQL cancel may not land. The runner stops waiting for such a query at its
timeout, but the connection it ran on is busy until the call returns: handing it to the
next query would queue that query behind it. So the connection is *parked*: never closed nor
reused while its call runs, and closed by the thread that ran the call, the moment it returns.

DuckDB sources park nothing: their queries run in an engine worker process, which is killed
when a call takes no interrupt (``engine_process.py``). SQLAlchemy sources keep parking: the
driver's connection lives in the host (a worker per SQLAlchemy source would need the
driver, its credentials and a network connection per process), and SQLite's values are
bounded by the size check, which refuses any size not a constant within the cap.

Each parked call holds one of the source's query threads and some of its engine's memory,
so a source parks at most :data:`PARKED_LIMIT`; while that many are parked a new query is
refused at once with ``engine_busy`` (never left waiting for a thread that may not free up).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future

from ..errors import QueryFailed

#: Calls one source may have running after their queries were given up.
PARKED_LIMIT = 4


class Parking:
    """The calls of one source still running after their queries were given up."""

    def __init__(self, limit: int = PARKED_LIMIT) -> None:
        self.limit = limit
        self._held = 0
        self._when_idle: list[Callable[[], None]] = []
        self._changed = threading.Condition()

    @property
    def count(self) -> int:
        """How many are parked now."""
        with self._changed:
            return self._held

    def admit(self) -> None:
        """Let a new query start, unless the source has all the parked calls it may have.

        Raises:
            QueryFailed: ``engine_busy``.
        """
        with self._changed:
            if self._held >= self.limit:
                raise QueryFailed(
                    f"the data source's engine is still finishing {self._held} earlier queries that ran past "
                    "their time limit; no new query starts until one of them returns",
                    reason="engine_busy",
                    hint="wait a little and try again, with a query that does less work in one value "
                         "(no huge strings or lists built in a single call)",
                )

    def hold(self, calls: Sequence[Future], release: Callable[[], None]) -> None:
        """Park what ``calls`` run on until every one has returned; then ``release`` it (in the
        thread of the call that returned last)."""
        with self._changed:
            self._held += 1
        left = [len(calls)]
        lock = threading.Lock()

        def returned(_call: Future) -> None:
            with lock:
                left[0] -= 1
                if left[0]:
                    return
            try:
                release()
            finally:
                self._unpark()

        for call in calls:
            call.add_done_callback(returned)

    def _unpark(self) -> None:
        """One parked connection is released: the last one runs what waits for none (before
        the count drops, so whoever waits for none finds it done)."""
        try:
            while True:
                with self._changed:
                    actions = self._when_idle if self._held == 1 else []
                    if not actions:
                        return
                    self._when_idle = []
                for action in actions:
                    action()
        finally:
            with self._changed:
                self._held -= 1
                self._changed.notify_all()

    def when_idle(self, action: Callable[[], None]) -> None:
        """Run ``action`` now when nothing is parked, else once the last parked call returns."""
        with self._changed:
            if self._held:
                self._when_idle.append(action)
                return
        action()

    def wait_idle(self, timeout_s: float) -> bool:
        """Wait until nothing is parked (at most ``timeout_s``); whether nothing is."""
        with self._changed:
            return self._changed.wait_for(lambda: self._held == 0, timeout=timeout_s)
