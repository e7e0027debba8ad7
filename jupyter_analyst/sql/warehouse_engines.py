"""Warehouses as source engines: Trino, BigQuery, Snowflake and Databricks SQL, each through
its SQLAlchemy dialect (an extra of the package each: ``pyproject.toml``).

Their SQL is checked in their own sqlglot dialect against their own function list
(``allowed/<dialect>.txt``). Where the engine has a per-session time limit, each model query's
session gets the query's own limit before the query runs (as PostgreSQL's
``statement_timeout``), so the warehouse stops a query the runner gave up on even where the
driver cannot cancel it; Snowflake's queries are also tagged, so an administrator can find
them. None has a read-only session: the source needs a read-only role (docs/data-sources.md).
No warehouse server runs in the test suite: these statements are tested as text, the rest as
the generic SQLAlchemy engine.
"""

from __future__ import annotations

import math
from typing import Any

from .sealed import QueryGuard
from .sqlalchemy_engine import SQLAlchemySource

#: What Snowflake's queries are tagged with (``QUERY_TAG``), to be found in its query history.
QUERY_TAG = "jupyter-analyst"


class WarehouseSource(SQLAlchemySource):
    """A warehouse: the generic engine, with the query's time limit set on its session."""

    def session_limits(self, timeout_s: float) -> list[str]:
        """The statements that bound one query's session (the host's own, never the model's)."""
        return []

    def open_query(self, conn: Any, timeout_s: float) -> QueryGuard:
        guard = QueryGuard(conn)
        for statement in self.session_limits(timeout_s):
            conn.exec_driver_sql(statement)
        return guard


def _seconds(timeout_s: float) -> int:
    """Whole seconds, at least one, a little past the limit (the runner's stop comes first).

    >>> _seconds(0.3), _seconds(60)
    (2, 61)
    """
    return max(1, math.ceil(timeout_s)) + 1


class TrinoSource(WarehouseSource):
    """Trino: ``query_max_run_time`` per session."""

    dialect = "trino"

    def session_limits(self, timeout_s: float) -> list[str]:
        """
        >>> TrinoSource.session_limits(None, 60)
        ["SET SESSION query_max_run_time = '61s'"]
        """
        return [f"SET SESSION query_max_run_time = '{_seconds(timeout_s)}s'"]


class SnowflakeSource(WarehouseSource):
    """Snowflake: ``STATEMENT_TIMEOUT_IN_SECONDS`` and a ``QUERY_TAG`` per session."""

    dialect = "snowflake"

    def session_limits(self, timeout_s: float) -> list[str]:
        """
        >>> SnowflakeSource.session_limits(None, 60)
        ['ALTER SESSION SET STATEMENT_TIMEOUT_IN_SECONDS = 61', "ALTER SESSION SET QUERY_TAG = 'jupyter-analyst'"]
        """
        return [f"ALTER SESSION SET STATEMENT_TIMEOUT_IN_SECONDS = {_seconds(timeout_s)}",
                f"ALTER SESSION SET QUERY_TAG = '{QUERY_TAG}'"]


class DatabricksSource(WarehouseSource):
    """Databricks SQL: ``STATEMENT_TIMEOUT`` per session."""

    dialect = "databricks"

    def session_limits(self, timeout_s: float) -> list[str]:
        """
        >>> DatabricksSource.session_limits(None, 60)
        ['SET STATEMENT_TIMEOUT = 61']
        """
        return [f"SET STATEMENT_TIMEOUT = {_seconds(timeout_s)}"]


class BigQuerySource(WarehouseSource):
    """BigQuery: no session setting bounds a query's time (a job's cost is bounded by the
    project's ``maximum_bytes_billed``, which its administrator sets)."""

    dialect = "bigquery"


#: The engine of each warehouse, by its URL scheme.
WAREHOUSES: dict[str, type[WarehouseSource]] = {
    "trino": TrinoSource, "bigquery": BigQuerySource, "snowflake": SnowflakeSource, "databricks": DatabricksSource,
}
