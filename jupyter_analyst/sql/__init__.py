"""SQL: data sources, the read-only guard, canonical queries and the query runner.

SQL never runs inside the kernel: it runs here, and its results enter the kernel as
Parquet artifacts.

The names below are imported on first use, so that a worker that only prepares SQL (see
``preparer.py``) starts without loading DuckDB and Arrow. They are the package's face:
other packages import from here, never from its modules (``tests/contracts/test_layers.py``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .check_cache import data_version_note
    from .intent import DataIntent, data_intent
    from .paths import absolute_spec, display_spec, local_path, model_spec
    from .query_model import ClearedQuery, ColumnInfo, PreparedQuery, QueryResult, TableInfo
    from .prepare import prepare_query
    from .query_progress import QueryProgress
    from .schema_outline import OUTLINE_COLUMNS, OUTLINE_TABLES, SourceOutline, source_outline
    from .preparer import DEFAULT_MAX_CHARS, DEFAULT_TIMEOUT_S, SqlPreparer
    from .query_runner import QueryRunner
    from .sealed import EngineLimits
    from .source_engine import BatchQuery, QueryRun, ResultBatches, RunningQuery, SourceEngine
    from .sources import DataSource, open_source, register_source
    from .table_fingerprints import table_prints

_HOME = {
    "data_version_note": "check_cache",
    "absolute_spec": "paths",
    "display_spec": "paths",
    "model_spec": "paths",
    "local_path": "paths",
    "DataIntent": "intent",
    "data_intent": "intent",
    "OUTLINE_COLUMNS": "schema_outline",
    "OUTLINE_TABLES": "schema_outline",
    "SourceOutline": "schema_outline",
    "source_outline": "schema_outline",
    "ClearedQuery": "query_model",
    "PreparedQuery": "query_model",
    "QueryResult": "query_model",
    "ColumnInfo": "query_model",
    "TableInfo": "query_model",
    "prepare_query": "prepare",
    "QueryProgress": "query_progress",
    "SqlPreparer": "preparer",
    "DEFAULT_MAX_CHARS": "preparer",
    "DEFAULT_TIMEOUT_S": "preparer",
    "QueryRunner": "query_runner",
    "EngineLimits": "sealed",
    "DataSource": "sources",
    "SourceEngine": "source_engine",
    "RunningQuery": "source_engine",
    "BatchQuery": "source_engine",
    "QueryRun": "source_engine",
    "ResultBatches": "source_engine",
    "open_source": "sources",
    "register_source": "sources",
    "table_prints": "table_fingerprints",
}

__all__ = [
    "BatchQuery", "ClearedQuery", "ColumnInfo", "DEFAULT_MAX_CHARS", "DEFAULT_TIMEOUT_S", "DataIntent", "DataSource", "EngineLimits",
    "OUTLINE_COLUMNS", "OUTLINE_TABLES", "PreparedQuery", "QueryProgress", "QueryResult", "QueryRun", "QueryRunner",
    "ResultBatches", "RunningQuery", "SourceEngine", "SourceOutline",
    "SqlPreparer", "TableInfo", "absolute_spec", "data_intent", "data_version_note", "display_spec", "local_path", "model_spec", "open_source",
    "prepare_query", "register_source", "source_outline", "table_prints",
]


__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
