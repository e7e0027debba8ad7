"""The first pass: the model's text as the syntax tree of exactly one statement."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

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
                raise _syntax_error(where.said(sql, text))
        return statement
    # On DuckDB's SQL its own parser says where the text first goes wrong (sqlglot may get
    # further, reading typos as aliases, and stop at a later word: ``selec * fro orders
    # limit 5`` at ``limit``); on another dialect's, sqlglot says.
    engine = _duckdb_syntax_error(text) if dialect == "duckdb" else None
    where = engine or _sqlglot_position(last, text) or _duckdb_syntax_error(text)
    raise _syntax_error(where.said(sql, text) if where is not None else _plain(last))


_HINT = "fix the SQL where it says, and send one SELECT query"


def _syntax_error(where: str) -> SqlRejected:
    return SqlRejected(valid_text(where)[:500], reason="sql_parse_error", hint=_HINT)


def _plain(error: SqlglotError | None) -> str:
    message = str(error).splitlines()[0] if error is not None and str(error).strip() else "unparsable"
    return f"syntax error: {message}"


@dataclass(frozen=True)
class _Where:
    """Where a parser stopped in the text it read: the text it was near, and that text's
    offset in it when it is known for sure (else at most its line)."""

    near: str
    offset: int | None = None
    line: int | None = None
    what: str = ""

    def said(self, sql: str, text: str) -> str:
        """As the model is told it, in the lines and columns of ``sql``, the text it sent
        (``text`` is ``sql`` without its surrounding blanks and semicolons).

        A column is said only where ``near`` is, in characters from the line's start.

        >>> _Where("ORDER", offset=9).said("\\n  SELECT a ORDER", "SELECT a ORDER")
        "syntax error near 'ORDER' at line 2, column 12"
        >>> _Where("ORDER", line=1).said("SELECT a ORDER", "SELECT a ORDER")
        "syntax error near 'ORDER' at line 1"
        """
        start = len(sql) - len(sql.lstrip())  # ``text`` begins there in ``sql``
        said = f"syntax error near {self.near[:40]!r}"
        if self.offset is not None:
            at = start + self.offset
            line_start = sql.rfind("\n", 0, at) + 1
            said += f" at line {sql.count(chr(10), 0, at) + 1}, column {at - line_start + 1}"
        elif self.line is not None:
            said += f" at line {self.line + sql.count(chr(10), 0, start)}"
        return said + (f": {self.what}" if self.what else "")


def _sqlglot_position(error: SqlglotError | None, text: str) -> _Where | None:
    """Where sqlglot's parser stopped in ``text``."""
    if not isinstance(error, ParseError) or not error.errors:
        return None
    first = error.errors[0]
    line, col, near = first.get("line"), first.get("col"), str(first.get("highlight") or "")
    what = str(first.get("description") or "").split(" but got <")[0].strip()
    if not isinstance(line, int) or not isinstance(col, int):
        return None
    # sqlglot gives the line and the column the token ends at, in characters.
    lines = text.split("\n")
    offset = sum(len(row) + 1 for row in lines[:line - 1]) + col - len(near) if 0 < line <= len(lines) else None
    if offset is None or not near or text[offset:offset + len(near)] != near:
        offset = None
    return _Where(near, offset=offset, line=None if offset is not None or "\r" in text else line, what=what)


_DUCKDB_AT = re.compile(r'syntax error at or near "(?P<near>.*)"$')
_DUCKDB_LINE = re.compile(r"^(?P<prefix>LINE (?P<line>\d+): )(?P<text>.*)$")
_ELIDED = "..."


def _duckdb_syntax_error(text: str) -> _Where | None:
    """Where DuckDB's parser (PostgreSQL's grammar) finds a syntax error in ``text``, or
    ``None`` when it reads it. Only parsed, never run.

    DuckDB shows the line around the error, its start or end cut to ``...`` on a long line,
    with a caret under it counted in screen widths: the excerpt is found again in ``text``
    and the caret's width walked in it (:func:`_placed`).

    >>> _duckdb_syntax_error("SELECT " + ", ".join(f"col{i}" for i in range(40)) + " FROM t WHERE ORDER x")
    _Where(near='ORDER', offset=289, line=1, what='')
    """
    try:
        duckdb.extract_statements(text)
    except duckdb.ParserException as exc:
        message = str(exc)
    except duckdb.Error:
        return None
    else:
        return None
    rows = message.split("\n")
    near = _DUCKDB_AT.search(rows[0])
    if near is None:  # read, but not supported ("SELECT INTO"): the guard says what is refused
        return None
    for i, row in enumerate(rows):
        shown = _DUCKDB_LINE.match(row)
        if shown and i + 1 < len(rows) and "^" in rows[i + 1]:
            caret = rows[i + 1].index("^") - len(shown["prefix"])
            line = int(shown["line"]) if "\r" not in text else None  # DuckDB ends a line at \r too
            return _Where(near["near"], offset=_placed(text, shown["text"], caret, near["near"]), line=line)
    return _Where(near["near"])


def _placed(text: str, excerpt: str, caret: int, near: str) -> int | None:
    """The offset in ``text`` of the caret ``caret`` screen columns into ``excerpt``, when
    exactly one place fits: the excerpt (less DuckDB's ``...``) found there, and ``near`` at
    the caret.

    >>> _placed("SELECT a, b FROM t WHERE ORDER x", "...b FROM t WHERE ORDER x", 18, "ORDER")
    25
    >>> _placed("SELECT a ORDER b ORDER", "...ORDER", 3, "ORDER") is None  # two places fit
    True
    """
    bodies = {(excerpt, 0)}
    if excerpt.startswith(_ELIDED):
        bodies |= {(excerpt[len(_ELIDED):], len(_ELIDED))}
    bodies |= {(body[:-len(_ELIDED)], cut) for body, cut in bodies if body.endswith(_ELIDED)}
    places = set()
    for body, cut in bodies:
        index = _column_at(body, caret - cut)
        if index is None:
            continue
        found = text.find(body)
        while found >= 0:
            if text.startswith(near, found + index):
                places.add(found + index)
            found = text.find(body, found + 1)
    return places.pop() if len(places) == 1 else None


def _column_at(body: str, width: int) -> int | None:
    """The index of the character ``width`` screen columns into ``body``, as DuckDB counts
    them (utf8proc's widths: wide characters two, combining marks and controls none).

    >>> _column_at("日本 x", 5), _column_at("ab", 3)
    (3, None)
    """
    if width < 0:
        return None
    seen = 0
    for index, char in enumerate(body):
        if seen == width and _width(char):
            return index
        seen += _width(char)
        if seen > width:
            return None
    return len(body) if seen == width else None


def _width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cc", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
