"""A thread's steps one after another, as a client agent sends them at once.

Models call tools in parallel; a thread's kernel and its turns go one at a time. So a
step waits for the thread's step before it (first come, first run) instead of being
refused, within bounds: at most :data:`MAX_WAITING` wait on one thread, each at most
``wait_s`` seconds; past either, the call is refused with ``turn_in_progress`` and says so.
Look-ups (:func:`runs_beside`) wait for nothing: they run beside a thread's step.

Inside Jupyter a thread's turn may also be the panel's, which runs outside these queues: a
step there waits for it too (``host_turn``), within the same bound, and a step past it is
refused saying it waited for the panel's turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable

from ..errors import AnalystError

#: Steps waiting on one thread at most, beyond the one that runs.
MAX_WAITING = 16
#: How long a step waits for the thread's steps before it, by default.
WAIT_S = 600.0

#: The host's own running turn on a thread (its task), or ``None`` when none runs.
Waiting = Callable[[str], "asyncio.Future[object] | None"]


def runs_beside(tool: str) -> bool:
    """Whether a call of ``tool`` runs beside a thread's running step, on an environment of its
    own, instead of waiting for it: a look-up, reading only the source's schema and the store,
    never the kernel nor the data (its spec's ``looks_only``)."""
    from ..agent import looks_only

    return looks_only(tool)


class ThreadQueues:
    """One queue per thread: :meth:`turn` holds the thread for one step or turn.

    >>> async def two():
    ...     queues, order = ThreadQueues(), []
    ...     async def one(name):
    ...         async with queues.turn("thr_1"):
    ...             order.append(name)
    ...             await asyncio.sleep(0)
    ...             order.append(name)
    ...     await asyncio.gather(one("a"), one("b"))
    ...     return order, queues.held()
    >>> asyncio.run(two())
    (['a', 'a', 'b', 'b'], 0)

    A step that waits too long is refused, and nothing of it ran:

    >>> async def stuck():
    ...     queues = ThreadQueues(wait_s=0.05)
    ...     async with queues.turn("thr_1"):
    ...         try:
    ...             async with queues.turn("thr_1"):
    ...                 return "ran"
    ...         except AnalystError as exc:
    ...             return exc.reason
    >>> asyncio.run(stuck())
    'turn_in_progress'
    """

    def __init__(self, *, wait_s: float = WAIT_S, max_waiting: int = MAX_WAITING,
                 host_turn: Waiting | None = None) -> None:
        self.wait_s, self.max_waiting, self.host_turn = wait_s, max_waiting, host_turn
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    def held(self) -> int:
        """How many threads have a step running or waiting."""
        return len(self._locks)

    @contextlib.asynccontextmanager
    async def turn(self, thread: str) -> AsyncIterator[None]:
        """Hold ``thread`` while the block runs, after the steps queued before this one.

        Raises:
            AnalystError: ``turn_in_progress`` when too many wait, or the wait is too long.
        """
        lock = self._locks.setdefault(thread, asyncio.Lock())
        users = self._users.get(thread, 0)
        if users > self.max_waiting:
            raise AnalystError(f"{users} calls already run or wait on thread {thread}", reason="turn_in_progress")
        self._users[thread] = users + 1
        deadline = time.monotonic() + self.wait_s
        try:
            try:
                await asyncio.wait_for(lock.acquire(), self.wait_s)
            except TimeoutError:
                raise AnalystError(
                    f"the thread's step before this one still ran after {self.wait_s:g} s of waiting: "
                    "nothing ran", reason="turn_in_progress") from None
            try:
                await self._after_host_turn(thread, deadline)
                yield
            finally:
                lock.release()
        finally:
            self._users[thread] -= 1
            if not self._users[thread]:
                del self._users[thread], self._locks[thread]

    async def _after_host_turn(self, thread: str, deadline: float) -> None:
        """Return once the host runs no turn of ``thread`` (a turn that ends may be followed
        by another: each is waited for, all within ``deadline``). Never cancels the host's turn.

        Raises:
            AnalystError: ``turn_in_progress`` when one still runs at ``deadline``.
        """
        while self.host_turn is not None and (running := self.host_turn(thread)) is not None and not running.done():
            left = deadline - time.monotonic()
            if left > 0:
                await asyncio.wait([running], timeout=left)  # wait() does not cancel it at the timeout
            if not running.done():
                raise AnalystError(
                    f"the panel's turn on thread {thread} still ran after {self.wait_s:g} s of waiting: "
                    "nothing ran", reason="turn_in_progress")
