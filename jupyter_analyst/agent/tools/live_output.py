"""What a running Python step prints, told while it runs.

A step of ninety seconds used to show nothing until its end, and its lines were lost when
the user stopped it. The kernel hands each piece of stdout and stderr to :class:`LiveOutput`
as it comes; every ``flush_s`` what came is told as one ``step_output`` event per stream
(persisted like any event, so a stopped step keeps its lines and a reload shows them).
What a step shows live is bounded (``cap`` characters): past it, only how much more came is
told, and the step's result carries its output (head and tail) as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ...events import StepOutput

#: How often what a step printed is told (seconds): often enough to read as live, seldom
#: enough that a step printing in a tight loop makes a few events a second, not thousands.
FLUSH_S = 0.5
#: Characters of a step's output told live; the rest is counted, and in its result.
LIVE_CHARS = 20_000

Emit = Callable[[StepOutput], Awaitable[Any]]


class LiveOutput:
    """A running step's prints, coalesced and bounded, told through ``emit``."""

    def __init__(self, emit: Emit, call_id: str, *, flush_s: float = FLUSH_S, cap: int = LIVE_CHARS) -> None:
        self._emit = emit
        self._call_id = call_id
        self._flush_s = flush_s
        self._room = cap
        self._started = time.perf_counter()
        self._pending: list[list[Any]] = []
        """``[stream, text, omitted]`` in the order they came, a stream's pieces merged."""
        self._task: asyncio.Task[None] | None = None

    def feed(self, stream: str, text: str) -> None:
        """One piece of output (called on the event loop, by the kernel's reader)."""
        shown, self._room = text[: max(self._room, 0)], max(self._room - len(text), 0)
        omitted = len(text) - len(shown)
        if self._pending and self._pending[-1][0] == stream:
            self._pending[-1][1] += shown
            self._pending[-1][2] += omitted
        else:
            self._pending.append([stream, shown, omitted])
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._flush_forever())

    async def close(self) -> None:
        """The step ended: what is left is told, and no more."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._flush()

    async def _flush_forever(self) -> None:
        while True:
            await asyncio.sleep(self._flush_s)
            await self._flush()

    async def _flush(self) -> None:
        pending, self._pending = self._pending, []
        elapsed = round(time.perf_counter() - self._started, 3)
        for stream, text, omitted in pending:
            if text or omitted:
                await self._emit(StepOutput(call_id=self._call_id, stream=stream, text=text,
                                            elapsed_s=elapsed, omitted=omitted))
