"""Events written by other server processes, for this process's listeners (PostgreSQL).

On SQLite one process owns the workspace, and the service hands each event it stores to
its listeners directly. On PostgreSQL several processes share the store: every stored
event is announced with ``NOTIFY analyst_events '<thread_id> <seq>'`` at commit
(:meth:`PostgresBackend.notify_event`), and this feed LISTENs on a connection of its own
in a background thread and passes each announcement to the event loop. The service then
reads the thread's events it has not yet published, off the loop, and publishes them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class EventFeed:
    """A LISTEN connection calling ``announced(thread_id, seq)`` on ``loop`` per commit."""

    def __init__(self, url: str, loop: asyncio.AbstractEventLoop, announced: Callable[[str, int], None]) -> None:
        from ..store import EVENTS_CHANNEL

        self._url = url
        self._channel = EVENTS_CHANNEL
        self._loop = loop
        self._announced = announced
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="analyst-event-feed", daemon=True)
        self._thread.start()

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Whether the feed is listening (announcements from then on are seen)."""
        return self._ready.wait(timeout)

    def _run(self) -> None:
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {self._channel}")
                    self._ready.set()
                    # Whatever was committed while the feed was away: listeners catch up
                    # from the store, which "<thread> 0" asks for.
                    self._loop.call_soon_threadsafe(self._announced, "", 0)
                    while not self._stop.is_set():
                        # The timeout only lets close() end the thread; announcements wake it.
                        for note in conn.notifies(timeout=1.0):
                            thread_id, _, seq = note.payload.partition(" ")
                            self._loop.call_soon_threadsafe(self._announced, thread_id, int(seq or 0))
            except psycopg.Error as exc:
                if self._stop.is_set():
                    return
                log.warning("jupyter-analyst: event feed lost its connection (%s); reconnecting", exc)
                self._stop.wait(1.0)
            except RuntimeError:  # the loop was closed under us: the server is stopping
                return

    def close(self) -> None:
        """Stop listening (the thread ends within a second)."""
        self._stop.set()
