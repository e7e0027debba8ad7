"""Threads' runtimes kept between turns, so a thread's kernel lives across its turns.

A turn checks its thread's runtime out (one is built when none is kept) and checks it in
when it ends. Only a runtime whose kernel runs is kept: the next turn of the thread starts
no kernel and replays nothing. Kept kernels are bounded:

* one idle past ``idle_s`` is stopped (``cull``, every ``cull_interval_s`` once started);
* past ``max_total`` kernels in all, or ``max_per_user`` of one user, the least recently
  used idle ones are stopped;
* a kernel found dead (killed, culled by the server) is dropped when its thread comes back.

A runtime checked out by a running turn is never stopped. A stopped kernel costs nothing
but time: the thread's next Python step starts one, restored lazily (see
agent/environment/rehydrate.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._clock import utc_now
from ..errors import AnalystError

if TYPE_CHECKING:
    from ..agent import ThreadEnvironment

log = logging.getLogger(__name__)


@dataclass
class _Kept:
    runtime: ThreadEnvironment
    user: str
    used: float
    """When its last turn began or ended (the registry's clock)."""
    used_at: str = field(default_factory=utc_now)
    """The same moment, as a UTC timestamp for clients."""
    busy: bool = True


class LiveThreads:
    """The runtimes (and kernels) kept between turns, by thread.

    Args:
        idle_s: a kept kernel unused this long is stopped.
        max_total: kernels kept at most (``0``: none is kept).
        max_per_user: kernels kept at most for one user.
        clock: seconds, monotonic (a test may pass its own).
    """

    def __init__(
        self, *, idle_s: float = 1_800.0, max_total: int = 32, max_per_user: int = 8,
        cull_interval_s: float | None = None, clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.idle_s = idle_s
        self.max_total = max_total
        self.max_per_user = max_per_user
        # Often enough that a kernel outlives its idle time by at most a quarter of it.
        self.cull_interval_s = cull_interval_s or min(60.0, max(1.0, idle_s / 4))
        self._clock = clock
        #: Least recently used first.
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._culler: asyncio.Task[None] | None = None
        self.stopped = 0
        """How many kernels were stopped by culling or the caps (not at turn failures)."""

    def runtime(self, thread_id: str) -> ThreadEnvironment | None:
        """The thread's runtime, kept or checked out (``None`` when it has none)."""
        kept = self._kept.get(thread_id)
        return kept.runtime if kept is not None else None

    def last_used(self, thread_id: str) -> str | None:
        """When the thread's runtime was last checked out or in (UTC), if it has one."""
        kept = self._kept.get(thread_id)
        return kept.used_at if kept is not None else None

    def kernels(self) -> int:
        """How many kept or checked-out runtimes have a running kernel."""
        return sum(1 for kept in self._kept.values() if kept.runtime.kernel_started)

    async def checkout(self, thread_id: str, user: str, build: Callable[[], ThreadEnvironment]) -> ThreadEnvironment:
        """The thread's kept runtime, else ``build()``'s; never stopped until checked in.

        Raises:
            AnalystError: ``turn_in_progress`` when it is checked out already.
        """
        kept = self._kept.get(thread_id)
        if kept is None:
            self._kept[thread_id] = _Kept(build(), user, self._clock())
            return self._kept[thread_id].runtime
        if kept.busy:
            raise AnalystError("a turn is already running on this thread", reason="turn_in_progress")
        kept.busy = True
        self._touch(thread_id, kept)
        if kept.runtime.kernel_started and not await kept.runtime.kernel_alive():
            log.info("the kernel of %s died while it was idle; the next step starts one", thread_id)
            await kept.runtime.discard_kernel()
        return kept.runtime

    async def checkin(self, thread_id: str, *, keep: bool = True) -> None:
        """The thread's turn ended: keep its runtime when ``keep`` and its kernel runs, else
        stop it; then stop the least recently used kernels over the caps."""
        kept = self._kept.get(thread_id)
        if kept is None:
            return
        kept.busy = False
        self._touch(thread_id, kept)
        if not keep or not kept.runtime.kernel_started:
            del self._kept[thread_id]
            await kept.runtime.close()
            return
        self._start_culler()
        await self._stop(self._over_caps(), why="over the caps")

    async def forget(self, thread_id: str) -> bool:
        """Stop the thread's kept kernel, if one is kept and no turn is using it (a thread
        being deleted); whether one was stopped."""
        kept = self._kept.get(thread_id)
        if kept is None or kept.busy:
            return False
        await self._stop([thread_id], why="thread deleted")
        return True

    async def cull(self) -> list[str]:
        """Stop the kept kernels idle past ``idle_s``, and the dead ones; returns their threads."""
        now = self._clock()
        stale = [tid for tid, kept in self._kept.items() if not kept.busy and now - kept.used >= self.idle_s]
        await self._stop(stale, why="idle")
        dead = []
        for tid, kept in list(self._kept.items()):
            if kept.busy or await kept.runtime.kernel_alive():
                continue
            if self._kept.get(tid) is kept:  # not checked out meanwhile
                dead.append(tid)
                await self._stop([tid], why="dead")
        return stale + dead

    async def close(self) -> None:
        """Stop the culler and every kept kernel (a server stopping; turns have ended)."""
        if self._culler is not None:
            self._culler.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._culler
            self._culler = None
        kept, self._kept = list(self._kept.values()), OrderedDict()
        for entry in kept:
            await entry.runtime.close()

    # ------------------------------------------------------------------ internals

    def _touch(self, thread_id: str, kept: _Kept) -> None:
        kept.used = self._clock()
        kept.used_at = utc_now()
        self._kept.move_to_end(thread_id)

    def _over_caps(self) -> list[str]:
        """The idle threads to stop, least recently used first, so that the kernels kept
        fit both caps (those of running turns count, and are never chosen)."""
        running = [tid for tid, kept in self._kept.items() if kept.runtime.kernel_started]
        total = len(running)
        per_user = Counter(self._kept[tid].user for tid in running)
        chosen = []
        for tid in running:
            kept = self._kept[tid]
            if kept.busy:
                continue
            if total > self.max_total or per_user[kept.user] > self.max_per_user:
                chosen.append(tid)
                total -= 1
                per_user[kept.user] -= 1
        return chosen

    async def _stop(self, thread_ids: list[str], *, why: str) -> None:
        # Taken out of the registry before anything is awaited: a turn starting meanwhile
        # builds a runtime of its own rather than get one being stopped.
        stopping = [self._kept.pop(tid) for tid in thread_ids if tid in self._kept and not self._kept[tid].busy]
        for kept in stopping:
            log.info("stopping the kernel %s of a thread (%s)", kept.runtime.kernel_id or "", why)
            self.stopped += 1
            await kept.runtime.close()

    def _start_culler(self) -> None:
        if self._culler is None or self._culler.done():
            self._culler = asyncio.create_task(self._cull_forever())

    async def _cull_forever(self) -> None:
        while True:
            await asyncio.sleep(self.cull_interval_s)
            try:
                await self.cull()
            except Exception:  # noqa: BLE001 - one failed stop must not end culling
                log.exception("culling the threads' kernels failed")
