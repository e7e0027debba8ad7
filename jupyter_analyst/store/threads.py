"""Threads, turns, messages and events, persisted in the workspace database (SQLite or PostgreSQL).

Messages and events are append-only: rows are inserted, never updated or deleted. An
event's sequence number is assigned inside the transaction that stores it, so numbers are
unique and gap-free per thread and an event exists on disk before anyone is shown it.
Every per-thread counter (event seq, turn number, agent-state version) is read and
advanced under the thread's write lock (:meth:`Backend.lock_thread`), which is what keeps
it gap-free when several processes write one PostgreSQL database.
"""

from __future__ import annotations

from pydantic import BaseModel

from .._clock import new_id, utc_now
from ..errors import ConfigError
from .messages import MessageLog
from .proposal_log import ProposalLog
from .schema import MIGRATIONS, SCHEMA, THREAD_TABLES
from .spending import SpendLog
from .state import StateLog
from .turns import ThreadBusy, Turn, TurnLog, TurnStatus, title_of

__all__ = ["Thread", "ThreadBusy", "ThreadStore", "Turn", "TurnStatus", "title_of"]


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


class ThreadStore(TurnLog, MessageLog, StateLog, SpendLog, ProposalLog):
    """Threads, turns, messages, events, agent state, the model's spending and proposed cells of
    one workspace: the threads here, each other concern in a module of its own (``turns``,
    ``events_log``, ``messages``, ``state``, ``spending``, ``proposal_log``), one database and one
    schema (``schema``)."""

    schema = SCHEMA
    migrations = MIGRATIONS
    component = "ThreadStore"


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
            for table in THREAD_TABLES:
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
