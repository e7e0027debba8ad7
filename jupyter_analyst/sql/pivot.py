"""DuckDB's PIVOT and UNPIVOT statements: read-only queries the optimizer cannot walk.

``PIVOT orders ON region_id USING SUM(revenue) GROUP BY product_id`` (and ``UNPIVOT``,
``PIVOT_WIDER``) parses to a :class:`sqlglot.exp.Pivot` that carries its own source (a
table or a subquery), unlike the SQL-standard ``... FROM t PIVOT (...)`` clause, which
hangs off a table. sqlglot's ``qualify`` cannot traverse such a node, so the columns it
names are checked here against what its source provides.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp


def statement_pivots(tree: exp.Expression) -> list[exp.Pivot]:
    """The PIVOT/UNPIVOT statements in ``tree`` (at its root or nested), outermost first.

    >>> import sqlglot
    >>> len(statement_pivots(sqlglot.parse_one("PIVOT t ON a USING SUM(b)", read="duckdb")))
    1
    >>> statement_pivots(sqlglot.parse_one("SELECT * FROM t PIVOT (SUM(b) FOR a IN (1, 2))", read="duckdb"))
    []
    """
    return [node for node in tree.find_all(exp.Pivot) if is_statement_pivot(node)]


def is_statement_pivot(node: exp.Expression) -> bool:
    """Whether ``node`` is a PIVOT/UNPIVOT statement (it names its own source)."""
    return isinstance(node, exp.Pivot) and isinstance(node.this, exp.Table | exp.Subquery)


def check_pivot_columns(
    tree: exp.Expression,
    schema: dict[str, dict[str, str]],
    qualify_select: Callable[[exp.Expression], exp.Expression],
) -> None:
    """Refuse columns a PIVOT/UNPIVOT statement names that its source does not have.

    ``qualify_select`` qualifies a plain query (and refuses its unknown columns): a subquery
    source is checked with it, and its output columns are what the statement may name. A
    source that is a CTE is left to the engine.

    Raises:
        SqlRejected: ``unknown_column``, with the nearest real names.
    """
    from .prepare import unknown_column  # prepare imports this module: a late import

    known_tables = {t.lower(): t for t in schema}
    for pivot in statement_pivots(tree):
        source = pivot.this
        if isinstance(source, exp.Subquery) and isinstance(source.this, exp.Query) and not statement_pivots(source):
            qualified = qualify_select(source.this)
            available = list(qualified.named_selects) if isinstance(qualified, exp.Query) else []
            where = "the subquery"
        elif isinstance(source, exp.Table) and source.name.lower() in known_tables:
            table = known_tables[source.name.lower()]
            available = list(schema[table])
            where = repr(table)
        else:
            continue  # a CTE or a nested PIVOT: the engine knows its columns
        lowered = {c.lower() for c in available}
        for part in ("expressions", "using", "group"):
            value = pivot.args.get(part)
            nodes = value if isinstance(value, list) else [value] if isinstance(value, exp.Expression) else []
            for node in nodes:
                for column in node.find_all(exp.Column):
                    if column.name and column.name.lower() not in lowered:
                        raise unknown_column(column.name, available, f" in {where}")
