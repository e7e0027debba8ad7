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


class QueryShape(BaseModel):
    """What a query computes, as its syntax tree says (for the data-intent note)."""

    measures: list[str] = []
    """Aggregates, as ``name = SQL``."""
    dimensions: list[str] = []
    """What the rows are grouped by (or the plain columns when nothing is aggregated)."""
    filters: list[str] = []
    """Every condition that limits the rows, one per AND-ed term: WHERE, HAVING and join
    conditions that test one side, in the query and in each CTE or subquery feeding it."""
    source: str = ""
    """What the rows are read from when tables are joined (``flights LEFT JOIN planes ON
    tailnum``); empty when nothing is joined or the joins could not be said."""
    brief: dict[str, str] = {}
    """The short form of each long term above (whole sub-expressions elided as ``…``)."""


class ClearedQuery(BaseModel):
    """A query past the read-only guard that names only tables the source has: safe to run
    while its columns are still being checked and its canonical text written (see
    ``SqlPreparer.prepare``'s ``on_cleared``). What runs is exactly the ``executable`` the
    finished :class:`PreparedQuery` carries."""

    executable: str
    """The query in the source's dialect."""
    has_order: bool = False
    """Whether the query orders its rows itself (otherwise the runner imposes an order)."""


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
    shape: QueryShape = QueryShape()
    """Its measures, dimensions and filters, read while it was prepared (never parsed again)."""


class QueryResult(BaseModel):
    """What running a query produced."""

    rows: int
    columns: list[ColumnInfo]
    truncated: bool = False
    """Whether rows past the row cap were dropped."""
    dropped: int | None = 0
    """How many were dropped; ``None`` when there were more but counting them took too long."""
    row_cap: int | None = None
    """The cap the query ran under."""
    elapsed_s: float
    sample: list[dict[str, Any]] = []
    fingerprint: str = ""
    """``sha256:<hex>`` of the Parquet file's bytes, hashed as they were written."""
    size: int = 0
    """The file's size in bytes."""
    time_range: dict[str, list[str]] = {}
    """For each date or time column: its first and last value."""
