"""The SSE relay: backlog then live events, no gaps, no duplicates, no wait past a turn's end."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_analyst.events import TextDelta, TurnEnded, TurnStarted, parse_events
from jupyter_analyst.server import sse


class Recorder:
    """Where the relay writes: the frames, as a Tornado handler would send them."""

    def __init__(self) -> None:
        self.body = ""

    def write(self, text: str) -> None:
        self.body += text

    async def flush(self) -> None:
        return None


def _turn(seq0: int = 0):
    return [
        TurnStarted(thread_id="th", turn_id="t1", prompt="p", model="m", seq=seq0 + 1),
        TextDelta(thread_id="th", turn_id="t1", text="hi", seq=seq0 + 2),
        TurnEnded(thread_id="th", turn_id="t1", status="completed", seq=seq0 + 3),
    ]


@pytest.mark.asyncio
async def test_a_backlog_ending_with_the_turns_end_is_not_followed():
    # The turn is still finishing (its notebook), so the stream was asked to follow; its
    # end is already in the backlog, and nothing more will come: the stream ends now.
    out = Recorder()
    last = await asyncio.wait_for(sse.relay(out, _turn(), asyncio.Queue(), follow=True), 5)
    assert last == 3 and [e["seq"] for e in parse_events(out.body)] == [1, 2, 3]


@pytest.mark.asyncio
async def test_live_events_follow_the_backlog_without_duplicates_until_the_turn_ends():
    started, delta, ended = _turn()
    queue: asyncio.Queue = asyncio.Queue()
    for event in (started, delta, ended):  # published while the backlog was read: seen twice
        queue.put_nowait(event)
    out = Recorder()
    last = await asyncio.wait_for(sse.relay(out, [started], queue, follow=True), 5)
    assert last == 3 and [e["seq"] for e in parse_events(out.body)] == [1, 2, 3]
