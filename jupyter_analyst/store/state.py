"""A thread's agent state: a snapshot, its entities in rows of their own, and the log of
its changes, each change applied under the thread's write lock."""

from __future__ import annotations

import json
from typing import Any, get_args

from .._clock import utc_now
from ..agent_state import AgentState, Entity, EntityKind, StateDelta, apply_delta
from .database import DatabaseStore


class StateLog(DatabaseStore):
    """The agent state of a workspace's threads (a part of :class:`~.threads.ThreadStore`)."""


    def agent_state(self, thread_id: str, *, recent: int | None = None) -> AgentState:
        """The thread's agent state (empty before the first change).

        ``recent`` loads only the newest ``recent`` entities of each kind, the part a prompt
        shows, so reading it costs the same however much the thread has made.
        """
        rows = self._query("SELECT body FROM agent_state WHERE thread_id = ?", (thread_id,))
        state = AgentState.model_validate_json(rows[0]["body"]) if rows else AgentState()
        if recent is None:
            entity_rows = self._query(
                "SELECT body FROM agent_entities WHERE thread_id = ? ORDER BY version, rowid", (thread_id,)
            )
        else:
            # One indexed read per kind, newest first, then back in order of change.
            picked = []
            for kind in get_args(EntityKind):
                picked += self._query(
                    "SELECT body, version, rowid AS r FROM agent_entities WHERE thread_id = ? AND kind = ? "
                    "ORDER BY version DESC, rowid DESC LIMIT ?",
                    (thread_id, kind, recent),
                )
            entity_rows = sorted(picked, key=lambda r: (r["version"], r["r"]))
        entities = [Entity.model_validate_json(r["body"]) for r in entity_rows]
        state.entities = {e.id: e for e in entities}
        return state

    def apply_state_delta(
        self, thread_id: str, delta: StateDelta, *, origin: str, turn_id: str | None = None
    ) -> AgentState:
        """Apply ``delta`` to the latest state in one transaction; returns the new state
        (with the entities the delta touched).

        The read and the write share the transaction, under the thread's write lock
        (``BEGIN IMMEDIATE`` on SQLite, an advisory lock on PostgreSQL), so a turn and a
        summarizer finishing at the same moment both land, one after the other. The delta
        itself is kept in an append-only log beside the snapshot.
        """
        touched = list(dict.fromkeys(
            [str(a.value.get("id")) for a in delta.add if a.section == "entities"]
            + [c.id for c in (*delta.update, *delta.remove) if c.section == "entities"]
        ))
        with self._tx() as cur:
            self.backend.lock_thread(cur, thread_id)
            row = cur.execute("SELECT body FROM agent_state WHERE thread_id = ?", (thread_id,)).fetchone()
            current = AgentState.model_validate_json(row[0]) if row else AgentState()
            if touched:
                marks = ",".join("?" * len(touched))
                found = cur.execute(
                    f"SELECT body FROM agent_entities WHERE thread_id = ? AND entity_id IN ({marks})",
                    (thread_id, *touched),
                ).fetchall()
                current.entities = {e.id: e for e in (Entity.model_validate_json(r[0]) for r in found)}
            state = apply_delta(current, delta)
            now = utc_now()
            cur.execute(
                "INSERT INTO agent_state VALUES (?, ?, ?, ?) ON CONFLICT(thread_id) DO UPDATE SET "
                "version = excluded.version, body = excluded.body, updated_at = excluded.updated_at",
                (thread_id, state.version, state.model_dump_json(exclude={"entities"}), now),
            )
            for entity_id in touched:
                entity = state.entities.get(entity_id)
                if entity is None:
                    cur.execute("DELETE FROM agent_entities WHERE thread_id = ? AND entity_id = ?", (thread_id, entity_id))
                else:
                    cur.execute(
                        "INSERT INTO agent_entities VALUES (?, ?, ?, ?, ?) ON CONFLICT(thread_id, entity_id) DO UPDATE "
                        "SET kind = excluded.kind, version = excluded.version, body = excluded.body",
                        (thread_id, entity_id, entity.kind, state.version, entity.model_dump_json()),
                    )
            cur.execute(
                "INSERT INTO agent_state_deltas VALUES (?, ?, ?, ?, ?, ?)",
                (thread_id, state.version, turn_id, origin, delta.model_dump_json(exclude_defaults=True), now),
            )
        return state

    def state_deltas(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's agent-state changes in order: version, origin, turn and the delta."""
        rows = self._query(
            "SELECT version, turn_id, origin, body, created_at FROM agent_state_deltas "
            "WHERE thread_id = ? ORDER BY version",
            (thread_id,),
        )
        return [
            {"version": r["version"], "turn_id": r["turn_id"], "origin": r["origin"],
             "delta": json.loads(r["body"]), "created_at": r["created_at"]}
            for r in rows
        ]
