"""What the SQL layer hands out: table descriptions, prepared queries, query results."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

#: What stands for whole sub-expressions a description leaves out (kept here, not in the
#: SQL-parsing modules, so what reads descriptions imports no parser).
ELIDED = "…"


class TableInfo(BaseModel):
    """A table or view of a source."""

    name: str
    kind: str = "table"
    rows: int | None = None
    rows_estimated: bool = False
    """Whether ``rows`` is the engine's catalogue estimate, not a count (a table past a million
    rows by that estimate is not counted: counting reads it whole)."""


class ColumnInfo(BaseModel):
    """A column: its name and the engine's type name."""

    name: str
    type: str
    nullable: bool | None = None
    """``False`` where the engine says the column is ``NOT NULL``; not said otherwise (every
    column may hold NULLs unless declared so: saying it of each one tells nothing)."""


class TableDescription(BaseModel):
    """A table's columns, row count and first rows."""

    name: str
    columns: list[ColumnInfo]
    rows: int | None = None
    rows_estimated: bool = False
    """Whether ``rows`` is the engine's catalogue estimate, not a count (see ``TableInfo``)."""
    sample: list[dict[str, Any]] = []


class Relation(BaseModel):
    """One relation a query reads, as its description says it: a table by its name, or a CTE
    or derived table by its name with what it reads (said once, where it is first read)."""

    join: str = ""
    """How it is joined to what comes before it (``LEFT JOIN``); empty for the first."""
    name: str
    """The table's name (``staff AS m`` when a table is read twice), or the CTE's or subquery's."""
    body: Rows | None = None
    """What a CTE or subquery reads, at its first mention (``None`` for a table or a CTE
    already said)."""
    on: str = ""
    """The join's keys by column name, and an outer join's conditions on one side."""
    keys: str = ""
    """The join's keys alone (``carrier``, ``USING (carrier)``): said even where its other
    conditions are cut, since they set what each row is."""


class Rows(BaseModel):
    """The rows one SELECT (or set operation) makes, each filter where it applies."""

    reads: list[Relation] = []
    filters: list[str] = []
    """Its WHERE and QUALIFY terms, and an inner join's conditions on one side; of a set
    operation: the terms every part has (said once, for each part)."""
    keys: list[str] = []
    """What it groups by."""
    having: list[str] = []
    limit: str = ""
    """``first 10 by n DESC``: a LIMIT keeps only these rows."""
    distinct: str = ""
    """``distinct rows`` (``distinct on (k)``): a SELECT DISTINCT keeps one row of each."""
    columns: list[str] = []
    """Its computed or renamed columns that the query reads, as ``name = SQL`` (for the
    parts of a set operation: each part's own, where the parts differ)."""
    op: str = ""
    """A set operation (``UNION ALL``) of ``parts``."""
    parts: list[Rows] = []


class QueryShape(BaseModel):
    """What a query computes, as its syntax tree says (for the data-intent note)."""

    measures: list[str] = []
    """Aggregates, as ``name = SQL``."""
    dimensions: list[str] = []
    """What the rows are grouped by (or the plain columns when nothing is aggregated)."""
    filters: list[str] = []
    """Every condition that limits the result's rows, one per AND-ed term: the query's WHERE,
    HAVING and QUALIFY, inner join conditions that test one side, an aggregate's
    FILTER (each labelled); those of the CTEs and subqueries feeding it are in ``source``."""
    having: list[str] = []
    """The result's HAVING terms (of its groups, not its rows), aggregates said by the
    measures' names (``cancelled > 500``)."""
    limit: str = ""
    """What the query's LIMIT keeps (``first 10 by n DESC``); empty without one."""
    source: Rows | None = None
    """What the rows are read from (``flights LEFT JOIN planes ON tailnum``; a CTE with its
    own filters): ``None`` when it could not be said (the description then lists the tables)."""
    also: list[Relation] = []
    """CTEs read only inside an expression (``x IN (SELECT ... FROM jfk)``), with what they read."""
    defined: dict[str, str] = {}
    """For each measure said by name only because what it reads defines it in its brackets:
    that definition (said in full where the brackets are elided)."""
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
    reads_clock: bool = False
    """Whether it reads the current date or time (``current_date``, ``now()``...): the same text
    then answers differently on another day, so its step key takes the day it ran."""


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


Relation.model_rebuild()
