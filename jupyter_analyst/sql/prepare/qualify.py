"""Names checked against the source: unknown tables and columns refused with the nearest
real names, every column resolved to its table.

Two passes: :func:`qualify_tables` before the query is cleared to run (a query naming a
table the source lacks never starts), :func:`qualify_columns` after it (most of the work,
done while the query may already run).
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from ..._text import nearest
from ...errors import SqlRejected
from .preparation import Preparation

_UNRESOLVED = re.compile(r"(?:Column '([^']+)' could not be resolved|Unknown column: (\S+))")


def qualify_tables(prep: Preparation) -> Preparation:
    """The pass: the source's tables ``prep.tree`` reads, in ``prep.tables`` (see :func:`known_tables`).

    >>> import sqlglot
    >>> sql = "WITH r AS (SELECT * FROM Regions) SELECT * FROM r JOIN orders USING (region_id)"
    >>> prep = Preparation(sql, schema={"regions": {}, "orders": {}}, dialect="duckdb", tree=sqlglot.parse_one(sql))
    >>> qualify_tables(prep).tables
    ['orders', 'regions']
    """
    prep.tables = known_tables(prep.tree, prep.schema)
    return prep


def known_tables(tree: exp.Expression, schema: dict[str, dict[str, str]]) -> list[str]:
    """The tables of ``schema`` that ``tree`` reads, each once, by their names there.

    >>> import sqlglot
    >>> known_tables(sqlglot.parse_one("SELECT * FROM ordrs"), {"orders": {}, "regions": {}})
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: Unknown table 'ordrs'. Did you mean: orders? (hint: call list_tables to see the tables)

    Raises:
        SqlRejected: ``unknown_table``, with the nearest real names.
    """
    ctes: set[str] = set()
    tables: list[exp.Table] = []
    for node in tree.find_all(exp.CTE, exp.Table):  # one walk for both (a walk is ~1% of a check)
        if isinstance(node, exp.CTE):
            ctes.add(node.alias_or_name.lower())
        else:
            tables.append(node)
    known = {t.lower(): t for t in schema}
    used: list[str] = []
    for table in tables:
        if not isinstance(table.this, exp.Identifier):
            continue  # table functions were judged by the guard
        name = table.name
        if name.lower() in ctes:
            continue
        if name.lower() not in known:
            suggestions = nearest(name, schema)
            raise SqlRejected(
                f"Unknown table {name!r}."
                + (f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""),
                reason="unknown_table",
                suggestions=suggestions or sorted(schema)[:10],
                hint="call list_tables to see the tables",
            )
        used.append(known[name.lower()])
    return list(dict.fromkeys(used))


def qualify_columns(prep: Preparation) -> Preparation:
    """The pass: ``prep.tree`` qualified in place into ``prep.qualified``, unless a PIVOT
    statement's pass has done it (see :func:`qualified`).

    >>> import sqlglot
    >>> sql = "SELECT Region FROM regions AS r"
    >>> prep = Preparation(sql, schema={"regions": {"region": "VARCHAR"}}, dialect="duckdb",
    ...                    tree=sqlglot.parse_one(sql), tables=["regions"])
    >>> qualify_columns(prep).qualified.sql()
    'SELECT "r"."region" AS "region" FROM "regions" AS "r"'
    """
    if prep.qualified is None:
        prep.qualified = qualified(prep.tree, prep.schema, prep.tables or [], "duckdb", copy=False, mapping=prep.mapping)
    return prep


def mapping_schema(schema: dict[str, dict[str, str]]) -> MappingSchema:
    """The schema as the qualifier reads it; building it costs as much as a small check, so a
    caller checking many queries against one schema builds it once."""
    return MappingSchema(schema, dialect="duckdb")


def qualified(
    tree: exp.Expression, schema: dict[str, dict[str, str]], tables: list[str], dialect: str, *, copy: bool = True,
    mapping: MappingSchema | None = None,
) -> exp.Expression:
    """``tree`` with every column resolved to its table and identifiers quoted (``copy=False``:
    ``tree`` itself, changed in place); ``tables`` are those it reads, named in a refusal.

    Raises:
        SqlRejected: ``unknown_column`` (see :func:`unknown_column`), or ``sql_parse_error``
            for anything else the qualifier cannot resolve.
    """
    try:
        return qualify(
            tree.copy() if copy else tree, schema=mapping if mapping is not None else schema, dialect=dialect,
            validate_qualify_columns=True,
            quote_identifiers=True, identify=True,
        )
    except OptimizeError as exc:
        match = _UNRESOLVED.search(str(exc))
        if not match:
            raise SqlRejected(f"the SQL could not be checked: {exc}", reason="sql_parse_error") from exc
        column = (match.group(1) or match.group(2)).split(".")[-1].strip('"')
        in_scope = [c for t in tables for c in schema.get(t, {})]
        where = f" in {', '.join(repr(t) for t in tables)}" if tables else ""
        raise unknown_column(column, in_scope, where) from exc


def unknown_column(column: str, in_scope: list[str], where: str = "") -> SqlRejected:
    """The refusal of a column that does not exist, with the nearest real names.

    >>> unknown_column("revnue", ["revenue", "quantity"], " in 'orders'").message
    "Unknown column 'revnue' in 'orders'. Did you mean: revenue?"
    """
    suggestions = nearest(column, in_scope)
    return SqlRejected(
        f"Unknown column {column!r}{where}."
        + (f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""),
        reason="unknown_column",
        suggestions=suggestions or in_scope[:15],
        hint="call describe_table to see the columns",
    )
