"""DuckDB's PIVOT and UNPIVOT statements: read-only queries the optimizer cannot walk.

``PIVOT orders ON region_id USING SUM(revenue) GROUP BY product_id`` (and ``UNPIVOT``,
``PIVOT_WIDER``) parses to a :class:`sqlglot.exp.Pivot` that carries its own source (a
table or a subquery), unlike the SQL-standard ``... FROM t PIVOT (...)`` clause, which
hangs off a table. sqlglot's ``qualify`` cannot traverse such a node, so the columns it
names are checked here against what its source provides, and the canonical form is the
normalised text (identifiers lower-cased and quoted) rather than the qualified tree.
"""

from __future__ import annotations

from sqlglot import exp

from .preparation import Preparation
from .qualify import qualified, unknown_column


def pivot_columns(prep: Preparation) -> Preparation:
    """The pass: for a query holding PIVOT/UNPIVOT statements, their columns checked (see
    :func:`check_pivot_columns`) and ``prep.qualified`` set to its normalised tree; any other
    query is left to ``qualify_columns``.

    >>> import sqlglot
    >>> sql = "PIVOT Orders ON Region USING SUM(revenue)"
    >>> prep = Preparation(sql, schema={"orders": {"region": "INT", "revenue": "INT"}}, dialect="duckdb",
    ...                    tree=sqlglot.parse_one(sql, read="duckdb"), tables=["orders"])
    >>> pivot_columns(prep).qualified.sql("duckdb")
    'PIVOT "orders" ON "region" USING SUM("revenue")'
    >>> prep.tree.sql("duckdb")  # the tree as parsed is left as it was
    'PIVOT Orders ON Region USING SUM(revenue)'
    """
    if statement_pivots(prep.tree):
        check_pivot_columns(prep.tree, prep.schema, prep.tables or [])
        prep.qualified = _quoted(prep.tree)
    return prep


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


def check_pivot_columns(tree: exp.Expression, schema: dict[str, dict[str, str]], tables: list[str]) -> None:
    """Refuse columns a PIVOT/UNPIVOT statement names that its source does not have.

    A subquery source is qualified on its own (its unknown columns refused; ``tables``, those
    the whole query reads, are named in that refusal), and its output columns are what the
    statement may name. A source that is a CTE is left to the engine.

    >>> import sqlglot
    >>> check_pivot_columns(sqlglot.parse_one("PIVOT orders ON regionid", read="duckdb"),
    ...                     {"orders": {"region_id": "INT"}}, ["orders"])
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: Unknown column 'regionid' in 'orders'. Did you mean: region_id? (hint: call describe_table to see the columns)

    Raises:
        SqlRejected: ``unknown_column``, with the nearest real names.
    """
    known_tables = {t.lower(): t for t in schema}
    for pivot in statement_pivots(tree):
        source = pivot.this
        if isinstance(source, exp.Subquery) and isinstance(source.this, exp.Query) and not statement_pivots(source):
            select = qualified(source.this, schema, tables, "duckdb")
            available = list(select.named_selects) if isinstance(select, exp.Query) else []
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


def _quoted(tree: exp.Expression) -> exp.Expression:
    """The tree with unquoted identifiers lower-cased and quoted (what qualify does to them)."""
    out = tree.copy()
    for identifier in out.find_all(exp.Identifier):
        if not identifier.quoted:
            identifier.set("this", identifier.name.lower())
            identifier.set("quoted", True)
    return out
