"""SQL: data sources, the read-only guard, canonical queries and the query runner.

SQL never runs inside the kernel: it runs here, and its results enter the kernel as
Parquet artifacts.

The names below are imported on first use, so that a worker that only prepares SQL (see
``preparer.py``) starts without loading DuckDB and Arrow. They are the package's face:
other packages import from here, never from its modules (``tests/test_layers.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .intent import DataIntent, data_intent
    from .paths import absolute_spec, display_spec, local_path
    from .outline import OUTLINE_COLUMNS, OUTLINE_TABLES, SourceOutline, TableOutline, source_outline
    from .model import ClearedQuery, ColumnInfo, PreparedQuery, QueryResult, TableDescription, TableInfo
    from .prepare import canonical_sql, check_read_only, prepare_query, prepare_sql
    from .preparer import DEFAULT_MAX_CHARS, DEFAULT_TIMEOUT_S, SqlPreparer
    from .runner import QueryRunner
    from .sealed import EngineLimits
    from .sources import DataSource, DuckDBSource, SQLAlchemySource, open_source, register_source

_HOME = {
    "absolute_spec": "paths",
    "display_spec": "paths",
    "local_path": "paths",
    "check_read_only": "prepare",
    "DataIntent": "intent",
    "data_intent": "intent",
    "OUTLINE_COLUMNS": "outline",
    "OUTLINE_TABLES": "outline",
    "SourceOutline": "outline",
    "TableOutline": "outline",
    "source_outline": "outline",
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
    "DEFAULT_MAX_CHARS": "preparer",
    "DEFAULT_TIMEOUT_S": "preparer",
    "QueryRunner": "runner",
    "EngineLimits": "sealed",
    "DataSource": "sources",
    "DuckDBSource": "sources",
    "SQLAlchemySource": "sources",
    "open_source": "sources",
    "register_source": "sources",
}

__all__ = sorted(_HOME)


__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
