"""The SQLite backend of the workspace database: one connection per store, WAL, and writes
that wait for another connection in steps of tens of microseconds."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from .._disk import unavailable
from ..errors import StorageError
from .backend import Row, apply_steps

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
