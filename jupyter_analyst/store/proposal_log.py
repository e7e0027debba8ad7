"""Cells the model proposed for a user's notebook, the decisions people took on them, and
the checkpoints taken before a proposal's first accepted change.

A proposal's body is kept as the JSON its maker gave (``notebooks.proposals.Proposal``, a
layer above); decisions are append-only rows (who, what, when), so a change's status is its
last decision and the whole history stays.
"""

from __future__ import annotations

import json
from typing import Any

from .._clock import utc_now
from .database import DatabaseStore


class ProposalLog(DatabaseStore):
    """The proposals of a workspace's threads (a part of :class:`~.threads.ThreadStore`)."""

    def record_proposal(self, thread_id: str, turn_id: str, proposal_id: str, notebook: str,
                        body: dict[str, Any]) -> None:
        """Keep a proposal (its changes and how each ran)."""
        with self._tx() as cur:
            cur.execute("INSERT INTO proposals VALUES (?, ?, ?, ?, ?, ?)",
                        (proposal_id, thread_id, turn_id, notebook, json.dumps(body), utc_now()))

    def proposals(self, thread_id: str, *, turn_id: str | None = None) -> list[dict[str, Any]]:
        """The thread's proposals (or one turn's), oldest first, as their bodies."""
        rows = self._query(
            "SELECT body FROM proposals WHERE thread_id = ?" + (" AND turn_id = ?" if turn_id else "")
            + " ORDER BY created_at, rowid",
            (thread_id, turn_id) if turn_id else (thread_id,),
        )
        return [json.loads(r["body"]) for r in rows]

    def proposal(self, thread_id: str, proposal_id: str) -> dict[str, Any] | None:
        """One proposal of the thread, or ``None``."""
        rows = self._query("SELECT body FROM proposals WHERE thread_id = ? AND proposal_id = ?",
                           (thread_id, proposal_id))
        return json.loads(rows[0]["body"]) if rows else None

    def decide(self, thread_id: str, proposal_id: str, change_ids: list[str], decision: str, user: str) -> None:
        """Record ``user``'s ``decision`` on each of ``change_ids``, in one transaction."""
        now = utc_now()
        with self._tx() as cur:
            for change_id in change_ids:
                cur.execute(
                    'INSERT INTO proposal_decisions (thread_id, proposal_id, change_id, decision, "user", created_at) '
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (thread_id, proposal_id, change_id, decision, user, now),
                )

    def decisions(self, thread_id: str, proposal_id: str | None = None) -> list[dict[str, Any]]:
        """The decisions on the thread's proposals (or one's), in order."""
        rows = self._query(
            'SELECT proposal_id, change_id, decision, "user", created_at FROM proposal_decisions WHERE thread_id = ?'
            + (" AND proposal_id = ?" if proposal_id else "") + " ORDER BY decision_id",
            (thread_id, proposal_id) if proposal_id else (thread_id,),
        )
        return [dict(r) for r in rows]

    def record_checkpoint(self, thread_id: str, turn_id: str, proposal_id: str, notebook: str,
                          checkpoint_id: str, digest: str, text: str) -> None:
        """Keep the checkpoint taken before ``proposal_id``'s first accepted change: the
        contents manager's id, and the notebook's text and digest then (to check, and to
        restore if that checkpoint was replaced since)."""
        with self._tx() as cur:
            cur.execute("INSERT INTO notebook_checkpoints VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        (proposal_id, thread_id, turn_id, notebook, checkpoint_id, digest, text, utc_now()))

    def checkpoints(self, thread_id: str, turn_id: str) -> list[dict[str, Any]]:
        """The checkpoints taken for a turn's proposals, the earliest first."""
        rows = self._query(
            "SELECT proposal_id, notebook, checkpoint_id, digest, body, created_at FROM notebook_checkpoints "
            "WHERE thread_id = ? AND turn_id = ? ORDER BY created_at, rowid",
            (thread_id, turn_id),
        )
        return [dict(r) for r in rows]
