"""A query's terms as a description says them: whole, or shortened by whole sub-expressions.

A description that must fit a budget never cuts inside an expression: a long term gets a
short form that elides whole sub-expressions (``SUM(CASE WHEN … THEN 1 ELSE 0 END)``), and
a condition is split into its AND-ed terms, each said (or left out) whole.
"""

from __future__ import annotations

from sqlglot import exp

from .query_model import ELIDED

#: A term longer than this gets a short form (whole sub-expressions elided).
BRIEF_CHARS = 60
#: A list longer than this (an IN list, a function's arguments) keeps its first items in a short form.
LIST_ITEMS = 3
#: A comparison this short is kept whole in a measure's short form.
COMPARISON_CHARS = 30
#: The most characters of a term's short form (name and expression).
SHORT_CHARS = 100
_LEAVES = (exp.Column, exp.Literal, exp.Identifier, exp.Star, exp.Null, exp.Boolean, exp.Var, exp.DataType)


def brief(node: exp.Expression, dialect: str, limit: int = BRIEF_CHARS) -> str:
    """``node`` as SQL within ``limit`` characters if whole sub-expressions can be elided so
    that it fits (the deepest that fit are kept); ``…`` when nothing of it fits.

    >>> import sqlglot
    >>> brief(sqlglot.parse_one("SUM(CASE WHEN dep_delay > 15 AND NOT cancelled THEN 1 ELSE 0 END)"), "duckdb", 40)
    'SUM(CASE WHEN … AND … THEN 1 ELSE 0 END)'
    >>> brief(sqlglot.parse_one("month IN (1, 2, 3, 4, 5, 6)"), "duckdb", 20)
    'month IN (1, 2, …)'
    >>> brief(sqlglot.parse_one("SUM(CASE WHEN a > 2 AND b > 50 AND c >= 3 THEN o.revenue ELSE 0 END)"), "duckdb", 41)
    'SUM(CASE WHEN … THEN … ELSE 0 END)'
    """
    text = node.sql(dialect=dialect)
    if len(text) <= limit:
        return text
    # First a form that keeps the comparisons which define a measure (``CASE WHEN dep_delay
    # <= 15 THEN … END``), eliding the values around them; then any form that fits.
    for keep in (True, False):
        for depth in range(4, -1, -1):
            kept: list[bool] | None = [] if keep else None
            try:
                text = _elided(node.copy(), depth, kept).sql(dialect=dialect)
            except Exception:  # noqa: BLE001 - a generator gap on an elided tree: try shallower
                continue
            if len(text) <= limit and (kept is None or kept) and _whole(text, dialect):
                return text
    return ELIDED


def _whole(text: str, dialect: str) -> bool:
    """Whether ``text`` reads as whole SQL with each ``…`` standing for one expression (a
    generator that writes an elided part as nothing would leave ``THEN  ELSE``)."""
    import sqlglot

    try:
        sqlglot.parse_one(text.replace(ELIDED, "x"), read=dialect)
    except Exception:  # noqa: BLE001 - not whole: a shallower form is tried
        return False
    return True


def _leaf(node: exp.Expression) -> bool:
    return isinstance(node, _LEAVES) or not any(isinstance(v, exp.Expression | list) for v in node.args.values())


def _elided(node: exp.Expression, depth: int, kept: list[bool] | None = None) -> exp.Expression:
    """``node`` with every non-leaf below ``depth`` levels replaced by ``…``, long lists shortened;
    with ``kept`` (a list that records what was kept), short comparisons stay whole below it."""
    for key, value in list(node.args.items()):
        if isinstance(value, list):
            items = [v for v in value if isinstance(v, exp.Expression)]
            if len(items) != len(value):
                continue
            if len(items) > LIST_ITEMS:
                items = [*items[: LIST_ITEMS - 1], _stand_in(items[-1])]
            node.set(key, [_elided_child(v, depth, kept) for v in items])
        elif isinstance(value, exp.Expression):
            node.set(key, _elided_child(value, depth, kept))
    return node


def _stand_in(like: exp.Expression) -> exp.Expression:
    """``…`` in the place of ``like``: a CASE's ``WHEN`` keeps its shape (``WHEN … THEN …``)."""
    if isinstance(like, exp.If):
        return exp.If(this=exp.var(ELIDED), true=exp.var(ELIDED))
    return exp.var(ELIDED)


def _elided_child(child: exp.Expression, depth: int, kept: list[bool] | None = None) -> exp.Expression:
    if _leaf(child):
        return child
    if kept is not None and _comparison(child):
        kept.append(True)
        return child
    if depth <= 0:
        if kept is not None and isinstance(child, exp.Case):
            return _case(child, kept)
        if kept is not None and isinstance(child, exp.If) and _comparison(child.this):
            kept.append(True)
            return exp.If(this=child.this.copy(), true=exp.var(ELIDED))
        return _stand_in(child)
    return _elided(child, depth - 1, kept)


def _comparison(node: exp.Expression) -> bool:
    """A short comparison (``dep_delay <= 15``, ``NOT x IS NULL``): what defines a measure."""
    inner = node.this if isinstance(node, exp.Not) else node
    return isinstance(inner, exp.Predicate) and len(node.sql()) <= COMPARISON_CHARS


def _case(case: exp.Case, kept: list[bool]) -> exp.Expression:
    """A CASE with its first WHEN's comparison kept and its values elided."""
    ifs = case.args.get("ifs") or []
    if not ifs or not _comparison(ifs[0].this):
        return _stand_in(case)
    kept.append(True)
    whens = [exp.If(this=ifs[0].this.copy(), true=exp.var(ELIDED))]
    whens += [_stand_in(ifs[1])] if len(ifs) > 1 else []
    default = exp.var(ELIDED) if case.args.get("default") is not None else None
    return exp.Case(ifs=whens, default=default)


def conditions(node: exp.Expression | None) -> list[exp.Expression]:
    """The AND-ed terms of a condition (a WHERE, HAVING, QUALIFY or ON clause's, or a bare one)."""
    if node is None:
        return []
    condition = node.this if isinstance(node, exp.Where | exp.Having | exp.Qualify) else node
    while isinstance(condition, exp.Paren) and isinstance(condition.this, exp.And):
        condition = condition.this
    if isinstance(condition, exp.And):
        return [*conditions(condition.left), *conditions(condition.right)]
    return [condition]


def by_name(term: exp.Expression, select: exp.Select) -> exp.Expression:
    """``term`` (a HAVING condition, a window's ORDER BY) with each aggregate that ``select``
    names in its projections said by that name (``COUNT(*) > 500`` is ``cancelled > 500``)."""
    named = [(p.this, p.alias) for p in select.expressions
             if isinstance(p, exp.Alias) and p.alias and isinstance(p.this, exp.AggFunc)]
    if not named:
        return term

    def swap(node: exp.Expression) -> exp.Expression:
        for expression, alias in named:
            if node is not expression and node == expression:
                return exp.column(alias)
        return node

    return term.copy().transform(swap)


def joins_tables(term: exp.Expression) -> bool:
    """Whether a join condition's term relates two tables (a join key) rather than testing one
    side (a filter): its columns name two tables, or it equates two unqualified columns."""
    columns = list(term.find_all(exp.Column))
    tables = {c.table for c in columns}
    if len(tables - {""}) >= 2:
        return True
    return isinstance(term, exp.EQ) and isinstance(term.left, exp.Column) and isinstance(term.right, exp.Column)


__all__ = ["BRIEF_CHARS", "ELIDED", "brief", "by_name", "conditions", "joins_tables"]
