"""Whether a query computes a defined metric differently from the team's definition.

A query computes a simple metric when one of its SELECTs reading the metric's table
aggregates the metric's measure expression. It differs from the definition when it uses
another aggregate (``AVG(amount)`` for a ``sum``), or when a filter the definition carries
(``status = 'completed'``) is neither in the WHERE clause of the SELECT that aggregates
nor in the aggregate's own FILTER: each aggregate is judged by the filters that apply to
its rows, so ``SUM(x) FILTER (WHERE f), SUM(x)`` has its second one noted. A query that
puts its own condition on a column of a definition's filter it does not carry
(``kind = 'refund'`` where the metric has ``kind = 'sale'``; an IN list, ``<>``, NOT) computes
another measure, not the metric wrongly: it is not compared with that metric. Compared on sqlglot's trees, with table qualifiers left out, so ``o.status`` is
``status``. A note says so beside the rows, naming the definition and where it is written
(as ``find`` names it: the folder, its file and line), and what to do: compute it with
the definition, or say in the answer why not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .definitions import Metric

#: The most notes one query gets.
MAX_NOTES = 3
#: What a note asks of the model.
REMEDY = "compute it with the definition's filter and aggregate, or say in the answer why not"


def _unqualified(node: Any) -> Any:
    from sqlglot import exp

    return node.transform(lambda n: exp.column(n.name) if isinstance(n, exp.Column) else n)


def _key(node: Any, dialect: str) -> str:
    """A term's text with table qualifiers left out; an equality's sides in a fixed order."""
    from sqlglot import exp

    node = _unqualified(node.copy())
    if isinstance(node, (exp.EQ, exp.NEQ)):
        sides = sorted(side.sql(dialect=dialect).lower() for side in (node.left, node.right))
        return f"{type(node).__name__}:{sides[0]}:{sides[1]}"
    return node.sql(dialect=dialect).lower()


def _conjuncts(node: Any) -> list[Any]:
    from sqlglot import exp

    node = node.unnest() if isinstance(node, exp.Paren) else node
    if isinstance(node, exp.And):
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]


def _agg_kind(node: Any) -> str | None:
    """MetricFlow's name for an aggregate node's function."""
    from sqlglot import exp

    if isinstance(node, exp.Count):
        return "count_distinct" if isinstance(node.this, exp.Distinct) else "count"
    kinds = {exp.Sum: "sum", exp.Avg: "average", exp.Min: "min", exp.Max: "max", exp.Median: "median"}
    return next((kind for cls, kind in kinds.items() if isinstance(node, cls)), type(node).__name__.lower())


def _argument(node: Any) -> Any:
    from sqlglot import exp

    arg = node.this
    if isinstance(arg, exp.Distinct):
        arg = arg.expressions[0] if arg.expressions else None
    return arg


def _tables_read(select: Any) -> set[str]:
    """The names of the tables a SELECT reads directly (its FROM and JOINs)."""
    from sqlglot import exp

    # sqlglot names the FROM clause ``from_`` (``from`` before version 27).
    sources = [select.args.get("from_") or select.args.get("from"), *(select.args.get("joins") or [])]
    return {s.this.name.lower() for s in sources if s is not None and isinstance(s.this, exp.Table)}


def _wheres(select: Any, ctes: dict[str, Any], seen: set[int]) -> list[Any]:
    """The WHERE clauses that apply to a SELECT's rows: its own, and those of the CTEs and
    subqueries it reads from (their rows are the ones it gets), each once."""
    from sqlglot import exp

    if not isinstance(select, exp.Select) or id(select) in seen:
        return []
    seen.add(id(select))
    found = [select.args["where"]] if select.args.get("where") is not None else []
    sources = [select.args.get("from_") or select.args.get("from"), *(select.args.get("joins") or [])]
    for source in sources:
        if source is None:
            continue
        inner = source.this
        if isinstance(inner, exp.Table) and inner.name.lower() in ctes:
            found += _wheres(ctes[inner.name.lower()], ctes, seen)
        elif isinstance(inner, exp.Subquery):
            found += _wheres(inner.this, ctes, seen)
    return found


def _own_conditions(agg: Any, select: Any, ctes: dict[str, Any]) -> list[Any]:
    """The filter terms that apply to the rows ``agg`` aggregates: the WHERE clauses of its
    SELECT and of what that reads (not those of other SELECTs, nor another aggregate's
    FILTER), and its own FILTER."""
    from sqlglot import exp

    own = [c for where in _wheres(select, ctes, set()) for c in _conjuncts(where.this)]
    if isinstance(agg.parent, exp.Filter):
        own += _conjuncts(agg.parent.args["expression"].this)
    return own


def _own_filters(agg: Any, select: Any, ctes: dict[str, Any], dialect: str) -> set[str]:
    """The keys of :func:`_own_conditions`."""
    return {_key(c, dialect) for c in _own_conditions(agg, select, ctes)}


def _columns(node: Any) -> set[str]:
    from sqlglot import exp

    return {c.name.lower() for c in node.find_all(exp.Column)}


def divergences(sql: str, dialect: str, metrics: Sequence[Metric], folder: str = "") -> list[str]:
    """Notes on the defined metrics ``sql`` computes differently from their definitions.
    ``folder``: the context folder's name, which a definition's place is told under.

    >>> from jupyter_analyst.knowledge.definitions import Origin
    >>> revenue = Metric(name="revenue", type="simple", table="orders", agg="sum", expr="amount",
    ...                  filters=["status = 'completed'"], origin=Origin(file="orders.yml", line=9))
    >>> divergences("SELECT SUM(amount) FROM orders WHERE status = 'completed'", "duckdb", [revenue])
    []
    >>> print(divergences("SELECT AVG(o.amount) AS revenue FROM orders o WHERE o.status = 'completed'", "duckdb", [revenue])[0])
    revenue = AVG(o.amount) is another aggregate than the team's metric `revenue` (orders.yml:9): SUM(amount) FROM orders WHERE status = 'completed'; compute it with the definition's filter and aggregate, or say in the answer why not
    >>> sql = "SELECT SUM(amount) FILTER (WHERE status = 'completed') AS revenue, SUM(amount) AS gross FROM orders"
    >>> print(divergences(sql, "duckdb", [revenue], folder="context")[0])  # doctest: +ELLIPSIS
    gross = SUM(amount) lacks the filter status = 'completed' of the team's metric `revenue` (context/orders.yml:9): ...
    """
    text = sql.lower()
    wanted = [m for m in metrics if m.agg and m.table and re.search(rf"\b{re.escape(m.table.lower())}\b", text)]
    if not wanted:  # most queries: no parser needed
        return []
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read=dialect)
        expressions = {m.name: _key(sqlglot.parse_one(m.expr, read=dialect), dialect) for m in wanted}
        filters = {m.name: [(c.sql(dialect=dialect), _key(c, dialect), _columns(c)) for f in m.filters
                            for c in _conjuncts(sqlglot.parse_one(f, read=dialect))] for m in wanted}
    except sqlglot.errors.SqlglotError:
        return []
    ctes = {cte.alias_or_name.lower(): cte.this for cte in tree.find_all(exp.CTE)}
    notes: list[str] = []
    for select in tree.find_all(exp.Select):
        read = _tables_read(select)
        for projection in select.expressions:
            for agg in projection.find_all(exp.AggFunc):
                arg = _argument(agg)
                if arg is None or agg.find_ancestor(exp.Select) is not select:
                    continue
                for metric in wanted:
                    if metric.table.lower() not in read or _key(arg, dialect) != expressions[metric.name]:
                        continue
                    conditions = _own_conditions(agg, select, ctes)
                    own = {_key(c, dialect) for c in conditions}
                    constrained = set().union(*(_columns(c) for c in conditions))
                    if any(key not in own and columns & constrained for _, key, columns in filters[metric.name]):
                        continue  # another measure (refunds beside sales), not this metric computed wrongly
                    said = f"{projection.alias} = {agg.sql(dialect=dialect)}" if projection.alias else agg.sql(dialect=dialect)
                    where = f"{folder}/{metric.origin}" if folder else str(metric.origin)
                    definition = f"the team's metric `{metric.name}` ({where}): {metric.formula()}"
                    if _agg_kind(agg) != metric.agg:
                        notes.append(f"{said} is another aggregate than {definition}; {REMEDY}")
                        continue
                    missing = [said_filter for said_filter, key, _ in filters[metric.name] if key not in own]
                    if missing:
                        notes.append(f"{said} lacks the filter {' AND '.join(missing)} of {definition}; {REMEDY}")
    return list(dict.fromkeys(notes))[:MAX_NOTES]
