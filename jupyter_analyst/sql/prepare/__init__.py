"""From the model's SQL to a checked, canonical, executable query: a pipeline of passes.

Like the rules of sqlglot's optimizer, each pass takes the query as read so far (a
:class:`Preparation`) and returns it with what it found set, touching nothing else (no I/O,
no state kept between queries); they run in the order of :data:`PASSES`:

1. ``parse``: exactly one statement, in the source's dialect or DuckDB's (``parse.py``);
2. ``guard``: one read-only query, naming no file, calling only the functions on the
   dialect's allow-list (``guard.py``, ``functions.py``);
3. ``bound_sizes``: a value a call builds (``repeat``, ``lpad``, ``range``, ...) over the
   cap refused when its size is a constant, else checked as the query runs (``sizes.py``);
4. ``qualify_tables``: unknown tables refused with the nearest real names (``qualify.py``);
5. ``clear``: the text in the source's dialect; the query may start running now
   (``cleared.py``);
6. ``shape``: its measures, dimensions and filters, for the data-intent note (``cleared.py``);
7. ``pivot_columns``: the columns of DuckDB's PIVOT/UNPIVOT statements, which the
   qualifier cannot walk, checked against what their sources provide (``pivot.py``);
8. ``qualify_columns``: every other query's columns resolved, unknown ones refused with the
   nearest real names (``qualify.py``);
9. ``canonicalize``: the canonical text for fingerprints (``canonical.py``).

:func:`prepare_sql` is a pure function of the SQL and the source's schema, so that it can
run in a worker process (see ``../preparer.py``). Whatever the SQL does to the parser or the
checker ends as :class:`SqlRejected`: nesting past the recursion limit is
``sql_too_complex``, anything sqlglot cannot read is ``sql_parse_error``, anything it reads
but cannot check is ``sql_unsupported``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from sqlglot.errors import SqlglotError
from sqlglot.schema import MappingSchema

from ..._text import lone_surrogate, valid_text
from ...errors import SqlRejected
from ..query_model import ClearedQuery, PreparedQuery
from . import canonical, cleared, guard, parse, pivot, qualify, sizes
from .functions import allowed as allowed_functions
from .preparation import Preparation
from .qualify import mapping_schema


class _SchemaSource(Protocol):
    """What a query is checked against (a ``DataSource``: the sources module builds its
    engine's walls from this package's function lists, so it is never imported back)."""

    dialect: str

    def schema(self) -> dict[str, dict[str, str]]: ...


__all__ = ["PASSES", "Preparation", "allowed_functions", "mapping_schema", "prepare_query", "prepare_sql", "run_passes"]

#: The passes, in the order they run. Those up to ``clear`` refuse what must never start.
PASSES: tuple[Callable[[Preparation], Preparation], ...] = (
    parse.parse, guard.guard, sizes.bound_sizes, qualify.qualify_tables, cleared.clear, cleared.shape, pivot.pivot_columns,
    qualify.qualify_columns, canonical.canonicalize,
)


def run_passes(prep: Preparation, passes: tuple[Callable[[Preparation], Preparation], ...] = PASSES) -> Preparation:
    """``prep`` through each of ``passes`` in turn (no mapping of errors: see :func:`prepare_sql`).

    >>> run_passes(Preparation("SELECT 1 AS one", schema={}, dialect="duckdb")).canonical
    'SELECT 1 AS "one"'
    """
    for step in passes:
        prep = step(prep)
    return prep


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
        return run_passes(Preparation(sql, schema, dialect, mapping, on_cleared)).prepared()
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


def prepare_query(sql: str, source: _SchemaSource) -> PreparedQuery:
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
