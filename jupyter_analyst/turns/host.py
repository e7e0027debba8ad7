"""What the process that runs turns lends them (:class:`TurnHost`): where kernels start, a
warm pool of them, the threads' environments kept between turns, and the work that goes on
after a turn.

A server keeps one host for its whole life (and drains its background work at shutdown);
the CLI makes one per command and drains it after printing the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..agent import ThreadEnvironment
    from ..kernel import KernelLauncher, KernelPool
    from ..store import Thread
    from .live import LiveThreads


class BackgroundWork:
    """Work that runs after a turn's ``done`` (the summarizer), tracked so it can be awaited.

    A long-running process (the server) keeps one and drains it at shutdown; the CLI drains
    it after printing the answer, before it exits.
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self) -> None:
        """Wait for everything spawned so far (and anything it spawns)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


@dataclass(frozen=True)
class TurnHost:
    """What the host process lends a turn; all of it optional (:meth:`none`: a turn on its own)."""

    launcher: KernelLauncher | None = None
    """Where kernels start (the Jupyter server's kernel manager); by default on this machine."""
    pool: KernelPool | None = None
    """Warm kernels, so a new thread's first Python step does not wait for one."""
    live: LiveThreads | None = None
    """The threads' environments (their kernels) kept from one turn to the next."""
    background: BackgroundWork | None = None
    """Where work after the turn (the summarizer) runs; awaited in the turn when absent."""

    @classmethod
    def none(cls) -> TurnHost:
        return cls()

    async def environment(self, thread: Thread, build: Callable[[], ThreadEnvironment]) -> ThreadEnvironment:
        """The thread's kept environment, checked out, or ``build()``'s."""
        if self.live is None:
            return build()
        return await self.live.checkout(thread.thread_id, thread.user, build)

    async def release(self, environment: ThreadEnvironment, thread_id: str, *, keep: bool) -> None:
        """The turn is over: the environment checked in (kept only when ``keep``), or closed."""
        if self.live is not None:
            await self.live.checkin(thread_id, keep=keep)
        else:
            await environment.close()

    async def after_turn(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` in the background when the host has one, else now."""
        if self.background is not None:
            self.background.spawn(work)
        else:
            await work
