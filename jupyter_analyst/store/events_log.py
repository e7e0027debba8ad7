"""A thread's events: appended in order, each numbered in the transaction that stores it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..events import Event, parse_event
from .database import DatabaseStore


class EventLog(DatabaseStore):
    """The events of a workspace's threads (a part of :class:`~.threads.ThreadStore`)."""


    def append_event(self, event: Event) -> Event:
        """Persist an event, assigning its sequence number; returns the stored event."""
        return self.append_events([event])[0]

    def append_events(self, events: list[Event]) -> list[Event]:
        """Persist events in one transaction, in order, numbered after the thread's last;
        returns them stored. Each event names its own thread (one call may mix threads)."""
        with self._tx() as cur:
            return self._insert_events(cur, events)

    def _insert_events(self, cur: Any, events: list[Event]) -> list[Event]:
        stored: list[Event] = []
        next_seq: dict[str, int] = {}
        for event in events:
            if event.thread_id not in next_seq:
                self.backend.lock_thread(cur, event.thread_id)
                (next_seq[event.thread_id],) = cur.execute(
                    "SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE thread_id = ?", (event.thread_id,)
                ).fetchone()
            seq = next_seq[event.thread_id]
            next_seq[event.thread_id] = seq + 1
            event = event.model_copy(update={"seq": seq})
            cur.execute(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?)",
                (event.thread_id, seq, event.turn_id, event.type, event.model_dump_json()),
            )
            stored.append(event)
        for thread_id, after in next_seq.items():
            self.backend.notify_event(cur, thread_id, after - 1)
        return stored

    def last_seq(self, thread_id: str) -> int:
        """The thread's latest event sequence number (0 before any)."""
        rows = self._query("SELECT COALESCE(MAX(seq), 0) AS n FROM events WHERE thread_id = ?", (thread_id,))
        return int(rows[0]["n"])

    def events(
        self, thread_id: str, *, after: int = 0, turn_id: str | None = None, types: Sequence[str] | None = None
    ) -> list[Event]:
        """The thread's events with a sequence number above ``after``, in order; with
        ``types``, only events of those types (read without parsing the others: a long
        thread's text deltas are most of its events)."""
        if types is not None:
            marks = ", ".join("?" for _ in types)
            rows = self._query(
                f"SELECT body, turn_id FROM events WHERE thread_id = ? AND seq > ? AND type IN ({marks}) ORDER BY seq",
                (thread_id, after, *types),
            )
            return [parse_event(r["body"]) for r in rows if turn_id is None or r["turn_id"] == turn_id]
        if turn_id is None:
            rows = self._query(
                "SELECT body FROM events WHERE thread_id = ? AND seq > ? ORDER BY seq",
                (thread_id, after),
            )
        else:
            rows = self._query(
                "SELECT body FROM events WHERE thread_id = ? AND seq > ? AND turn_id = ? "
                "ORDER BY seq",
                (thread_id, after, turn_id),
            )
        return [parse_event(r["body"]) for r in rows]
