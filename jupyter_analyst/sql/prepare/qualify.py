"""Names checked against the source: unknown tables and columns refused with the nearest
real names, every column resolved to its table.

Two passes: :func:`qualify_tables` before the query is cleared to run (a query naming a
table the source lacks never starts), :func:`qualify_columns` after it (most of the work,
done while the query may already run).
"""

from __future__ import annotations

import difflib
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
    target = tree.copy() if copy else tree
    try:
        return qualify(
            target, schema=mapping if mapping is not None else schema, dialect=dialect,
            validate_qualify_columns=True,
            quote_identifiers=True, identify=True,
        )
    except OptimizeError as exc:
        match = _UNRESOLVED.search(str(exc))
        if not match:
            raise SqlRejected(f"the SQL could not be checked: {exc}", reason="sql_parse_error") from exc
        column = (match.group(1) or match.group(2)).split(".")[-1].strip('"')
        # A qualified column (``p.name``) is looked for in its own table only.
        owner = _owner_of(target, column, schema)
        scope = [owner] if owner else tables
        in_scope = [c for t in scope for c in schema.get(t, {})]
        where = f" in {', '.join(repr(t) for t in scope)}" if scope else ""
        raise unknown_column(column, in_scope, where) from exc


def _owner_of(tree: exp.Expression, column: str, schema: dict[str, dict[str, str]]) -> str | None:
    """The schema table a qualified reference to ``column`` names through its alias, if any.

    >>> import sqlglot
    >>> tree = sqlglot.parse_one("SELECT p.name FROM orders o JOIN products p USING (product_id)")
    >>> _owner_of(tree, "name", {"orders": {}, "products": {}}), _owner_of(tree, "x", {"orders": {}})
    ('products', None)
    """
    known = {t.lower(): t for t in schema}
    for col in tree.find_all(exp.Column):
        if col.name.lower() != column.lower() or not col.table:
            continue
        for table in tree.find_all(exp.Table):
            if table.alias_or_name.lower() == col.table.lower() and table.name.lower() in known:
                return known[table.name.lower()]
    return None


def unknown_column(column: str, in_scope: list[str], where: str = "") -> SqlRejected:
    """The refusal of a column that does not exist, with the nearest real names; with none
    near, the columns in scope, each once, the closest first. Those are then all there is to
    see: no hint to go and look at them.

    >>> unknown_column("revnue", ["revenue", "quantity"], " in 'orders'").message
    "Unknown column 'revnue' in 'orders'. Did you mean: revenue?"
    >>> refusal = unknown_column("name", ["product_id", "product", "category", "product_id"], " in 'products'")
    >>> refusal.message, refusal.hint
    ("Unknown column 'name' in 'products'. Its columns, closest first: category, product_id, product.", None)
    """
    columns = list(dict.fromkeys(in_scope))
    suggestions = nearest(column, columns)
    if suggestions:
        return SqlRejected(
            f"Unknown column {column!r}{where}. Did you mean: {', '.join(suggestions)}?",
            reason="unknown_column", suggestions=suggestions, hint="call describe_table to see the columns",
        )
    ranked = sorted(columns, key=lambda c: -difflib.SequenceMatcher(None, column.lower(), c.lower()).ratio())
    if len(ranked) > _LISTED:
        return SqlRejected(
            f"Unknown column {column!r}{where}. The closest of its columns: {', '.join(ranked[:_LISTED])}.",
            reason="unknown_column", suggestions=ranked[:_LISTED], hint="call describe_table to see the columns",
        )
    return SqlRejected(
        f"Unknown column {column!r}{where}." + (f" Its columns, closest first: {', '.join(ranked)}." if ranked else ""),
        reason="unknown_column", suggestions=ranked,
    )


#: Columns listed in full by a refusal; past that, the closest and a pointer to describe_table.
_LISTED = 15
