"""The first pass: the model's text as the syntax tree of exactly one statement."""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from ..._text import valid_text
from ...errors import SqlRejected
from .preparation import Preparation


def parse(prep: Preparation) -> Preparation:
    """Parse ``prep.sql`` into ``prep.tree`` (see :func:`parse_one`).

    >>> parse(Preparation("select region from regions;", schema={}, dialect="duckdb")).tree.sql()
    'SELECT region FROM regions'

    Raises:
        SqlRejected: ``sql_parse_error`` (nothing to parse, or unreadable in either
            dialect) or ``sql_multiple_statements``.
    """
    prep.tree = parse_one(prep.sql, prep.dialect)
    return prep


def parse_one(sql: str, dialect: str) -> exp.Expression:
    """Parse exactly one statement, in the source's dialect or, failing that, DuckDB's.

    >>> parse_one("SELECT 1; SELECT 2", "duckdb")
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: 2 statements were sent; one query at a time (hint: send a single SELECT (use a CTE to combine steps))
    """
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
