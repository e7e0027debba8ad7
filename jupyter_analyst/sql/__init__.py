"""SQL: data sources, the read-only guard, canonical queries and the query runner.

SQL never runs inside the kernel: it runs here, and its results enter the kernel as
Parquet artifacts.

The names below are imported on first use, so that a worker that only prepares SQL (see
``preparer.py``) starts without loading DuckDB and Arrow.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .guard import check_read_only
    from .intent import DataIntent, data_intent
    from .paths import absolute_spec, display_spec
    from .model import ClearedQuery, ColumnInfo, PreparedQuery, QueryResult, TableDescription, TableInfo
    from .prepare import canonical_sql, prepare_query, prepare_sql
    from .preparer import SqlPreparer
    from .runner import QueryRunner
    from .sources import DataSource, DuckDBSource, SQLAlchemySource, open_source, register_source

_HOME = {
    "absolute_spec": "paths",
    "display_spec": "paths",
    "check_read_only": "guard",
    "DataIntent": "intent",
    "data_intent": "intent",
    "ClearedQuery": "model",
    "ColumnInfo": "model",
    "PreparedQuery": "model",
    "QueryResult": "model",
    "TableDescription": "model",
    "TableInfo": "model",
    "canonical_sql": "prepare",
    "prepare_query": "prepare",
    "prepare_sql": "prepare",
    "SqlPreparer": "preparer",
    "QueryRunner": "runner",
    "DataSource": "sources",
    "DuckDBSource": "sources",
    "SQLAlchemySource": "sources",
    "open_source": "sources",
    "register_source": "sources",
}

__all__ = sorted(_HOME)


__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
