"""What a long-running host keeps for the turns it runs: work that goes on after a turn.

A server keeps one :class:`BackgroundWork` for its whole life and drains it at shutdown;
the CLI keeps one per command and drains it after printing the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any


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
