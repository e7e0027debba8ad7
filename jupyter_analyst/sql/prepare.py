"""From the model's SQL to a checked, canonical, executable query.

1. parse (sqlglot), 2. the read-only guard, 3. unknown tables and columns refused with
the nearest real names, 4. a canonical text for fingerprints, 5. the source's dialect.

:func:`prepare_sql` is a pure function of the SQL and the source's schema, so that it can
run in a worker process (see ``preparer.py``). Whatever the SQL does to the parser or the
checker ends as :class:`SqlRejected`: nesting past the recursion limit is
``sql_too_complex``, anything sqlglot cannot read is ``sql_parse_error``, anything it reads
but cannot check is ``sql_unsupported``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError, SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from .._text import nearest
from ..errors import SqlRejected
from .._text import lone_surrogate, valid_text
from .guard import check_read_only
from .intent import query_shape
from .model import ClearedQuery, PreparedQuery, QueryShape
from .pivot import check_pivot_columns, statement_pivots

if TYPE_CHECKING:
    from .sources import DataSource

_UNRESOLVED = re.compile(r"(?:Column '([^']+)' could not be resolved|Unknown column: (\S+))")


def parse_one(sql: str, dialect: str) -> exp.Expression:
    """Parse exactly one statement, in the source's dialect or, failing that, DuckDB's."""
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise SqlRejected("the SQL is empty", reason="sql_parse_error", hint="send one SELECT query")
    last: Exception | None = None
    for read in dict.fromkeys([dialect, "duckdb"]):
        try:
            statements = [s for s in sqlglot.parse(text, read=read) if s is not None]
        except SqlglotError as exc:  # a parse or a tokenizer error: try the next dialect
            last = exc
            continue
        if len(statements) != 1:
            raise SqlRejected(
                f"{len(statements)} statements were sent; one query at a time",
                reason="sql_multiple_statements",
                hint="send a single SELECT (use a CTE to combine steps)",
            )
        return statements[0]
    message = valid_text(str(last).splitlines()[0] if str(last).strip() else "unparsable")[:500]
    raise SqlRejected(f"the SQL does not parse: {message}", reason="sql_parse_error")


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


def mapping_schema(schema: dict[str, dict[str, str]]) -> MappingSchema:
    """The schema as the qualifier reads it; building it costs as much as a small check, so a
    caller checking many queries against one schema builds it once."""
    return MappingSchema(schema, dialect="duckdb")


def _qualified(
    tree: exp.Expression, schema: dict[str, dict[str, str]], tables: list[str], dialect: str, *, copy: bool = True,
    mapping: MappingSchema | None = None,
) -> exp.Expression:
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


def canonical_sql(qualified: exp.Expression, *, copy: bool = True) -> str:
    """Canonical text: table and subquery aliases renamed in order of appearance.

    >>> import sqlglot
    >>> a = canonical_sql(sqlglot.parse_one('SELECT "s"."x" FROM "t" AS "s"'))
    >>> a == canonical_sql(sqlglot.parse_one('select "q"."x" from "t" as "q"'))
    True
    """
    tree = qualified.copy() if copy else qualified  # ``copy=False`` renames in place
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
    # The generator changes what it writes out: without a copy only when it is ours to change.
    return tree.sql(dialect="duckdb", normalize=True, pretty=False, copy=copy)


def prepare_sql(
    sql: str, *, schema: dict[str, dict[str, str]], dialect: str,
    mapping: MappingSchema | None = None, on_cleared: Callable[[ClearedQuery], None] | None = None,
) -> PreparedQuery:
    """Check ``sql`` against a source's ``schema`` and give its canonical and executable forms
    (``mapping``: the schema already built by :func:`mapping_schema`, the same result sooner).

    ``on_cleared`` is called once the query has passed the read-only guard and names only
    known tables, before its columns are checked and its canonical text is written (most of
    the work): the query may start running then. It is never called for SQL the guard refuses.

    >>> prepare_sql("select Region from regions", schema={"regions": {"region": "VARCHAR"}}, dialect="duckdb").canonical
    'SELECT "_t0"."region" AS "region" FROM "regions" AS "_t0"'

    Raises:
        SqlRejected: unparsable, not read-only, several statements, naming tables or columns
            the source does not have (with the nearest real names), nested too deeply to
            check, or anything else the checker cannot handle.
    """
    if not isinstance(sql, str):
        raise SqlRejected("the SQL must be a string", reason="sql_parse_error")
    position = lone_surrogate(sql)
    if position is not None:
        raise SqlRejected(
            f"the SQL holds a lone surrogate at position {position}, which is not valid Unicode",
            reason="invalid_unicode", hint="send valid UTF-8 text",
        )
    try:
        return _prepare(sql, schema, dialect, mapping, on_cleared)
    except SqlRejected:
        raise
    except (RecursionError, MemoryError):
        raise SqlRejected(
            "the SQL is nested too deeply to check",
            reason="sql_too_complex",
            hint="flatten it: name intermediate results in CTEs (WITH ...) instead of nesting "
                 "parentheses, subqueries or operators",
        ) from None
    except SqlglotError as exc:
        raise SqlRejected(f"the SQL does not parse: {_first_line(exc)}", reason="sql_parse_error") from None
    except Exception as exc:  # noqa: BLE001 - the checker failing on odd SQL is a refusal, not a crash
        raise SqlRejected(
            f"the SQL could not be checked ({type(exc).__name__}: {_first_line(exc)})",
            reason="sql_unsupported", hint="write it more plainly: one SELECT, with CTEs for the steps",
        ) from None


def prepare_query(sql: str, source: DataSource) -> PreparedQuery:
    """Check ``sql`` against ``source`` (in this process; see :func:`prepare_sql`).

    Raises:
        SqlRejected: as :func:`prepare_sql`.
    """
    return prepare_sql(
        sql, schema=source.schema(), dialect=source.dialect
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return valid_text(text.splitlines()[0] if text else "no detail")[:500]


def _prepare(
    sql: str, schema: dict[str, dict[str, str]], dialect: str,
    mapping: MappingSchema | None, on_cleared: Callable[[ClearedQuery], None] | None,
) -> PreparedQuery:
    tree = parse_one(sql, dialect)
    check_read_only(tree, dialect=dialect)
    tables = _check_tables(tree, schema)
    # What is read off the tree as parsed comes first: qualifying then works on the tree
    # itself rather than on a copy (copying a large tree costs as much as qualifying it).
    try:
        executable = tree.sql(dialect=dialect)
    except sqlglot.errors.UnsupportedError as exc:  # pragma: no cover - dialect gaps
        raise SqlRejected(f"cannot express this query in {dialect}: {exc}", reason="sql_parse_error") from exc
    has_order = tree.args.get("order") is not None
    if on_cleared is not None:
        on_cleared(ClearedQuery(executable=executable, has_order=has_order))
    shape = _shape(tree, dialect)
    if statement_pivots(tree):
        # DuckDB's PIVOT/UNPIVOT statements: the optimizer cannot walk their scopes, so
        # their columns are checked on their own and the canonical form is the normalised
        # text (identifiers lower-cased and quoted) rather than the qualified tree.
        check_pivot_columns(tree, schema, lambda select: _qualified(select, schema, tables, "duckdb"))
        qualified = _quoted(tree)
    else:
        qualified = _qualified(tree, schema, tables, "duckdb", copy=False, mapping=mapping)
    return PreparedQuery(
        original=sql,
        canonical=canonical_sql(qualified, copy=False),
        executable=executable,
        tables=tables,
        has_order=has_order,
        shape=shape,
    )


def _shape(tree: exp.Expression, dialect: str) -> QueryShape:
    """The query's shape for its data-intent note; a query it cannot read gets an empty one."""
    try:
        return query_shape(tree, dialect)
    except (SqlglotError, RecursionError, MemoryError, ValueError):  # only a note: never a refusal
        return QueryShape()


def _quoted(tree: exp.Expression) -> exp.Expression:
    """The tree with unquoted identifiers lower-cased and quoted (what qualify does to them)."""
    out = tree.copy()
    for identifier in out.find_all(exp.Identifier):
        if not identifier.quoted:
            identifier.set("this", identifier.name.lower())
            identifier.set("quoted", True)
    return out
