"""The workspace's SQLite file: one connection per store, WAL, one transaction per write.

Threads, events and the inventory share the file; each store owns its own tables.

Schemas are versioned, forward-only: each store lists its migrations in order and the
``schema_version`` table records, per store, how many have been applied. Opening a store
applies the missing ones inside one ``BEGIN IMMEDIATE`` transaction, so two processes
opening the same file at once cannot both apply a step. A workspace made before the table
existed opens as version 0; its first migration is the original schema written with
``IF NOT EXISTS``, which leaves its tables and rows as they are.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .disk import unavailable
from .errors import StorageError


def utc_now() -> str:
    """The current time as ISO-8601 UTC with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class SQLiteStore:
    """A thread-safe connection to the workspace database with its tables created."""

    schema = ""
    """The store's first migration (its original tables); kept for stores with no other."""
    migrations: tuple[str, ...] = ()
    """Forward-only schema steps after ``schema``: version n is ``(schema, *migrations)[n-1]``.
    Append only; never edit or reorder a step that has shipped."""
    component = ""
    """The store's key in ``schema_version`` (its class name when empty)."""

    def __init__(self, db_path: Path) -> None:
        self.db_path = Path(db_path)
        self._lock = threading.RLock()
        try:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.db_path, check_same_thread=False, isolation_level=None, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except (OSError, sqlite3.Error) as exc:
            raise self._failure(exc, "cannot open the workspace database") from exc

    @property
    def schema_version(self) -> int:
        """How many of the store's schema steps the database has."""
        rows = self._query("SELECT version FROM schema_version WHERE component = ?", (self._component,))
        return int(rows[0]["version"]) if rows else 0

    @property
    def _component(self) -> str:
        return self.component or type(self).__name__

    def _migrate(self) -> None:
        steps = (self.schema, *self.migrations) if self.schema else self.migrations
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
        )
        with self._tx() as cur:
            row = cur.execute("SELECT version FROM schema_version WHERE component = ?", (self._component,)).fetchone()
            current = int(row[0]) if row else 0
            if current > len(steps):
                raise StorageError(
                    f"{self.db_path} has {self._component} schema version {current}, newer than this "
                    f"jupyter-analyst knows ({len(steps)}): upgrade jupyter-analyst to open it"
                )
            for step in steps[current:]:
                for statement in _statements(step):
                    cur.execute(statement)
            if current < len(steps):
                cur.execute(
                    "INSERT INTO schema_version VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                    (self._component, len(steps)),
                )

    def _failure(self, exc: BaseException, doing: str) -> StorageError:
        """The error to raise for a failed database operation: a read-only or full workspace
        is said as such (one clear line for the user); anything else names the file."""
        return unavailable(exc, self.db_path.parent) or StorageError(f"{doing} {self.db_path}: {exc}")

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database file and sync both.

        In WAL mode a commit lives in the ``-wal`` file until a checkpoint; after this one,
        what was committed no longer depends on that file (a kill, a power cut, or an
        operator deleting it loses none of it). Costs a few milliseconds: done once per turn.
        """
        with self._lock:
            try:
                self._conn.execute("PRAGMA wal_checkpoint(FULL)").fetchall()
            except sqlite3.Error as exc:
                raise self._failure(exc, "cannot checkpoint the workspace database") from exc

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Cursor]:
        # BEGIN IMMEDIATE takes the write lock up front, so two processes writing the same
        # thread cannot both read the same max(seq) or both insert the same content.
        with self._lock:
            cur = self._cursor("cannot write to the workspace database")
            try:
                cur.execute("BEGIN IMMEDIATE")
                yield cur
                cur.execute("COMMIT")
            except BaseException as exc:
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):  # the first error is the one to tell
                        cur.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise self._failure(exc, "cannot write to the workspace database") from exc
                raise
            finally:
                cur.close()

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cur = self._cursor("cannot read the workspace database")
            cur.row_factory = sqlite3.Row
            try:
                return cur.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise self._failure(exc, "cannot read the workspace database") from exc
            finally:
                cur.close()

    def _cursor(self, doing: str) -> sqlite3.Cursor:
        try:
            return self._conn.cursor()
        except sqlite3.Error as exc:  # a closed connection: a store used after it was closed
            raise self._failure(exc, doing) from exc


def _statements(script: str) -> Iterator[str]:
    """The complete SQL statements of ``script``, one at a time: ``executescript`` would
    commit the migration's transaction before running them."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""
    if buffer.strip() and not all(
        ln.strip().startswith("--") or not ln.strip() for ln in buffer.splitlines()
    ):
        yield buffer.strip()
