"""What is read off the tree as parsed, once it has passed the guard and names only known
tables: the text the source runs, and the query's shape for its data-intent note.

These passes come before the columns are qualified, which then works on the tree itself
rather than on a copy (copying a large tree costs as much as qualifying it). Once
:func:`clear` has run, the query may start running while the rest is checked.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError, UnsupportedError

from ...errors import SqlRejected
from ..shape import query_shape
from ..query_model import ClearedQuery, QueryShape
from .preparation import Preparation
from .sizes import checked


def clear(prep: Preparation) -> Preparation:
    """The pass: ``prep.executable`` (the tree written in the source's dialect, with the
    runtime checks of the sizes of values it builds: see ``sizes.py``) and
    ``prep.has_order``; then ``prep.on_cleared``, if given, is told the query may start.

    >>> import sqlglot
    >>> told = []
    >>> prep = Preparation("select x from t order by 1", schema={}, dialect="sqlite", on_cleared=told.append,
    ...                    tree=sqlglot.parse_one("select x from t order by 1"))
    >>> clear(prep).executable, told
    ('SELECT x FROM t ORDER BY 1', [ClearedQuery(executable='SELECT x FROM t ORDER BY 1', has_order=True)])

    Raises:
        SqlRejected: ``sql_parse_error``: the query cannot be written in the source's dialect.
    """
    tree = prep.tree
    try:
        with checked(prep):
            prep.executable = tree.sql(dialect=prep.dialect)
    except UnsupportedError as exc:  # pragma: no cover - dialect gaps
        raise SqlRejected(f"cannot express this query in {prep.dialect}: {exc}", reason="sql_parse_error") from exc
    prep.has_order = tree.args.get("order") is not None
    if prep.on_cleared is not None:
        prep.on_cleared(ClearedQuery(executable=prep.executable, has_order=prep.has_order))
    return prep


def shape(prep: Preparation) -> Preparation:
    """The pass: ``prep.shape``, the query's measures, dimensions and filters; a query it
    cannot read gets an empty one (only a note: never a refusal).

    >>> import sqlglot
    >>> sql = "SELECT region, SUM(revenue) AS total FROM orders WHERE quantity > 1 GROUP BY region"
    >>> shape(Preparation(sql, schema={}, dialect="duckdb", tree=sqlglot.parse_one(sql))).shape.measures
    ['total = SUM(revenue)']
    """
    prep.shape = _shape(prep.tree, prep.dialect)
    return prep


def _shape(tree: exp.Expression, dialect: str) -> QueryShape:
    try:
        return query_shape(tree, dialect)
    except (SqlglotError, RecursionError, MemoryError, ValueError):
        return QueryShape()
