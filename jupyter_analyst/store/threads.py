"""Threads, turns, messages and events, persisted in the workspace database (SQLite or PostgreSQL).

Messages and events are append-only: rows are inserted, never updated or deleted. An
event's sequence number is assigned inside the transaction that stores it, so numbers are
unique and gap-free per thread and an event exists on disk before anyone is shown it.
Every per-thread counter (event seq, turn number, agent-state version) is read and
advanced under the thread's write lock (:meth:`Backend.lock_thread`), which is what keeps
it gap-free when several processes write one PostgreSQL database.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from collections.abc import Callable, Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel

from ..events import Event, parse_event
from ..agent_state import AgentState, Entity, EntityKind, StateDelta, apply_delta
from .database import DatabaseStore
from .._clock import new_id, utc_now
from ..errors import AnalystError, ConfigError
from ..ledger import Ledger, Usage

TurnStatus = Literal["running", "completed", "needs_input", "step_limited", "no_answer", "error", "interrupted"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
    thread_id  TEXT PRIMARY KEY,
    "user"     TEXT NOT NULL,
    title      TEXT,
    source     TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
    turn_id    TEXT PRIMARY KEY,
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    number     INTEGER NOT NULL,
    prompt     TEXT NOT NULL,
    status     TEXT NOT NULL,
    answer     TEXT,
    started_at TEXT NOT NULL,
    ended_at   TEXT,
    UNIQUE (thread_id, number)
);
CREATE TABLE IF NOT EXISTS messages (
    message_id INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    turn_id    TEXT NOT NULL,
    role       TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_thread ON messages(thread_id, message_id);
CREATE INDEX IF NOT EXISTS messages_by_turn ON messages(turn_id, message_id);
CREATE TABLE IF NOT EXISTS events (
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    seq        INTEGER NOT NULL,
    turn_id    TEXT NOT NULL,
    type       TEXT NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (thread_id, seq)
);
CREATE TABLE IF NOT EXISTS agent_state (
    thread_id  TEXT PRIMARY KEY REFERENCES threads(thread_id),
    version    INTEGER NOT NULL,
    body       TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
-- Entities live in their own rows: a thread can know thousands of artifacts, and neither a
-- prompt nor a change should have to read or rewrite all of them.
CREATE TABLE IF NOT EXISTS agent_entities (
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    entity_id  TEXT NOT NULL,
    kind       TEXT NOT NULL,
    version    INTEGER NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (thread_id, entity_id)
);
CREATE INDEX IF NOT EXISTS agent_entities_recent ON agent_entities(thread_id, kind, version);
CREATE TABLE IF NOT EXISTS agent_state_deltas (
    thread_id  TEXT NOT NULL REFERENCES threads(thread_id),
    version    INTEGER NOT NULL,
    turn_id    TEXT,
    origin     TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (thread_id, version)
);
"""


#: A thread's rows, children first (``threads`` last: the others refer to it).
_THREAD_TABLES = ("thread_bindings", "agent_state_deltas", "agent_entities", "agent_state", "events", "messages",
                  "turns", "threads")

#: How long a title taken from a thread's first question may be.
TITLE_CHARS = 80


