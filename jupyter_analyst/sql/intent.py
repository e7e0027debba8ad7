"""The data-intent note: what a query fetched, in a few structured lines.

After every successful query the agent keeps a short note (source tables, measures,
dimensions, filters, row count, time range) that later Python steps and "continue" turns
see, so the model knows what a dataset *means* without re-reading its SQL or its rows.
Everything comes from the parsed query and the result file; nothing is guessed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

from .model import QueryShape

if TYPE_CHECKING:
    from sqlglot import exp


class DataIntent(BaseModel):
    """What one dataset holds, as far as its query and its rows say."""

    tables: list[str]
    measures: list[str] = []
    """Aggregates, as ``name = SQL``."""
    dimensions: list[str] = []
    """What the rows are grouped by (or the plain columns when nothing is aggregated)."""
    filters: list[str] = []
    """WHERE and HAVING conditions, one per AND-ed term."""
    rows: int
    time_range: dict[str, list[str]] = {}
    """For each date or time column of the result: its first and last value."""

    def line(self) -> str:
        """The note in one line, for prompts.

        >>> DataIntent(tables=["orders"], measures=["revenue = SUM(amount)"], dimensions=["region"], rows=4).line()
        'from orders; measures: revenue = SUM(amount); by: region; 4 rows'
        """
        parts = [f"from {', '.join(self.tables) or '(no table)'}"]
        if self.measures:
            parts.append("measures: " + ", ".join(self.measures))
        if self.dimensions:
            parts.append("by: " + ", ".join(self.dimensions))
        if self.filters:
            parts.append("where: " + " AND ".join(self.filters))
        parts.append(f"{self.rows} rows")
        for column, (first, last) in self.time_range.items():
            parts.append(f"{column} {first} .. {last}")
        return "; ".join(parts)


def _conditions(node: exp.Expression | None, dialect: str) -> list[str]:
    from sqlglot import exp

    if node is None:
        return []
    condition = node.this if isinstance(node, exp.Where | exp.Having) else node
    if isinstance(condition, exp.And):
        return [*_conditions(condition.left, dialect), *_conditions(condition.right, dialect)]
    return [condition.sql(dialect=dialect)]


def query_shape(tree: exp.Expression, dialect: str) -> QueryShape:
    """The measures, dimensions and filters of a parsed query (read where it is prepared,
    so that the host never parses it again).

    >>> import sqlglot
    >>> query_shape(sqlglot.parse_one("SELECT region, SUM(amount) AS total FROM orders "
    ...                               "WHERE year = 2024 GROUP BY region"), "duckdb").filters
    ['year = 2024']
    """
    from sqlglot import exp

    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    measures: list[str] = []
    plain: list[str] = []
    filters: list[str] = []
    dimensions: list[str] = []
    if isinstance(tree, exp.Pivot) and not tree.args.get("unpivot"):
        # PIVOT t ON col USING agg GROUP BY dim: the aggregates are the measures.
        using = tree.args.get("using") or []
        measures = [f"{u.alias_or_name} = {u.sql(dialect=dialect)}" if u.alias else u.sql(dialect=dialect) for u in using]
        group = tree.args.get("group")
        dimensions = [g.sql(dialect=dialect) for g in group.expressions] if group is not None else []
        dimensions += [f"each {e.sql(dialect=dialect)}" for e in tree.expressions]
    elif select is not None:
        for projection in select.expressions:
            inner = projection.this if isinstance(projection, exp.Alias) else projection
            if inner.find(exp.AggFunc) is not None:
                measures.append(f"{projection.alias_or_name} = {inner.sql(dialect=dialect)}")
            else:
                plain.append(projection.alias_or_name or projection.sql(dialect=dialect))
        group = select.args.get("group")
        dimensions = [g.sql(dialect=dialect) for g in group.expressions] if group is not None else []
        if not dimensions and not measures:
            dimensions = plain
        filters = _conditions(select.args.get("where"), dialect) + _conditions(select.args.get("having"), dialect)
    return QueryShape(measures=measures, dimensions=dimensions, filters=filters)


def data_intent(
    shape: QueryShape, *, tables: list[str], rows: int, time_range: dict[str, list[str]] | None = None
) -> DataIntent:
    """The note for a query of this shape that returned ``rows`` rows.

    >>> shape = QueryShape(measures=["total = SUM(amount)"], dimensions=["region"], filters=["year = 2024"])
    >>> data_intent(shape, tables=["orders"], rows=3).line()
    'from orders; measures: total = SUM(amount); by: region; where: year = 2024; 3 rows'
    """
    return DataIntent(
        tables=tables, measures=shape.measures, dimensions=shape.dimensions, filters=shape.filters,
        rows=rows, time_range=time_range or {},
    )
