"""Server-sent events: each event with ``id:`` = its sequence number, heartbeats between."""

from __future__ import annotations

import asyncio

from tornado.iostream import StreamClosedError
from tornado.web import RequestHandler

from ..events import Event, TextDelta, TurnEnded, error_frame, format_event

HEARTBEAT_S = 15.0


def start(handler: RequestHandler) -> None:
    """Headers of an event stream."""
    handler.set_header("Content-Type", "text/event-stream; charset=utf-8")
    handler.set_header("Cache-Control", "no-cache")
    handler.set_header("X-Accel-Buffering", "no")


def end_with_error(handler: RequestHandler, exc: BaseException) -> None:
    """End a stream that has begun with a last ``event: error`` frame saying why (its
    status and headers are sent: an HTTP error cannot be answered any more). Every error
    of a turn's stream ends this way; the frame itself is the events' codec's
    (:func:`~jupyter_analyst.events.error_frame`), which clients parse."""
    reason = getattr(exc, "reason", None) or "turn_failed"
    message = str(exc).strip() or type(exc).__name__
    try:
        handler.write(error_frame(str(reason), message))
    except RuntimeError:  # the response already finished (the client went away): nobody to tell
        pass


async def relay(
    handler: RequestHandler,
    backlog: list[Event],
    queue: asyncio.Queue[Event | None],
    *,
    follow: bool,
) -> int:
    """Write the backlog, then live events, without gaps or duplicates; returns the last seq.

    With ``follow``, live events go on until a turn ends (one turn runs per thread at a
    time, so that is the running turn); the stream also ends when the client goes away.
    """
    last = 0
    try:
        for event in backlog:
            handler.write(format_event(event))
            last = event.seq
        await handler.flush()
        # A backlog that ends with a turn's end has nothing more to follow (the turn may
        # still be finishing its notebook, but it sends no more events).
        if not follow or (backlog and isinstance(backlog[-1], TurnEnded)):
            return last
        # What coalescing took from the queue and did not merge: an event, or the end (None).
        held: list[Event | None] = []
        while True:
            if held:
                event = held.pop()
            else:
                try:
                    event = await asyncio.wait_for(queue.get(), HEARTBEAT_S)
                except TimeoutError:
                    handler.write(": heartbeat\n\n")
                    await handler.flush()
                    continue
            if event is None:
                return last
            if event.seq <= last:
                continue  # already sent from the backlog
            if isinstance(event, TextDelta):
                event, rest = coalesce(event, queue)
                held.extend(rest)
            handler.write(format_event(event))
            await handler.flush()
            last = event.seq
            if isinstance(event, TurnEnded):
                return last
    except StreamClosedError:
        return last


def coalesce(first: TextDelta, queue: asyncio.Queue[Event | None]) -> tuple[Event, list[Event | None]]:
    """Merge text deltas already waiting behind ``first`` into one (a slow client gets fewer,
    larger frames); returns the merged delta and what was taken from the queue without being
    merged: nothing, or the first event that is not text (or the end of the stream, ``None``).

    Only text is merged, and the merged frame carries the last merged sequence number, so
    a client resuming after it misses nothing. Tool results, artifacts and states are
    never merged or dropped; a delta already merged (a repeat) is not merged twice.

    >>> q = asyncio.Queue()
    >>> for e in (TextDelta(seq=2, text="b"), TextDelta(seq=2, text="b"), None):
    ...     q.put_nowait(e)
    >>> merged, rest = coalesce(TextDelta(seq=1, text="a"), q)
    >>> merged.seq, merged.text, rest
    (2, 'ab', [None])
    """
    texts, last = [first.text], first
    while not queue.empty():
        nxt = queue.get_nowait()
        if isinstance(nxt, TextDelta) and nxt.turn_id == first.turn_id:
            if nxt.seq > last.seq:
                texts.append(nxt.text)
                last = nxt
            continue
        return last.model_copy(update={"text": "".join(texts)}), [nxt]
    return last.model_copy(update={"text": "".join(texts)}), []
