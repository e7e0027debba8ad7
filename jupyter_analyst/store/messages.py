"""A thread's chat messages (OpenAI-style), appended in order and read back by turn."""

from __future__ import annotations

import json
from typing import Any

from .._clock import utc_now
from .database import DatabaseStore


class MessageLog(DatabaseStore):
    """The chat messages of a workspace's threads (a part of :class:`~.threads.ThreadStore`)."""


    def append_message(self, thread_id: str, turn_id: str, message: dict[str, Any]) -> int:
        """Append one chat message (an OpenAI-style dict); returns its id."""
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO messages (thread_id, turn_id, role, body, created_at) "
                "VALUES (?, ?, ?, ?, ?) RETURNING message_id",
                (thread_id, turn_id, message["role"], json.dumps(message), utc_now()),
            )
            return int(cur.fetchone()[0])

    def recent_turn_messages(
        self, thread_id: str, *, turns: int, after_turn: int = 0, before_turn: int | None = None
    ) -> list[tuple[int, dict[str, Any]]]:
        """The messages of the thread's last ``turns`` turns numbered above ``after_turn``
        (and below ``before_turn``), as ``(turn number, message)`` in order.

        Bounded by turns rather than by the thread's length, so assembling a prompt costs
        the same at turn 20 as at turn 200.
        """
        upper = before_turn if before_turn is not None else 2**62
        rows = self._query(
            "SELECT t.number AS number, m.body AS body FROM messages m JOIN "
            "(SELECT turn_id, number FROM turns WHERE thread_id = ? AND number > ? AND number < ? "
            " ORDER BY number DESC LIMIT ?) t ON m.turn_id = t.turn_id "
            "WHERE m.thread_id = ? ORDER BY m.message_id",
            (thread_id, after_turn, upper, turns, thread_id),
        )
        return [(int(r["number"]), json.loads(r["body"])) for r in rows]

    def message_chars(self, thread_id: str, *, after_turn: int, through_turn: int) -> int:
        """How many characters the messages of turns ``after_turn+1 .. through_turn`` hold."""
        rows = self._query(
            "SELECT COALESCE(SUM(LENGTH(m.body)), 0) AS n FROM messages m JOIN turns t "
            "ON m.turn_id = t.turn_id WHERE t.thread_id = ? AND t.number > ? AND t.number <= ?",
            (thread_id, after_turn, through_turn),
        )
        return int(rows[0]["n"])

    def messages(self, thread_id: str, *, last: int | None = None) -> list[dict[str, Any]]:
        """The thread's messages in order, or only the last ``last`` of them."""
        if last is None:
            rows = self._query(
                "SELECT body FROM messages WHERE thread_id = ? ORDER BY message_id", (thread_id,)
            )
        else:
            rows = self._query(
                "SELECT body FROM (SELECT message_id, body FROM messages WHERE thread_id = ? "
                "ORDER BY message_id DESC LIMIT ?) AS recent ORDER BY message_id",
                (thread_id, last),
            )
        return [json.loads(r["body"]) for r in rows]
