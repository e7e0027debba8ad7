"""The workspace database: one store interface over SQLite (embedded, the default) or
PostgreSQL (several server processes on one database; ``--store postgresql://...``).

Each store owns its own tables and writes its SQL once, in SQLite's spelling with ``?``
placeholders; the small differences between the two dialects (placeholders, identity
columns, ``rowid``, per-thread write locks, a few functions) live in the backends below
and in :mod:`jupyter_analyst.store.sqlite` and :mod:`jupyter_analyst.store.postgres`, not in duplicated queries.

Schemas are versioned, forward-only: each store lists its steps in order and the
``schema_version`` table records, per store, how many have been applied. Opening a store
applies the missing ones inside one write transaction (under the database's write lock),
so two processes opening the same database at once cannot both apply a step. A SQLite
workspace made before the table existed opens as version 0; its first step is the
original schema written with ``IF NOT EXISTS``, which leaves its tables and rows as they are.
"""

from __future__ import annotations

import contextlib
import importlib
from pathlib import Path
from typing import Any

from ..errors import StorageError
from .backend import Backend, Row
from .sqlite import SQLiteBackend


def is_store_url(location: Path | str) -> bool:
    """Whether ``location`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


#: Where each kind of store location is opened: a URL scheme, and the module and class of its
#: backend (imported when first used: psycopg is an optional extra).
_BACKENDS: dict[str, str] = {"postgresql": "jupyter_analyst.store.postgres:PostgresBackend",
                             "postgres": "jupyter_analyst.store.postgres:PostgresBackend"}


def register_backend(scheme: str, backend: str) -> None:
    """Open locations of ``scheme://`` with ``backend`` (``"module:Class"``, taking the URL)."""
    _BACKENDS[scheme] = backend


def open_backend(location: Path | str) -> Backend:
    """The backend for a SQLite file path or a URL of a registered scheme (``postgresql://``)."""
    text = str(location)
    scheme = text.split("://", 1)[0] if "://" in text else None
    if scheme is None:
        return SQLiteBackend(Path(location))
    if scheme not in _BACKENDS:
        raise StorageError(f"no store for {scheme}:// locations", hint="use a folder, or a postgresql:// URL")
    module, _, name = _BACKENDS[scheme].partition(":")
    return getattr(importlib.import_module(module), name)(text)


class DatabaseStore:
    """A thread-safe handle on the workspace database with its tables created (SQLite or
    PostgreSQL, by ``location``)."""

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
