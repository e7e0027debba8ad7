"""A warm pool of prestarted sandboxed kernels, so a new thread's first step does not wait.

A warm kernel is started in a staging folder of its own. When a new thread takes it, the
staging folder is renamed to become the thread's folder: the sandbox's bind mount follows
the folder, so the running kernel now writes into the thread's folder. A thread whose
folder already holds files (one with history) gets a cold kernel instead. Kernels left
unused past the idle time are stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .session import KernelSession
from .workdir import holds_files

log = logging.getLogger(__name__)


@dataclass
class _Warm:
    session: KernelSession
    since: float


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("the warm kernel pool could not start a kernel: %s", task.exception())


class KernelPool:
    """Keeps ``size`` started kernels ready for new threads."""

    def __init__(
        self,
        staging: Path,
        *,
        size: int = 1,
        idle_timeout_s: float = 600.0,
        make: Callable[[Path], KernelSession] | None = None,
    ) -> None:
        self.staging = Path(staging)
        self.staging.mkdir(parents=True, exist_ok=True)
        self.size = size
        self.idle_timeout_s = idle_timeout_s
        self._make = make or (lambda folder: KernelSession(folder))
        self._ready: list[_Warm] = []
        self._filling: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def ready(self) -> int:
        """How many warm kernels wait now."""
        return len(self._ready)

    async def start(self) -> None:
        """Fill the pool (returns when it is full)."""
        await self._fill()

    def refill(self) -> None:
        """Fill the pool in the background (a kernel that cannot start is logged; a thread
        that needs one then starts its own, and says why if it cannot)."""
        if self.size > 0 and (self._filling is None or self._filling.done()):
            self._filling = asyncio.create_task(self._fill())
            self._filling.add_done_callback(_log_failure)

    async def _fill(self) -> None:
        async with self._lock:
            while len(self._ready) < self.size:
                folder = self.staging / f"warm-{uuid.uuid4().hex[:12]}"
                session = self._make(folder)
                await session.start()
                self._ready.append(_Warm(session, time.monotonic()))

    def serves(self, workdir: Path) -> bool:
        """Whether :meth:`acquire` would hand ``workdir`` a warm kernel now (one waits, and
        the folder is new), rather than start one."""
        return bool(self._ready) and not holds_files(Path(workdir))

    async def acquire(self, workdir: Path) -> KernelSession:
        """A started kernel working in ``workdir``: a warm one when ``workdir`` is new."""
        workdir = Path(workdir)
        self.cull()
        if self._ready and not holds_files(workdir):
            warm = self._ready.pop(0)
            if await warm.session.is_alive():
                if workdir.exists():
                    shutil.rmtree(workdir)
                workdir.parent.mkdir(parents=True, exist_ok=True)
                warm.session.workdir.rename(workdir)
                warm.session.adopt(workdir)
                self.hits += 1
                self.refill()
                return warm.session
            await warm.session.shutdown()
        self.misses += 1
        session = self._make(workdir)
        await session.start()
        self.refill()
        return session

    def cull(self) -> int:
        """Stop kernels idle past the idle time; returns how many."""
        now = time.monotonic()
        stale = [w for w in self._ready if now - w.since > self.idle_timeout_s]
        for warm in stale:
            self._ready.remove(warm)
            task = asyncio.ensure_future(self._discard(warm.session))
            task.add_done_callback(lambda t: t.exception())
        return len(stale)

    async def _discard(self, session: KernelSession) -> None:
        await session.shutdown()
        shutil.rmtree(session.workdir, ignore_errors=True)

    async def close(self) -> None:
        """Stop every warm kernel."""
        if self._filling is not None:
            self._filling.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._filling
        ready, self._ready = self._ready, []
        for warm in ready:
            await self._discard(warm.session)
