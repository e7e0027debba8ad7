"""The first pass: the model's text as the syntax tree of exactly one statement."""

from __future__ import annotations

import re

# Imported with the pass (a checker process imports it before it says it is ready): the
# time limit on checking counts the work, not the import.
import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError

from ..._text import valid_text
from ...errors import SqlRejected
from .guard import FORBIDDEN_NODES
from .pivot import is_statement_pivot
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

    Text that is not SQL is a syntax error with where it is, never a refusal of what the
    parser made of it (``selec * fro orders`` reads, to sqlglot, as the alias of an
    expression: DuckDB's parser says where it goes wrong).

    >>> parse_one("SELECT 1; SELECT 2", "duckdb")
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: 2 statements were sent; one query at a time (hint: send a single SELECT (use a CTE to combine steps))
    >>> parse_one("selec * fro orders", "duckdb")
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: syntax error near 'selec' at line 1, column 1 (hint: fix the SQL where it says, and send one SELECT query)
    >>> parse_one("selec * fro orders limit 5", "duckdb")
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: syntax error near 'selec' at line 1, column 1 (hint: fix the SQL where it says, and send one SELECT query)
    """
    text = sql.strip().rstrip(";").strip()
    if not text:
        raise SqlRejected("the SQL is empty", reason="sql_parse_error", hint="send one SELECT query")
    last: SqlglotError | None = None
    for read in dict.fromkeys([dialect, "duckdb"]):
        try:
            statements = [s for s in sqlglot.parse(text, read=read) if s is not None]
        except SqlglotError as exc:  # a parse or a tokenizer error: try the next dialect
            last = last if isinstance(last, ParseError) and not isinstance(exc, ParseError) else exc
            continue
        if len(statements) != 1:
            raise SqlRejected(
                f"{len(statements)} statements were sent; one query at a time",
                reason="sql_multiple_statements",
                hint="send a single SELECT (use a CTE to combine steps)",
            )
        statement = statements[0]
        query = isinstance(statement, exp.Query) or is_statement_pivot(statement)
        if not query or (read == dialect == "duckdb" and statement.find(*FORBIDDEN_NODES) is None):
            # sqlglot reads some broken text as something else (``selec * fro orders`` as an
            # expression's alias, ``FROM orders GROUP`` as a table aliased GROUP): DuckDB's
            # parser, the engine's own, has the last word on DuckDB's SQL, and tells a
            # statement the guard refuses from words that are no statement at all. A query
            # that writes (``SELECT ... INTO``) is the guard's to refuse, as what it is.
            where = _duckdb_syntax_error(text)
            if where is not None:
                raise _syntax_error(where)
        return statement
    # On DuckDB's SQL its own parser says where the text first goes wrong (sqlglot may get
    # further, reading typos as aliases, and stop at a later word: ``selec * fro orders
    # limit 5`` at ``limit``); on another dialect's, sqlglot says.
    engine = _duckdb_syntax_error(text) if dialect == "duckdb" else None
    raise _syntax_error(engine or _sqlglot_position(last) or _duckdb_syntax_error(text) or _plain(last))


_HINT = "fix the SQL where it says, and send one SELECT query"


def _syntax_error(where: str) -> SqlRejected:
    return SqlRejected(valid_text(where)[:500], reason="sql_parse_error", hint=_HINT)


def _plain(error: SqlglotError | None) -> str:
    message = str(error).splitlines()[0] if error is not None and str(error).strip() else "unparsable"
    return f"syntax error: {message}"


def _sqlglot_position(error: SqlglotError | None) -> str | None:
    """Where sqlglot's parser stopped, as "syntax error near ... at line L, column C"."""
    if not isinstance(error, ParseError) or not error.errors:
        return None
    first = error.errors[0]
    line, col, near = first.get("line"), first.get("col"), str(first.get("highlight") or "")
    if not isinstance(line, int) or not isinstance(col, int):
        return None
    column = max(1, col - len(near) + 1)  # sqlglot gives the column the token ends at
    what = str(first.get("description") or "").split(" but got <")[0].strip()
    return f"syntax error near {near[:40]!r} at line {line}, column {column}" + (f": {what}" if what else "")


_DUCKDB_AT = re.compile(r'syntax error at or near "(?P<near>[^"]*)"')
_DUCKDB_LINE = re.compile(r"^(?P<prefix>LINE (?P<line>\d+): )(?P<text>.*)$")


def _duckdb_syntax_error(text: str) -> str | None:
    """Where DuckDB's parser (PostgreSQL's grammar) finds a syntax error in ``text``, or
    ``None`` when it reads it. Only parsed, never run."""
    try:
        duckdb.extract_statements(text)
    except duckdb.ParserException as exc:
        message = str(exc)
    except duckdb.Error:
        return None
    else:
        return None
    near = _DUCKDB_AT.search(message)
    if near is None:  # read, but not supported ("SELECT INTO"): the guard says what is refused
        return None
    lines = message.splitlines()
    for i, row in enumerate(lines):
        shown = _DUCKDB_LINE.match(row)
        if shown and i + 1 < len(lines) and "^" in lines[i + 1]:
            column = lines[i + 1].index("^") - len(shown["prefix"]) + 1
            return f"syntax error near {near['near'][:40]!r} at line {shown['line']}, column {max(1, column)}"
    return f"syntax error near {near['near'][:40]!r}"
