"""SQL: data sources, the read-only guard, canonical queries and the query runner.

SQL never runs inside the kernel: it runs here, and its results enter the kernel as
Parquet artifacts.
"""

from .guard import check_read_only
from .intent import DataIntent, data_intent
from .paths import absolute_spec, display_spec
from .model import ColumnInfo, PreparedQuery, QueryResult, TableDescription, TableInfo
from .prepare import canonical_sql, nearest, prepare_query
from .runner import QueryRunner
from .sources import DataSource, DuckDBSource, SQLAlchemySource, open_source, register_source

__all__ = [
    "ColumnInfo",
    "DataIntent",
    "DataSource",
    "DuckDBSource",
    "PreparedQuery",
    "QueryResult",
    "QueryRunner",
    "SQLAlchemySource",
    "TableDescription",
    "TableInfo",
    "absolute_spec",
    "canonical_sql",
    "data_intent",
    "check_read_only",
    "display_spec",
    "nearest",
    "open_source",
    "prepare_query",
    "register_source",
]
