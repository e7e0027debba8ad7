"""What a database backend of the stores is: its protocol, the schema steps every backend
applies the same way, and the statements of a schema script."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from ..errors import StorageError


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
