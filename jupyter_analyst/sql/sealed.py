"""The engine's own walls: what a source's database refuses whatever SQL reaches it.

The read-only guard (``prepare/guard.py``, ``prepare/functions.py``) judges the model's SQL
before it runs; this module makes the engine refuse the same things on its own, so that SQL
the guard wrongly clears still cannot leave the source:

* **DuckDB**: every database is an in-memory instance of its own (never DuckDB's process-wide
  cache of file databases, whose settings another source would share), with the source
  attached read-only. Before any query it is sealed: no file system access
  (``enable_external_access=false``) except the source's own data files (``allowed_paths``)
  and one private folder of its own (the named pipe its results are written through, its
  spill files), no extension loaded or installed on demand, a memory limit, a bounded spill
  folder, a thread count, and ``lock_configuration=true`` so no statement can change any of
  it. ``getenv``, ``read_text('/proc/self/environ')``, ``glob``, ``duckdb_settings()`` of the
  host's paths, ``ATTACH`` elsewhere: all fail in the engine.
* **SQLite**: the file opened read-only (``mode=ro``), ``PRAGMA query_only``, extension
  loading off, and an authorizer that allows reading and calling allowed functions only.
* **PostgreSQL**: every session read-only (``default_transaction_read_only``) with a
  ``statement_timeout``, each query in a ``READ ONLY`` transaction, and no connection reused
  (whatever a session held, advisory locks included, ends with it).

A query that runs past its time is stopped in the engine (``interrupt`` for DuckDB and
SQLite, a cancel request for PostgreSQL), never left to run on in a thread. The model's
DuckDB queries run in a second instance, sealed the same, in a worker process of the
source's (``engine_process.py``), whose memory the operating system caps.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from .sealing import literal, seal

MB = 2**20
GB = 2**30

def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: a modest guess
        return 8 * GB


class EngineLimits(BaseModel):
    """What one source's engine may use while it runs queries (DuckDB sources)."""

    memory_bytes: int | None = Field(default=None, ge=64 * MB)
    """DuckDB's memory limit; default a quarter of the machine's memory (DuckDB's own
    default is 80%, which one query can take from everything else on the machine). With a
    fixed overhead, also the cap on the memory of the source's engine worker, the process the
    model's queries run in (``engine_process.data_limit``)."""
    threads: int | None = Field(default=None, ge=1)
    """Threads one query may use; default the cores this process may run on."""
    spill_bytes: int = Field(default=4 * GB, ge=0)
    """Disk a query may spill to (in the source's private folder) past its memory limit."""

    def memory(self) -> int:
        """The memory limit in bytes.

        >>> EngineLimits(memory_bytes=2**30).memory()
        1073741824
        """
        return self.memory_bytes if self.memory_bytes is not None else max(256 * MB, _physical_memory() // 4)

    def thread_count(self) -> int:
        """The thread count."""
        if self.threads is not None:
            return self.threads
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class PrivateFolder:
    """A folder of the host's, mode 0700, for one source's engine: the only place its
    DuckDB may touch besides the source's own files; removed when the source closes."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="analyst-engine-"))

    def remove(self) -> None:
        """Remove the folder and what the engine left there."""
        shutil.rmtree(self.path, ignore_errors=True)


def seal_duckdb(
    conn: Any, private: Path, *, files: Iterable[Path] = (), limits: EngineLimits | None = None, sessions: int = 0,
) -> list[Any]:
    """Seal a DuckDB instance: only ``files`` and ``private`` reachable, ``limits`` set, locked
    (see ``sealing.seal``, which the engine worker calls with the figures of its host's limits).

    Returns ``sessions`` connections opened just before the lock with the engine's progress
    estimate on.
    """
    limits = limits or EngineLimits()
    return seal(conn, private, files=files, memory=limits.memory(), threads=limits.thread_count(),
                spill=limits.spill_bytes, sessions=sessions)


#: What ``read_settings`` reads back, to show a source is sealed (tests, ``doctor``).
SEALED_SETTINGS = ("enable_external_access", "lock_configuration", "autoload_known_extensions",
                   "autoinstall_known_extensions", "allow_community_extensions", "memory_limit", "threads",
                   "max_temp_directory_size", "temp_directory", "allowed_directories", "allowed_paths",
                   "home_directory", "secret_directory", "custom_extension_repository")


def duckdb_settings(conn: Any) -> dict[str, str]:
    """The sealing settings of a DuckDB connection, as the engine reports them."""
    names = ", ".join(literal(n) for n in SEALED_SETTINGS)
    rows = conn.execute(f"SELECT name, value FROM duckdb_settings() WHERE name IN ({names})").fetchall()
    return {str(name): str(value) for name, value in rows}


# ---------------------------------------------------------------------- SQLAlchemy sources

#: A PostgreSQL session's own limit on any one statement: the query runner stops a query at
#: its timeout itself; this bounds the host's own look-ups (table lists, row counts) too.
SESSION_STATEMENT_TIMEOUT_MS = 300_000
#: A session left inside a transaction (its client died) ends after this long.
IDLE_IN_TRANSACTION_MS = 60_000


def read_only_postgres(url: Any) -> Any:
    """A PostgreSQL URL whose sessions start read-only with a statement timeout (as startup
    options, which ``RESET`` returns to); a plain ``postgresql://`` URL uses psycopg 3 where
    psycopg2 is not installed. (No connection is pooled, on any engine: see
    ``sqlalchemy_engine.py``.)"""
    url = _postgres_driver(url)
    options = " ".join(part for part in (
        str(url.query.get("options") or ""),
        "-c default_transaction_read_only=on",
        f"-c statement_timeout={SESSION_STATEMENT_TIMEOUT_MS}",
        f"-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_MS}",
    ) if part)
    return url.update_query_dict({"options": options})


def _postgres_driver(url: Any) -> Any:
    if url.drivername != "postgresql":
        return url
    import importlib.util

    if importlib.util.find_spec("psycopg2") is None and importlib.util.find_spec("psycopg") is not None:
        return url.set(drivername="postgresql+psycopg")
    return url


#: The largest string or blob a SQLite connection builds or reads (``SQLITE_LIMIT_LENGTH``):
#: the guard bounds each call's size arguments (``prepare/sizes.py``), but ``s || s`` in nested
#: subqueries doubles a value per level without a size argument (five levels of eight took a
#: process from 134 MB to 3.4 GB). SQLite builds one row at a time, so a value past this
#: fails the query ("string or blob too big") long before memory runs short.
SQLITE_MAX_VALUE_BYTES = 16 * 2**20


def harden_sqlite(engine: Any) -> None:
    """Make every new connection of a SQLite engine refuse writes and extensions, and build
    no value over :data:`SQLITE_MAX_VALUE_BYTES`."""
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _read_only(dbapi_connection: Any, _record: Any) -> None:
        if hasattr(dbapi_connection, "enable_load_extension"):
            dbapi_connection.enable_load_extension(False)
        if hasattr(dbapi_connection, "setlimit"):  # sqlite3, Python 3.11+
            import sqlite3

            dbapi_connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, SQLITE_MAX_VALUE_BYTES)
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA query_only = ON")
        finally:
            cursor.close()


class QueryGuard:
    """The way to stop one query on an open connection from another thread (``stop``: a
    SQLite interrupt, a PostgreSQL cancel request). Each engine sets its own limits on the
    connection first (``SQLAlchemySource.open_query``)."""

    def __init__(self, connection: Any) -> None:
        self.raw = connection.connection.driver_connection

    @property
    def can_stop(self) -> bool:
        """Whether :meth:`stop` reaches the engine."""
        return any(hasattr(self.raw, name) for name in ("interrupt", "cancel_safe", "cancel"))

    def stop(self) -> None:
        """Ask the engine to stop the running statement (safe from any thread, and once the
        statement has ended: a query past its time is interrupted again until its thread lets
        go, and its thread may have closed the connection first)."""
        if hasattr(self.raw, "interrupt"):  # sqlite3: immediate; a closed connection raises
            _quietly(self.raw.interrupt)
            return
        cancel = getattr(self.raw, "cancel_safe", None) or getattr(self.raw, "cancel", None)
        if cancel is not None:
            import threading

            # A network round trip: never on the caller's (the event loop's) thread.
            threading.Thread(target=_quietly, args=(cancel,), name="sql-cancel", daemon=True).start()


def _quietly(call: Any) -> None:
    try:
        call()
    except Exception:  # noqa: BLE001 - the statement may have ended meanwhile: nothing to cancel
        pass


# sqlite3's authorizer action codes (the sqlite3 module names them too, from Python 3.11).
_SQLITE_OK, _SQLITE_DENY = 0, 1
_SQLITE_READ, _SQLITE_SELECT, _SQLITE_FUNCTION, _SQLITE_RECURSIVE = 20, 21, 31, 33


def sqlite_authorizer(action: int, arg1: str | None, arg2: str | None, _db: str | None, _trigger: str | None) -> int:
    """Reads, selects and allowed functions: nothing else (no PRAGMA, ATTACH, writes)."""
    if action in (_SQLITE_READ, _SQLITE_SELECT, _SQLITE_RECURSIVE):
        return _SQLITE_OK
    if action == _SQLITE_FUNCTION:
        # Imported here: the lists' reader imports sqlglot, which opening a source does not need.
        from .prepare import allowed_functions

        return _SQLITE_OK if (arg2 or "").lower() in allowed_functions("sqlite")[0] else _SQLITE_DENY
    return _SQLITE_DENY
