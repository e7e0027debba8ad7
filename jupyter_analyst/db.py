"""The workspace database: one store interface over SQLite (embedded, the default) or
PostgreSQL (several server processes on one database; ``--store postgresql://...``).

Each store owns its own tables and writes its SQL once, in SQLite's spelling with ``?``
placeholders; the small differences between the two dialects (placeholders, identity
columns, ``rowid``, per-thread write locks, a few functions) live in the backends below
and in :mod:`jupyter_analyst.db_postgres`, not in duplicated queries.

Schemas are versioned, forward-only: each store lists its steps in order and the
``schema_version`` table records, per store, how many have been applied. Opening a store
applies the missing ones inside one write transaction (under the database's write lock),
so two processes opening the same database at once cannot both apply a step. A SQLite
workspace made before the table existed opens as version 0; its first step is the
original schema written with ``IF NOT EXISTS``, which leaves its tables and rows as they are.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ._disk import unavailable
from .errors import StorageError


T = TypeVar("T")

#: How long an operation waits while another connection holds the SQLite file.
BUSY_TIMEOUT_S = 30.0
#: The first wait, doubled at each retry up to :data:`_BUSY_STEP_MAX_S`.
_BUSY_STEP_S = 25e-6
_BUSY_STEP_MAX_S = 0.005


class _Busy(sqlite3.OperationalError):
    """A checkpoint that could not finish: another connection held the file."""


def _patiently(attempt: Callable[[], T]) -> T:
    """``attempt()``, tried again while another connection holds the SQLite file, for up to
    :data:`BUSY_TIMEOUT_S`. The waits start at tens of microseconds and double: a write
    transaction here lasts a fraction of a millisecond, and SQLite's own busy handler
    would sleep a whole one before its first retry (a turn's first event, waiting on the
    last turn's summary being written, took three times as long as it needed)."""
    step = _BUSY_STEP_S
    deadline: float | None = None
    while True:
        try:
            return attempt()
        except sqlite3.OperationalError as exc:
            # Only "busy" passes: another connection's lock ends. A table locked by this very
            # connection (SQLITE_LOCKED) would not, and is raised at once.
            if not isinstance(exc, _Busy) and getattr(exc, "sqlite_errorcode", 0) & 0xFF != sqlite3.SQLITE_BUSY:
                raise
            now = time.monotonic()
            deadline = now + BUSY_TIMEOUT_S if deadline is None else deadline
            if now >= deadline:
                raise
            time.sleep(step)
            step = min(step * 2, _BUSY_STEP_MAX_S)


def is_store_url(location: Path | str) -> bool:
    """Whether ``location`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


class Row(Protocol):
    """A result row read by position or by column name (``dict(row)`` works)."""

    def __getitem__(self, key: int | str) -> Any: ...
    def keys(self) -> Sequence[str]: ...


class Backend(Protocol):
    """What a store needs of its database; one per store object."""

    name: str

    def tx(self) -> contextlib.AbstractContextManager[Any]: ...
    def query(self, sql: str, params: tuple[Any, ...]) -> list[Row]: ...
    def lock_thread(self, cur: Any, thread_id: str) -> None: ...
    def notify_event(self, cur: Any, thread_id: str, seq: int) -> None: ...
    def migrate(self, component: str, steps: Sequence[str]) -> None: ...
    def contains(self, column: str) -> str: ...
    def json_text(self, column: str, key: str) -> str: ...
    def checkpoint(self) -> None: ...
    def close(self) -> None: ...


class SQLiteBackend:
    """One connection per store, WAL, ``BEGIN IMMEDIATE`` per write."""

    name = "sqlite"

    def __init__(self, db_path: Path) -> None:
        self.db_path = Path(db_path)
        self._lock = threading.RLock()
        try:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
            # No busy timeout of SQLite's own: its first retry comes after a whole
            # millisecond, longer than most transactions here take (see ``_patiently``).
            self._conn = sqlite3.connect(self.db_path, check_same_thread=False, isolation_level=None, timeout=0)
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "foreign_keys=ON"):
                _patiently(lambda pragma=pragma: self._conn.execute(f"PRAGMA {pragma}").fetchall())
        except (OSError, sqlite3.Error) as exc:
            raise self._failure(exc, "cannot open the workspace database") from exc

    def _failure(self, exc: BaseException, doing: str) -> StorageError:
        """The error to raise for a failed database operation: a read-only or full workspace
        is said as such (one clear line for the user); anything else names the file."""
        return unavailable(exc, self.db_path.parent) or StorageError(f"{doing} {self.db_path}: {exc}")

    def migrate(self, component: str, steps: Sequence[str]) -> None:
        try:
            _patiently(lambda: self._conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
            ))
        except sqlite3.Error as exc:
            raise self._failure(exc, "cannot open the workspace database") from exc
        with self.tx() as cur:
            apply_steps(cur, component, steps, list(steps), where=str(self.db_path))

    def checkpoint(self) -> None:
        """Copy the write-ahead log into the database file and sync both.

        In WAL mode a commit lives in the ``-wal`` file until a checkpoint; after this one,
        what was committed no longer depends on that file (a kill, a power cut, or an
        operator deleting it loses none of it). Costs a few milliseconds: done once per turn.
        """
        with self._lock:
            try:
                _patiently(self._checkpoint_once)
            except _Busy:
                pass  # readers held an older snapshot all along: the log keeps what they did not let through
            except sqlite3.Error as exc:
                raise self._failure(exc, "cannot checkpoint the workspace database") from exc

    def _checkpoint_once(self) -> None:
        """One try at a full checkpoint; busy while another connection writes or reads an
        older snapshot (with no busy handler, SQLite says so in its answer, not by raising)."""
        ((busy, *_),) = self._conn.execute("PRAGMA wal_checkpoint(FULL)").fetchall()
        if busy:
            raise _Busy("database is locked")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def lock_thread(self, cur: Any, thread_id: str) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already holds the whole file's write lock."""

    def notify_event(self, cur: Any, thread_id: str, seq: int) -> None:
        """Nothing to do: listeners of a SQLite workspace live in the writing process."""

    def contains(self, column: str) -> str:
        return f"instr(lower({column}), lower(?)) > 0"

    def json_text(self, column: str, key: str) -> str:
        return f"json_extract({column}, '$.{key}')"

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Cursor]:
        # BEGIN IMMEDIATE takes the write lock up front, so two processes writing the same
        # thread cannot both read the same max(seq) or both insert the same content.
        with self._lock:
            cur = self._cursor("cannot write to the workspace database")
            try:
                _patiently(lambda: cur.execute("BEGIN IMMEDIATE"))
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

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
        with self._lock:
            cur = self._cursor("cannot read the workspace database")
            cur.row_factory = sqlite3.Row
            try:
                return _patiently(lambda: cur.execute(sql, params).fetchall())
            except sqlite3.Error as exc:
                raise self._failure(exc, "cannot read the workspace database") from exc
            finally:
                cur.close()

    def _cursor(self, doing: str) -> sqlite3.Cursor:
        try:
            return self._conn.cursor()
        except sqlite3.Error as exc:  # a closed connection: a store used after it was closed
            raise self._failure(exc, doing) from exc


