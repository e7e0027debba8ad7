"""A call's progress as MCP progress notifications: the step's events as they come, and a beat
each second while it runs (a long Python step shows it is alive). Independent of the SDK: any
context with ``report_progress(progress, total=None, message=None)`` takes them (the SDK's
server's, and FastMCP's inside Jupyter's MCP server), and one without a progress token sends
nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

BEAT_S = 1.0


@contextlib.asynccontextmanager
async def progress(ctx: Any, what: str) -> AsyncIterator[Callable[[Any], Awaitable[None]]]:
    """An event sink that turns the step's events into progress notifications, and a beat
    each second while the step runs."""
    count = 0
    lock = asyncio.Lock()
    stopped = False

    async def tell(message: str) -> None:
        nonlocal count
        if stopped:  # the call was cancelled: its client waits for nothing more
            return
        async with lock:
            count += 1
            await ctx.report_progress(count, message=message)

    async def beat() -> None:
        seconds = 0
        while True:
            await asyncio.sleep(BEAT_S)
            seconds += 1
            await tell(f"{what} running ({seconds} s)")

    async def on_event(event: Any) -> None:
        kind = getattr(event, "type", "event")
        detail = getattr(event, "to_state", None) or getattr(event, "tool", None) or getattr(event, "status", None)
        await tell(f"{kind}: {detail}" if detail else kind)

    beating = asyncio.create_task(beat())
    try:
        yield on_event
    except asyncio.CancelledError:
        stopped = True
        raise
    finally:
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
