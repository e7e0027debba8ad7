"""PostgreSQL as a source engine, behind the server's own walls.

Every session starts read-only (``default_transaction_read_only``) with a session-wide
``statement_timeout`` (``sealed.read_only_postgres``); each model query runs in a ``READ ONLY``
transaction whose ``statement_timeout`` is the query's own time limit (a little past it, so
the runner's cancel request comes first and says why), and its connection is never reused.
A query past its time is stopped by a cancel request (``sealed.QueryGuard``).
"""

from __future__ import annotations

from typing import Any

from .sealed import QueryGuard, read_only_postgres
from .source_engine import ESTIMATE_TIMEOUT_S, estimates_from
from .sqlalchemy_engine import SQLAlchemySource

#: How long past its own time limit the server stops a query itself.
SERVER_GRACE_MS = 250


class PostgresSource(SQLAlchemySource):
    """A PostgreSQL database through SQLAlchemy (psycopg 3 or psycopg2)."""

    dialect = "postgres"

    def prepare_url(self, url: Any) -> Any:
        return read_only_postgres(url)

    def row_estimates(self) -> dict[str, int]:
        """``pg_class.reltuples`` of the tables on the search path (``-1``: never analysed)."""
        return estimates_from(self.probe(
            "SELECT c.relname, c.reltuples FROM pg_catalog.pg_class c "
            "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = ANY (current_schemas(false)) AND c.relkind IN ('r', 'p', 'm', 'f')",
            ESTIMATE_TIMEOUT_S))

    def open_query(self, conn: Any, timeout_s: float) -> QueryGuard:
        guard = QueryGuard(conn)
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")
        conn.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000) + SERVER_GRACE_MS)}")
        return guard


def is_postgres_url(spec: str) -> bool:
    """Whether ``spec`` is a SQLAlchemy URL of PostgreSQL (any driver).

    >>> is_postgres_url("postgresql+psycopg://u@h/db"), is_postgres_url("sqlite:///x.db")
    (True, False)
    """
    scheme, found, _ = spec.partition("://")
    return bool(found) and scheme.split("+", 1)[0].lower() == "postgresql"
