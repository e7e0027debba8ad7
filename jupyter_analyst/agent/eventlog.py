"""A turn's events, written to the store off the event loop, in order and in batches.

Every event is persisted before anyone sees it (its sequence number is the store's), but
the SQLite write no longer runs on the event loop, where it would stall every other turn
and stream of a server, and text deltas are not written one transaction each: whatever
queued while a write was in flight goes in the next one, in one transaction.

* :meth:`EventWriter.append` queues an event and returns it once it is stored and handed
  to the sink (any earlier event first);
* :meth:`EventWriter.add` queues a text delta and returns at once: the model's stream is
  not held up by the store; the delta is stored and handed on in its turn.

Writes run in a task of their own, shielded from the turn's cancellation: a turn cancelled
midway still stores, and hands on, every delta it made, before its ``turn_ended``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable

from ..events import Event
from ..store import ThreadStore

EventSink = Callable[[Event], Awaitable[None] | None]


class EventWriter:
    """The single writer of one turn's events: one batch at a time, in arrival order."""

    def __init__(self, store: ThreadStore, sink: EventSink | None = None) -> None:
        self._store = store
        self._sink = sink
        self._queue: list[tuple[Event, asyncio.Future[Event] | None]] = []
        self._writing: asyncio.Task[None] | None = None
        #: A failure to store or hand on an event nobody awaited (a delta): raised to the next caller.
        self._error: BaseException | None = None
        #: How many transactions stored the events so far (the batching is visible to tests).
        self.batches = 0

    def add(self, event: Event) -> None:
        """Queue ``event`` (a text delta) to be stored and handed on, without waiting."""
        self._queue.append((event, None))
        self._start()

    async def append(self, event: Event) -> Event:
        """Store ``event`` after every event queued before it and hand it on; returns it stored.

        Raises:
            StorageError: the store could not write it, or an earlier delta.
        """
        self._raise_pending_error()
        done: asyncio.Future[Event] = asyncio.get_running_loop().create_future()
        self._queue.append((event, done))
        self._start()
        # Shielded: a cancelled turn stops waiting, but what it queued is still written.
        stored = await asyncio.shield(done)
        self._raise_pending_error()
        return stored

    async def drain(self) -> None:
        """Wait until every queued event is stored and handed on (raises what a delta's write raised)."""
        while self._writing is not None and not self._writing.done():
            await asyncio.shield(self._writing)
        self._raise_pending_error()

    def _raise_pending_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _start(self) -> None:
        if self._writing is None or self._writing.done():
            self._writing = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                stored = await asyncio.to_thread(self._store.append_events, [event for event, _ in batch])
                self.batches += 1
            except Exception as exc:  # noqa: BLE001 - handed to whoever waits, never lost
                self._fail(batch, exc)
                continue
            except BaseException as exc:  # this task itself is stopped (the loop shuts down)
                self._fail(batch + self._queue, exc)
                self._queue = []
                raise
            for index, ((_, done), event) in enumerate(zip(batch, stored, strict=True)):
                try:
                    if self._sink is not None:
                        maybe = self._sink(event)
                        if inspect.isawaitable(maybe):
                            await maybe
                except Exception as exc:  # noqa: BLE001 - as above
                    self._fail([(event, done)], exc)
                    continue
                except BaseException as exc:
                    self._fail(batch[index:] + self._queue, exc)
                    self._queue = []
                    raise
                if done is not None and not done.done():
                    done.set_result(event)

    def _fail(self, batch: list[tuple[Event, asyncio.Future[Event] | None]], exc: BaseException) -> None:
        waiting = [done for _, done in batch if done is not None and not done.done()]
        for done in waiting:
            done.set_exception(exc)
        if not waiting:
            self._error = exc
