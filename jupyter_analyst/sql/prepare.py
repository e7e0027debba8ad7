"""From the model's SQL to a checked, canonical, executable query.

1. parse (sqlglot), 2. the read-only guard, 3. unknown tables and columns refused with
the nearest real names, 4. a canonical text for fingerprints, 5. the source's dialect.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, ParseError
from sqlglot.optimizer.qualify import qualify

from ..errors import SqlRejected
from .guard import check_read_only
from .model import PreparedQuery

if TYPE_CHECKING:
    from .sources import DataSource

_UNRESOLVED = re.compile(r"(?:Column '([^']+)' could not be resolved|Unknown column: (\S+))")


def nearest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The real names closest to ``name``.

    >>> nearest("revnue", ["revenue", "region", "month"])
    ['revenue', 'region']
    """
    pool = list(dict.fromkeys(candidates))
    lowered = {c.lower(): c for c in pool}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.5)
    return [lowered[h] for h in hits]


def parse_one(sql: str, dialect: str) -> exp.Expression:
    """Parse exactly one statement, in the source's dialect or, failing that, DuckDB's."""
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise SqlRejected("the SQL is empty", reason="sql_parse_error", hint="send one SELECT query")
    last: Exception | None = None
    for read in dict.fromkeys([dialect, "duckdb"]):
        try:
            statements = [s for s in sqlglot.parse(text, read=read) if s is not None]
        except ParseError as exc:
            last = exc
            continue
        if len(statements) != 1:
            raise SqlRejected(
                f"{len(statements)} statements were sent; one query at a time",
                reason="sql_multiple_statements",
                hint="send a single SELECT (use a CTE to combine steps)",
            )
        return statements[0]
    message = str(last).splitlines()[0] if last else "unparsable"
    raise SqlRejected(f"the SQL does not parse: {message}", reason="sql_parse_error", sql=sql)


def _check_tables(tree: exp.Expression, schema: dict[str, dict[str, str]]) -> list[str]:
    ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    known = {t.lower(): t for t in schema}
    used: list[str] = []
    for table in tree.find_all(exp.Table):
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


def _qualified(tree: exp.Expression, schema: dict[str, dict[str, str]], tables: list[str], dialect: str) -> exp.Expression:
    try:
        return qualify(
            tree.copy(), schema=schema, dialect=dialect, validate_qualify_columns=True,
            quote_identifiers=True, identify=True,
        )
    except OptimizeError as exc:
        match = _UNRESOLVED.search(str(exc))
        if not match:
            raise SqlRejected(f"the SQL could not be checked: {exc}", reason="sql_parse_error") from exc
        column = (match.group(1) or match.group(2)).split(".")[-1].strip('"')
        in_scope = [c for t in tables for c in schema.get(t, {})]
        suggestions = nearest(column, in_scope)
        where = f" in {', '.join(repr(t) for t in tables)}" if tables else ""
        raise SqlRejected(
            f"Unknown column {column!r}{where}."
            + (f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""),
            reason="unknown_column",
            suggestions=suggestions or in_scope[:15],
            hint="call describe_table to see the columns",
        ) from exc


def canonical_sql(qualified: exp.Expression) -> str:
    """Canonical text: table and subquery aliases renamed in order of appearance.

    >>> import sqlglot
    >>> a = canonical_sql(sqlglot.parse_one('SELECT "s"."x" FROM "t" AS "s"'))
    >>> a == canonical_sql(sqlglot.parse_one('select "q"."x" from "t" as "q"'))
    True
    """
    tree = qualified.copy()
    renames: dict[str, str] = {}
    for node in tree.find_all(exp.Table, exp.Subquery):
        alias = node.alias
        if alias and alias not in renames:
            renames[alias] = f"_t{len(renames)}"
    for node in tree.find_all(exp.TableAlias):
        if node.name in renames:
            node.set("this", exp.to_identifier(renames[node.name], quoted=True))
    for column in tree.find_all(exp.Column):
        if column.table in renames:
            column.set("table", exp.to_identifier(renames[column.table], quoted=True))
    return tree.sql(dialect="duckdb", normalize=True, pretty=False)


def prepare_query(sql: str, source: DataSource) -> PreparedQuery:
    """Check ``sql`` against ``source`` and give its canonical and executable forms.

    Raises:
        SqlRejected: unparsable, not read-only, several statements, or naming tables or
            columns the source does not have (with the nearest real names).
    """
    if not isinstance(sql, str):
        raise SqlRejected("the SQL must be a string", reason="sql_parse_error")
    tree = parse_one(sql, source.dialect)
    check_read_only(tree, allow_file_functions=source.allow_file_functions)
    schema = source.schema()
    tables = _check_tables(tree, schema)
    qualified = _qualified(tree, schema, tables, "duckdb")
    try:
        executable = tree.sql(dialect=source.dialect)
    except sqlglot.errors.UnsupportedError as exc:  # pragma: no cover - dialect gaps
        raise SqlRejected(f"cannot express this query in {source.dialect}: {exc}", reason="sql_parse_error") from exc
    return PreparedQuery(
        original=sql,
        canonical=canonical_sql(qualified),
        executable=executable,
        tables=tables,
        has_order=tree.args.get("order") is not None,
    )