def apply_steps(cur: Any, component: str, steps: Sequence[str], ddl: Sequence[str], *, where: str) -> None:
    """Run the steps of ``component`` the database lacks (``ddl`` is each step in the
    backend's dialect), inside the caller's write transaction, and record the count."""
    row = cur.execute("SELECT version FROM schema_version WHERE component = ?", (component,)).fetchone()
    current = int(row[0]) if row else 0
    if current > len(steps):
        raise StorageError(
            f"{where} has {component} schema version {current}, newer than this "
            f"jupyter-analyst knows ({len(steps)}): upgrade jupyter-analyst to open it"
        )
    for step in ddl[current:]:
        for statement in statements(step):
            cur.execute(statement)
    if current < len(steps):
        cur.execute(
            "INSERT INTO schema_version VALUES (?, ?) ON CONFLICT(component) DO UPDATE SET version = excluded.version",
            (component, len(steps)),
        )


def open_backend(location: Path | str) -> Backend:
    """The backend for a SQLite file path or a ``postgresql://`` URL."""
    if is_store_url(location):
        from .db_postgres import PostgresBackend  # psycopg is an optional extra

        return PostgresBackend(str(location))
    return SQLiteBackend(Path(location))


class SQLiteStore:
    """A thread-safe handle on the workspace database with its tables created (SQLite or
    PostgreSQL, by ``location``; the name is kept from when only SQLite existed)."""

    schema = ""
    """The store's first migration (its original tables); kept for stores with no other."""
    migrations: tuple[str, ...] = ()
    """Forward-only schema steps after ``schema``: version n is ``(schema, *migrations)[n-1]``.
    Append only; never edit or reorder a step that has shipped."""
    component = ""
    """The store's key in ``schema_version`` (its class name when empty)."""

    def __init__(self, location: Path | str) -> None:
        self.location = location
        self.backend = open_backend(location)
        try:
            self.backend.migrate(self._component, (self.schema, *self.migrations) if self.schema else self.migrations)
        except BaseException:
            self.backend.close()
            raise

    @property
    def db_path(self) -> Path | None:
        """The SQLite file, or ``None`` on PostgreSQL."""
        return getattr(self.backend, "db_path", None)

    @property
    def schema_version(self) -> int:
        """How many of the store's schema steps the database has."""
        rows = self._query("SELECT version FROM schema_version WHERE component = ?", (self._component,))
        return int(rows[0]["version"]) if rows else 0

    @property
    def _component(self) -> str:
        return self.component or type(self).__name__

    def checkpoint(self) -> None:
        """Make what was committed durable without the write-ahead log (SQLite; a no-op on
        PostgreSQL, whose commit is already durable)."""
        self.backend.checkpoint()

    def close(self) -> None:
        """Close the connection(s)."""
        self.backend.close()

    def _tx(self) -> contextlib.AbstractContextManager[Any]:
        return self.backend.tx()

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
        return self.backend.query(sql, params)


def statements(script: str) -> Iterator[str]:
    """The complete SQL statements of ``script``, one at a time: ``executescript`` would
    commit the migration's transaction before running them."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""
    if any(ln.strip() and not ln.strip().startswith("--") for ln in buffer.splitlines()):
        yield buffer.strip()
