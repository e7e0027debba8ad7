"""What a turn's SQL says about the team's definitions: the ones it followed (cited with the
answer), and the measures it computed that the folder lacks (offered to a person to save).

A measure is an aggregate of a SELECT that reads one table (``SUM(amount)``), with the
conditions its rows were filtered by: the SELECT's WHERE and the aggregate's own FILTER
(``status = 'paid'``). It is offered unless a metric of the folder is that measure: the same
aggregate of the same expression over the same table with the same filters (a query that
follows it cites it; one that follows it for a part of its rows, ``AND region = 'EU'``, is
not offered either). ``SUM(amount) WHERE kind = 'refund'`` beside a metric
``SUM(amount) WHERE kind = 'sale'`` is another measure and is offered. ``COUNT(*)`` is the
measure ``count`` of ``1``, as MetricFlow writes one. Conditions on a date or time column are left out
(a period asked about is the question's, not the measure's); a SELECT with a join, a
subquery in its conditions, or a condition on another table's column offers nothing, since
its measure is not one table's.

The SQL is the model's: it is parsed here (sqlglot), never run, and what is offered is
re-emitted from the tree, each term with its table qualifier left out.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

from ..events import MetricSuggestion
from ..receipts import DefinitionCitation
from .definitions import TeamContext, aggregate_sql
from .divergence import _agg_kind, _argument, _conjuncts, _key, _own_filters, _unqualified

#: The most suggestions one turn offers.
MAX_SUGGESTIONS = 3
#: The aggregates a metric's measure may have (dbt's names), as sqlglot's kinds say them.
MEASURE_AGGS = ("sum", "count", "count_distinct", "average", "min", "max")
_NAME = re.compile(r"[^a-z0-9]+")


def metric_name(text: str) -> str:
    """A metric's name from an alias or an expression: lower case, ``_`` between words.

    >>> metric_name("Paid Revenue"), metric_name("sum_(o.amount)"), metric_name("2024")
    ('paid_revenue', 'sum_o_amount', 'm_2024')
    """
    name = _NAME.sub("_", text.lower()).strip("_")[:60].rstrip("_")
    return name if name[:1].isalpha() else f"m_{name}" if name else "measure"


def _tables(select: Any, ctes: Collection[str]) -> dict[str, str] | None:
    """The one table a SELECT reads, by every name its columns may use (the table's own and its
    alias); ``None`` when it reads anything else (a join, a CTE, a subquery, no table)."""
    from sqlglot import exp

    source = select.args.get("from_") or select.args.get("from")
    if source is None or select.args.get("joins") or not isinstance(source.this, exp.Table):
        return None
    table = source.this
    if table.name.lower() in ctes or not table.name:
        return None
    return {table.name.lower(): table.name, table.alias_or_name.lower(): table.name}


def _plain(node: Any, names: dict[str, str]) -> bool:
    """Whether ``node`` reads only columns of the table (no subquery, no other table)."""
    from sqlglot import exp

    if node.find(exp.Select, exp.Subquery, exp.Placeholder, exp.Parameter) is not None:
        return False
    return all(not c.table or c.table.lower() in names for c in node.find_all(exp.Column))


def _time_bound(node: Any, time_columns: Collection[str]) -> bool:
    from sqlglot import exp

    return any(c.name.lower() in time_columns for c in node.find_all(exp.Column))


def suggest_metrics(sql: str, dialect: str, team: TeamContext, *, call_id: str,
                    time_columns: Collection[str] = ()) -> list[MetricSuggestion]:
    """The measures ``sql`` computes that no metric of ``team`` defines. ``time_columns``: the
    lower-cased names of the source's date and time columns (conditions on them are left out).

    >>> team = TeamContext(folder="context")
    >>> sql = "SELECT SUM(o.amount) AS paid_revenue FROM orders o WHERE o.status = 'paid' AND o.day >= '2024-01-01'"
    >>> (s,) = suggest_metrics(sql, "duckdb", team, call_id="c1", time_columns={"day"})
    >>> s.name, s.measure
    ('paid_revenue', "SUM(amount) FROM orders WHERE status = 'paid'")
    """
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return []
    if tree is None:
        return []
    ctes = {cte.alias_or_name.lower(): cte.this for cte in tree.find_all(exp.CTE)}
    defined = {_measure_key(m.table, m.agg, sqlglot.parse_one(m.expr, read=dialect),
                            [c for f in m.filters for c in _conjuncts(sqlglot.parse_one(f, read=dialect))], dialect)
               for m in team.metrics
               if m.agg and m.table and _parses(m.expr, dialect) and all(_parses(f, dialect) for f in m.filters)}
    taken = {m.name for m in team.metrics}
    found: dict[tuple[str, ...], MetricSuggestion] = {}
    for select in tree.find_all(exp.Select):
        names = _tables(select, ctes)
        where = select.args.get("where")
        if names is None or (where is not None and not _plain(where.this, names)):
            continue
        table = next(iter(names.values()))
        for projection in select.expressions:
            for agg in projection.find_all(exp.AggFunc):
                arg = _argument(agg)
                kind = _agg_kind(agg)
                if isinstance(arg, exp.Star) and kind == "count":
                    arg = exp.Literal.number(1)  # COUNT(*): MetricFlow's measure ``count`` of ``1``
                if (arg is None or isinstance(arg, exp.Star) or kind not in MEASURE_AGGS
                        or agg.find_ancestor(exp.Select) is not select or not _plain(arg, names)):
                    continue
                conditions = [c for w in ([where.this] if where is not None else []) for c in _conjuncts(w)]
                if isinstance(agg.parent, exp.Filter):
                    own = agg.parent.args["expression"].this
                    if not _plain(own, names):
                        continue
                    conditions += _conjuncts(own)
                *measure, applied = _measure_key(table, kind, arg, conditions, dialect)
                if any(tuple(measure) == tuple(m) and f <= applied for *m, f in defined):
                    continue  # a metric of the folder, followed (and cited), perhaps for a part of its rows
                kept = [c for c in conditions if not _time_bound(c, time_columns)]
                filters = list(dict.fromkeys(_unqualified(c.copy()).sql(dialect=dialect) for c in kept))
                expr = _unqualified(arg.copy()).sql(dialect=dialect)
                key = (table.lower(), kind, expr.lower(), *sorted(f.lower() for f in filters))
                if key in found:
                    continue
                alias = projection.alias if projection is not agg and projection.alias else ""
                name = metric_name(alias or ("row_count" if (kind, expr) == ("count", "1") else f"{kind}_{expr}"))
                while name in taken:
                    name = f"{name}_2" if not name[-1].isdigit() else f"{name}_x"
                taken.add(name)
                where_sql = f" WHERE {' AND '.join(filters)}" if filters else ""
                found[key] = MetricSuggestion(name=name, table=table, agg=kind, expr=expr, filters=filters,
                                              measure=f"{aggregate_sql(kind, expr)} FROM {table}{where_sql}",
                                              call_id=call_id, dialect=dialect)
    return list(found.values())[:MAX_SUGGESTIONS]


def _measure_key(table: str, agg: str, expr: Any, conditions: Sequence[Any], dialect: str) -> tuple[Any, ...]:
    """What makes a measure the same as another: table, aggregate, expression and filters
    (``COUNT(*)``, ``COUNT(1)`` the same count)."""
    from sqlglot import exp

    key = _key(expr, dialect)
    if agg == "count" and (isinstance(expr, exp.Star) or key == "1"):
        key = "*"
    return table.lower(), agg, key, frozenset(_key(c, dialect) for c in conditions)


def _parses(text: str, dialect: str) -> bool:
    import sqlglot

    try:
        return sqlglot.parse_one(text, read=dialect) is not None
    except sqlglot.errors.SqlglotError:
        return False


def definitions_followed(sql: str, dialect: str, team: TeamContext, *, call_id: str) -> list[DefinitionCitation]:
    """The definitions ``sql`` follows: each simple metric it computes as defined (the same
    aggregate of the same expression over the metric's table, with every filter of the
    definition applying to its rows), and the verified query it is (the same tree, layout
    and comments aside).

    >>> from jupyter_analyst.knowledge.definitions import Metric, Origin
    >>> m = Metric(name="revenue", type="simple", table="orders", agg="sum", expr="amount",
    ...            filters=["status = 'paid'"], origin=Origin(file="m.yml", line=4))
    >>> team = TeamContext(folder="context", metrics=[m])
    >>> [d.file for d in definitions_followed("SELECT SUM(amount) FROM orders WHERE status='paid'", "duckdb",
    ...                                       team, call_id="c")]
    ['context/m.yml:4']
    >>> definitions_followed("SELECT SUM(amount) FROM orders", "duckdb", team, call_id="c")
    []
    """
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return []
    if tree is None:
        return []
    cited: list[DefinitionCitation] = []
    canonical = _canonical(tree, dialect)
    for query in team.queries:
        try:
            same = _canonical(sqlglot.parse_one(query.sql, read=dialect), dialect) == canonical
        except sqlglot.errors.SqlglotError:
            same = False
        if same:
            cited.append(DefinitionCitation(name=query.file.removeprefix("queries/"), definition="verified_query",
                                            file=f"{team.folder}/{query.file}", call_id=call_id))
    ctes = {cte.alias_or_name.lower(): cte.this for cte in tree.find_all(exp.CTE)}
    metrics = [m for m in team.metrics if m.agg and m.table and _parses(m.expr, dialect)
               and all(_parses(f, dialect) for f in m.filters)]
    for metric in metrics:
        expr = _key(sqlglot.parse_one(metric.expr, read=dialect), dialect)
        wanted = [_key(c, dialect) for f in metric.filters for c in _conjuncts(sqlglot.parse_one(f, read=dialect))]
        if any(_computes(select, metric, expr, wanted, ctes, dialect) for select in tree.find_all(exp.Select)):
            cited.append(DefinitionCitation(name=metric.name, definition="metric",
                                            file=f"{team.folder}/{metric.origin}", call_id=call_id))
    return cited


def _computes(select: Any, metric: Any, expr: str, wanted: Sequence[str], ctes: dict[str, Any], dialect: str) -> bool:
    from sqlglot import exp

    from .divergence import _tables_read

    if metric.table.lower() not in _tables_read(select):
        return False
    for projection in select.expressions:
        for agg in projection.find_all(exp.AggFunc):
            arg = _argument(agg)
            if (arg is None or agg.find_ancestor(exp.Select) is not select or _key(arg, dialect) != expr
                    or _agg_kind(agg) != metric.agg):
                continue
            if set(wanted) <= _own_filters(agg, select, ctes, dialect):
                return True
    return False


def _canonical(tree: Any, dialect: str) -> str:
    return tree.sql(dialect=dialect, comments=False, normalize=True).lower() if tree is not None else ""