def title_of(prompt: str) -> str | None:
    """A thread's title from its first question: the first line that says something,
    cut at a word under :data:`TITLE_CHARS`.

    >>> title_of("  \\nWhich region grew fastest in 2024?\\nShow it by month.")
    'Which region grew fastest in 2024?'
    >>> title_of("Compare the average basket size of returning customers with that of first-time buyers per region")
    'Compare the average basket size of returning customers with that of first-time…'
    >>> title_of("   ") is None
    True
    """
    line = next((ln.strip() for ln in prompt.splitlines() if ln.strip()), "")
    if len(line) <= TITLE_CHARS:
        return line or None
    cut = line[: TITLE_CHARS - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(" ,;:.") + "…"


class Thread(BaseModel):
    """One conversation about one data source."""

    thread_id: str
    user: str
    title: str | None = None
    source: str | None = None
    created_at: str
    last_activity: str | None = None
    """When a turn of the thread last started or ended (its creation before any); set in listings."""
    running: bool | None = None
    """Whether a turn of the thread is marked running; set in listings."""


class Turn(BaseModel):
    """One prompt and everything done to answer it."""

    turn_id: str
    thread_id: str
    number: int
    prompt: str
    status: TurnStatus
    answer: str | None = None
    started_at: str
    ended_at: str | None = None
    ledger: Ledger | None = None
    """What the turn cost (see jupyter_analyst/ledger.py); ``None`` while it runs, and for a
    turn closed without running to its end."""


def _turn(row: Any) -> Turn:
    """A turn from its row (the lease is the store's own business)."""
    fields = {k: row[k] for k in row.keys() if k in Turn.model_fields}
    ledger = fields.pop("ledger", None)
    return Turn(**fields, ledger=Ledger.model_validate_json(ledger) if ledger else None)


class ThreadBusy(AnalystError):
    """A turn is already running on the thread (here, or in another process on a shared store)."""

    reason = "turn_in_progress"


def lease_end(seconds: float) -> str:
    """When a lease taken now for ``seconds`` runs out, as stored (ISO-8601 UTC, ms)."""
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ThreadStore(DatabaseStore):
    """Threads, turns, messages and events of one workspace."""

    schema = _SCHEMA
    migrations = (
        # A running turn's lease (see :meth:`renew_leases`): on a store several processes
        # share, a turn whose lease ran out was cut with its process. NULL: no lease taken.
        "ALTER TABLE turns ADD COLUMN lease_until TEXT;",
        # A conversation of another host (a Jupyter AI chat) and the thread that answers it
        # there, per user: the host's next message goes on with the same thread.
        "CREATE TABLE IF NOT EXISTS thread_bindings (host TEXT NOT NULL, conversation TEXT NOT NULL, "
        '"user" TEXT NOT NULL, thread_id TEXT NOT NULL REFERENCES threads(thread_id), created_at TEXT NOT NULL, '
        'PRIMARY KEY (host, conversation, "user"));',
        # What the turn cost (a jupyter_analyst.ledger.Ledger as JSON); NULL while it runs,
        # and for turns closed without their ledger (their process was gone).
        "ALTER TABLE turns ADD COLUMN ledger TEXT;",
    )

    # ------------------------------------------------------------------ threads

    def create_thread(
        self, *, user: str = "local", source: str | None = None, title: str | None = None
    ) -> Thread:
        """Start a new, empty thread owned by ``user``."""
        thread = Thread(
            thread_id=new_id("thr"), user=user, title=title, source=source, created_at=utc_now()
        )
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO threads VALUES (?, ?, ?, ?, ?)",
                (thread.thread_id, thread.user, thread.title, thread.source, thread.created_at),
            )
        return thread

    def get_thread(self, thread_id: str, *, user: str | None = None) -> Thread:
        """The thread, if it exists and (when ``user`` is given) belongs to that user."""
        rows = self._query("SELECT * FROM threads WHERE thread_id = ?", (thread_id,))
        if not rows or (user is not None and rows[0]["user"] != user):
            raise ConfigError(
                f"unknown thread {thread_id!r}",
                reason="thread_not_found",
                hint="list threads with `jupyter analyst threads`, or omit --thread to start one",
            )
        return Thread(**dict(rows[0]))

    def list_threads(self, *, user: str | None = None) -> list[Thread]:
        """Threads, the most recently active first (a turn's start or end, else the thread's
        creation), each with its ``last_activity`` and whether a turn of it is ``running``;
        optionally only those of one user."""
        rows = self._query(
            "SELECT threads.*, COALESCE((SELECT MAX(COALESCE(ended_at, started_at)) FROM turns "
            "WHERE turns.thread_id = threads.thread_id), created_at) AS last_activity, "
            "EXISTS (SELECT 1 FROM turns WHERE turns.thread_id = threads.thread_id AND status = 'running') AS running "
            "FROM threads "
            + ('WHERE "user" = ? ' if user is not None else "")
            + "ORDER BY last_activity DESC, rowid DESC",
            (user,) if user is not None else (),
        )
        return [Thread(**dict(r)) for r in rows]

    def rename_thread(self, thread_id: str, title: str) -> None:
        """Give the thread the user's own title (it replaces the one taken from its first question)."""
        with self._tx() as cur:
            cur.execute("UPDATE threads SET title = ? WHERE thread_id = ?", (title, thread_id))

    def delete_thread(self, thread_id: str) -> None:
        """Remove the thread with its turns, messages, events and agent state, in one
        transaction; refused (:class:`ThreadBusy`) while one of its turns runs under a live
        lease (in another process sharing the store: this process checks its own first).

        The one exception to append-only: the user deleting a whole conversation, never a
        part of one, so what remains of any thread is still its whole history."""
        with self._tx() as cur:
            self.backend.lock_thread(cur, thread_id)
            if cur.execute("SELECT 1 FROM turns WHERE thread_id = ? AND status = 'running' AND lease_until > ?",
                           (thread_id, utc_now())).fetchone():
                raise ThreadBusy("a turn is running on this thread, in another process sharing the store",
                                 hint="wait for it, or cancel it where it runs, then delete the thread")
            for table in _THREAD_TABLES:
                cur.execute(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,))

    def set_thread_source(self, thread_id: str, source: str) -> None:
        """Remember the data source a thread was last run against."""
        with self._tx() as cur:
            cur.execute("UPDATE threads SET source = ? WHERE thread_id = ?", (source, thread_id))

    def bound_thread(self, host: str, conversation: str, *, user: str) -> Thread | None:
        """The thread bound to ``user``'s ``conversation`` of ``host`` (see :meth:`bind_thread`), or ``None``."""
        rows = self._query(
            'SELECT thread_id FROM thread_bindings WHERE host = ? AND conversation = ? AND "user" = ?',
            (host, conversation, user),
        )
        return self.get_thread(rows[0]["thread_id"], user=user) if rows else None

    def bind_thread(self, host: str, conversation: str, thread: Thread) -> Thread:
        """Bind ``thread`` to its owner's ``conversation`` of ``host`` (a Jupyter AI chat's id,
        say), so the conversation's next message goes on with it; the thread bound, which is an
        earlier binding's when there is one (the first binding wins, in any process)."""
        with self._tx() as cur:
            cur.execute(
                "INSERT INTO thread_bindings VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (host, conversation, thread.user, thread.thread_id, utc_now()),
            )
        bound = self.bound_thread(host, conversation, user=thread.user)
        assert bound is not None
        return bound

    # ------------------------------------------------------------------ turns

    def start_turn(self, thread_id: str, prompt: str, *, lease_s: float | None = None) -> Turn:
        """Open a new turn; turns left running by a dead process are marked interrupted
        (``lease_s`` as for :meth:`announce_turn`)."""
        with self._tx() as cur:
            return self._open_turn(cur, thread_id, prompt, lease_s)

    def announce_turn(self, thread_id: str, prompt: str, started: Callable[[Turn], Event], *,
                      lease_s: float | None = None) -> tuple[Turn, Event]:
        """Open a new turn and store its first event, ``started(turn)``, in one transaction:
        a turn is never seen without its announcement. Returns both, the event numbered.

        With ``lease_s`` the turn holds a lease for that long, which its process renews
        (:meth:`renew_leases`). A turn of the thread whose lease still runs is another
        process's live turn: this one is refused (:class:`ThreadBusy`), leased or not,
        instead of marking that one interrupted.
        """
        with self._tx() as cur:
            turn = self._open_turn(cur, thread_id, prompt, lease_s)
            (event,) = self._insert_events(cur, [started(turn)])
        return turn, event

    def _open_turn(self, cur: Any, thread_id: str, prompt: str, lease_s: float | None = None) -> Turn:
        self.backend.lock_thread(cur, thread_id)
        now = utc_now()
        if cur.execute(
            "SELECT 1 FROM turns WHERE thread_id = ? AND status = 'running' AND lease_until > ?", (thread_id, now),
        ).fetchone():
            raise ThreadBusy("a turn is already running on this thread, in another process sharing the store",
                             hint="wait for it, or cancel it where it runs")
        cur.execute(
            "UPDATE turns SET status = 'interrupted', ended_at = ? "
            "WHERE thread_id = ? AND status = 'running'",
            (now, thread_id),
        )
        (number,) = cur.execute(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM turns WHERE thread_id = ?", (thread_id,)
        ).fetchone()
        turn = Turn(
            turn_id=new_id("turn"),
            thread_id=thread_id,
            number=number,
            prompt=prompt,
            status="running",
            started_at=utc_now(),
        )
        if number == 1 and (title := title_of(prompt)) is not None:
            # A thread is known by its first question until the user names it.
            cur.execute("UPDATE threads SET title = ? WHERE thread_id = ? AND title IS NULL", (title, thread_id))
        cur.execute(
            "INSERT INTO turns (turn_id, thread_id, number, prompt, status, started_at, lease_until) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (turn.turn_id, thread_id, number, prompt, turn.status, turn.started_at,
             None if lease_s is None else lease_end(lease_s)),
        )
        return turn

    def renew_leases(self, turn_ids: Sequence[str], lease_s: float) -> None:
        """Extend the leases of these running turns (this process's) to ``lease_s`` from now."""
        if not turn_ids:
            return
        marks = ", ".join("?" for _ in turn_ids)
        with self._tx() as cur:
            cur.execute(f"UPDATE turns SET lease_until = ? WHERE status = 'running' AND turn_id IN ({marks})",
                        (lease_end(lease_s), *turn_ids))

    def expire_leases(self, ended: Callable[[Turn], Event]) -> list[Event]:
        """Close every running turn whose lease ran out (its process stopped renewing it: it
        was killed, or lost the database) as interrupted, each with its ``ended(turn)``
        event stored in the same transaction; the events, numbered. A turn without a lease
        is left alone: nothing tells whether its process lives."""
        now = utc_now()
        rows = self._query("SELECT * FROM turns WHERE status = 'running' AND lease_until < ?", (now,))
        out: list[Event] = []
        for turn in (_turn(r) for r in rows):
            with self._tx() as cur:
                self.backend.lock_thread(cur, turn.thread_id)
                cur.execute("UPDATE turns SET status = 'interrupted', ended_at = ? "
                            "WHERE turn_id = ? AND status = 'running' AND lease_until < ?", (utc_now(), turn.turn_id, now))
                if cur.rowcount == 1:  # not renewed or closed meanwhile (by its process, or another's sweep)
                    out += self._insert_events(cur, [ended(turn)])
        return out

    def interrupt_running(self) -> int:
        """Mark every turn left running (its process is gone) as interrupted; returns how many."""
        with self._tx() as cur:
            cur.execute("UPDATE turns SET status = 'interrupted', ended_at = ? WHERE status = 'running'", (utc_now(),))
            return cur.rowcount

    def end_turn(self, turn_id: str, status: TurnStatus, *, answer: str | None = None,
                 ledger: Ledger | None = None) -> None:
        """Close a turn with its final status, answer and cost ledger; the whole turn is then
        in the database file itself, not only in its write-ahead log (see :meth:`checkpoint`)."""
        with self._tx() as cur:
            cur.execute(
                "UPDATE turns SET status = ?, answer = ?, ended_at = ?, ledger = ? WHERE turn_id = ?",
                (status, answer, utc_now(), ledger.model_dump_json() if ledger is not None else None, turn_id),
            )
        self.checkpoint()

    def add_summarizer_usage(self, turn_id: str, usage: Usage) -> None:
        """Add the end-of-turn summarizer's call to the ended turn's ledger (a new ledger for a
        turn closed without one): it answers after the turn, and is paid for all the same."""
        with self._tx() as cur:
            row = cur.execute("SELECT ledger FROM turns WHERE turn_id = ?", (turn_id,)).fetchone()
            if row is None:
                return
            ledger = Ledger.model_validate_json(row[0]) if row[0] else Ledger()
            ledger = ledger.model_copy(update={"summarizer": ledger.summarizer.plus(usage)})
            cur.execute("UPDATE turns SET ledger = ? WHERE turn_id = ?", (ledger.model_dump_json(), turn_id))

    def abandon_turn(self, turn_id: str, ended: Event, status: TurnStatus) -> Event | None:
        """Close a turn that is still running with ``status`` and store ``ended`` (its
        ``turn_ended``), in one transaction; ``None`` (and nothing done) when the turn has
        been closed already, by whoever ran it."""
        with self._tx() as cur:
            cur.execute("UPDATE turns SET status = ?, ended_at = ? WHERE turn_id = ? AND status = 'running'",
                        (status, utc_now(), turn_id))
            if cur.rowcount == 0:
                return None
            (event,) = self._insert_events(cur, [ended])
        return event

    def has_running_turn(self, thread_id: str) -> bool:
        """Whether a turn of the thread is marked running (by any process sharing the store)."""
        return bool(self._query("SELECT 1 FROM turns WHERE thread_id = ? AND status = 'running' LIMIT 1", (thread_id,)))

    def turns(self, thread_id: str) -> list[Turn]:
        """The thread's turns in order."""
        rows = self._query("SELECT * FROM turns WHERE thread_id = ? ORDER BY number", (thread_id,))
        return [_turn(r) for r in rows]

    def turn_numbered(self, thread_id: str, number: int) -> Turn | None:
        """The thread's turn ``number``, if there is one (a prompt reads the previous turn's end)."""
        rows = self._query("SELECT * FROM turns WHERE thread_id = ? AND number = ?", (thread_id, number))
        return _turn(rows[0]) if rows else None

    # ------------------------------------------------------------------ messages

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

    # ------------------------------------------------------------------ events

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

    # ------------------------------------------------------------------ agent state

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
