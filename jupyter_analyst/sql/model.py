"""What the SQL layer hands out: table descriptions, prepared queries, query results."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class TableInfo(BaseModel):
    """A table or view of a source."""

    name: str
    kind: str = "table"
    rows: int | None = None


class ColumnInfo(BaseModel):
    """A column: its name and the engine's type name."""

    name: str
    type: str
    nullable: bool = True


class TableDescription(BaseModel):
    """A table's columns, row count and first rows."""

    name: str
    columns: list[ColumnInfo]
    rows: int | None = None
    sample: list[dict[str, Any]] = []


class PreparedQuery(BaseModel):
    """A query that passed the guard, in its canonical and executable forms."""

    original: str
    canonical: str
    """Normalised text used for fingerprints (layout, case, quoting, table aliases removed)."""
    executable: str
    """The query in the source's dialect."""
    tables: list[str]
    has_order: bool = False
    """Whether the query orders its rows itself (otherwise the runner imposes an order)."""


class QueryResult(BaseModel):
    """What running a query produced."""

    rows: int
    columns: list[ColumnInfo]
    truncated: bool = False
    elapsed_s: float
    sample: list[dict[str, Any]] = []
