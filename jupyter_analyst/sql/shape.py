"""What a query computes, read off its syntax tree: measures, grouping keys and filters.

A dataset's description is only worth its truth: a model told "reuse what exists" reuses a
JFK-only or six-month dataset as if it were whole unless the description says otherwise.
So it is read from the tree, never from the text:

* filters are said where they apply: the query's own WHERE, HAVING, QUALIFY and LIMIT, and
  the conditions of its inner joins that test one side only, are the result's; those of
  each CTE, subquery and part of a set operation it reads are said with that relation, in
  the tree of what it reads (``lineage.py``), never lost nor moved onto other rows;
* an alias is said as the table, CTE or subquery it stands for (``AVG(summer.dep_delay)``);
* grouping keys are resolved: ``GROUP BY 1`` and ``GROUP BY month`` (an alias) name the
  projected expression, ``GROUP BY ALL`` every plain projection;
* measures are named by their output column, and a query that only re-selects from a CTE
  (``WITH m AS (... GROUP BY ...) SELECT * FROM m``) takes its measures and keys from there;
* every term has a short form that elides whole sub-expressions (``SUM(…)``), never a cut in
  the middle of one, for descriptions that must fit a budget (``intent.py``).
"""

from __future__ import annotations

from sqlglot import exp

from .lineage import Lineage
from .query_model import QueryShape, Rows
from .terms import BRIEF_CHARS, ELIDED, SHORT_CHARS, brief, by_name, conditions


def query_shape(tree: exp.Expression, dialect: str) -> QueryShape:
    """The measures, dimensions and filters of a parsed query (read where it is prepared,
    so that the host never parses it again).

    >>> import sqlglot
    >>> shape = query_shape(sqlglot.parse_one(
    ...     "WITH jfk AS (SELECT * FROM flights WHERE origin = 'JFK') "
    ...     "SELECT month, AVG(dep_delay) AS delay FROM jfk WHERE year = 2013 GROUP BY 1"), "duckdb")
    >>> shape.filters, shape.dimensions, shape.measures, shape.source.reads[0].body.filters
    (['year = 2013'], ['month'], ['delay = AVG(dep_delay)'], ["origin = 'JFK'"])
    """
    return _Reader(tree, dialect).shape()


class _Reader(Lineage):
    """One query's shape, with its CTEs and derived tables known by name."""

    def __init__(self, tree: exp.Expression, dialect: str) -> None:
        self.tree = tree
        self.dialect = dialect
        self.ctes: dict[str, exp.Expression] = {}
        for with_ in tree.find_all(exp.With):
            for cte in with_.expressions:
                self.ctes.setdefault(cte.alias_or_name.lower(), cte.this)
        self.brief: dict[str, str] = {}
        self.said: set[str] = set()
        self.lifted: set[int] = set()
        # Aliases read as the tables or CTEs they stand for (``f.month`` is ``flights.month``,
        # ``s.dep_delay`` of ``FROM summer s`` is ``summer.dep_delay``); with one table and no
        # CTE or subquery, columns need no qualifier at all.
        tables = [t for t in tree.find_all(exp.Table) if t.name]
        names: dict[str, set[str]] = {}
        called: dict[str, set[str]] = {}
        for table in tables:
            names.setdefault(table.alias_or_name.lower(), set()).add(table.name)
            called.setdefault(table.name.lower(), set()).update([table.alias.lower()] if table.alias else [])
        # A table known by several aliases (a self-join) keeps them: they tell its reads apart.
        self.aliases = {alias: next(iter(real)) for alias, real in names.items()
                        if len(real) == 1 and len(called[next(iter(real)).lower()]) <= 1}
        self.single = (len({t.name.lower() for t in tables}) == 1 and not self.ctes
                       and tree.find(exp.Subquery) is None)

    def _readable(self, node: exp.Expression) -> exp.Expression:
        """``node`` with its columns qualified by table names rather than aliases (a copy)."""
        if not any(c.table for c in node.find_all(exp.Column)):
            return node
        node = node.copy()
        for column in node.find_all(exp.Column):
            real = self.aliases.get(column.table.lower())
            if real is not None:
                column.set("table", None if self.single else exp.to_identifier(real))
        return node

    def sql(self, node: exp.Expression) -> str:
        """``node`` as SQL, its columns qualified by table names rather than aliases."""
        return self._readable(node).sql(dialect=self.dialect)

    # ------------------------------------------------------------------ the parts
    def shape(self) -> QueryShape:
        tree = self.tree
        while isinstance(tree, exp.Subquery):
            tree = tree.this
        if isinstance(tree, exp.Pivot) and not tree.args.get("unpivot"):
            return self._pivot(tree)
        selects = self._branches(tree)
        if not selects:
            return QueryShape()
        main = selects[0]
        measures, dimensions = self._outputs(main)
        if isinstance(tree, exp.SetOperation):
            # Each part says its own filters and, where the parts differ, its own columns.
            differ = self.differing(tree)
            measures = [m.split(" = ", 1)[0] if m.split(" = ", 1)[0].lower() in differ else m for m in measures]
            dimensions = [d.split(" = ", 1)[0] if d.split(" = ", 1)[0].lower() in differ else d for d in dimensions]
            source = self.set_operation(tree, None, 0, differing=True)
            for part in source.parts:
                part.keys = [k for k in part.keys if k not in dimensions]
            filters, limit, having = source.filters, source.limit, []
            source.filters, source.limit = [], ""
        else:
            source = Rows(reads=self.reads(main))
            filters = self._own_filters(main)
            having = [self._term(by_name(t, main)) for t in conditions(main.args.get("having"))]
            # DISTINCT ON keeps one row of each key (which one, by the order); DISTINCT alone
            # keeps every different row, as the columns already say.
            picked = self._distinct(main)
            limit = ", ".join(filter(None, [picked if picked.startswith("distinct on") else "", self.limit(main)]))
        also = self.also(tree)
        # A measure passed through from a CTE or subquery is defined in its brackets: the
        # result's "measures:" names it only, so that it is defined once.
        defined = _definitions([source, *(r.body for r in also if r.body is not None)])
        passed = {m.split(" = ", 1)[0]: m for m in measures if m in defined}
        measures = [m.split(" = ", 1)[0] if m in defined else m for m in measures]
        return QueryShape(measures=measures, dimensions=dimensions, filters=filters, having=having, limit=limit,
                          source=source, also=also, brief=self.brief, defined=passed)

    def _own_filters(self, select: exp.Select) -> list[str]:
        """The conditions of the result's rows: its WHERE, an inner join's one-sided terms,
        QUALIFY, and an aggregate's FILTER (which limits that measure's rows only)."""
        out = [self._term(t) for t in conditions(select.args.get("where"))]
        out += self.joined_filters(select)
        out += [self._term(t, " (QUALIFY)") for t in conditions(select.args.get("qualify"))]
        for projection in select.expressions:
            for only in projection.find_all(exp.Filter):
                out += [self._term(t, f" (in {projection.alias_or_name} only)") for t in conditions(only.expression)]
        return out

    def _pivot(self, tree: exp.Pivot) -> QueryShape:
        """PIVOT t ON col USING agg GROUP BY dim: the aggregates are the measures."""
        using = tree.args.get("using") or []
        measures = [self._named(u.alias, u.this, self.sql(u.this)) if isinstance(u, exp.Alias)
                    else self._term(u) for u in using]
        group = tree.args.get("group")
        dimensions = [self.sql(g) for g in group.expressions] if group is not None else []
        dimensions += [f"each {self.sql(e)}" for e in tree.expressions]
        return QueryShape(measures=measures, dimensions=dimensions, brief=self.brief)

    def _branches(self, tree: exp.Expression) -> list[exp.Select]:
        """The SELECTs whose rows make the result (each side of a UNION)."""
        if isinstance(tree, exp.Select):
            return [tree]
        if isinstance(tree, exp.SetOperation):
            return [*self._branches(tree.left), *self._branches(tree.right)]
        if isinstance(tree, exp.Subquery):
            return self._branches(tree.this)
        found = tree.find(exp.Select)
        return [found] if found is not None else []

    def _term(self, node: exp.Expression, note: str = "") -> str:
        """The term as SQL with ``note`` after it; the short form of a long one remembered."""
        text = self.sql(node) + note
        if len(text) > BRIEF_CHARS:
            self.brief[text] = brief(self._readable(node), self.dialect) + note
        return text

    def _label(self, projection: exp.Expression, inner: exp.Expression) -> tuple[str, str]:
        """A projection as ``(name, expression)``: the expression is empty when it is the
        name, the name when the engine names the column (an expression without an alias)."""
        name = projection.alias if isinstance(projection, exp.Alias) else ""
        if isinstance(inner, exp.Column) and inner.name == (name or inner.name):
            return inner.name, ""
        return name, self.sql(inner)

    def _named(self, name: str, node: exp.Expression, sql: str) -> str:
        if not sql:
            return name
        if not name:
            return self._term(node)
        text = f"{name} = {sql}"
        if len(text) > BRIEF_CHARS:
            short = brief(self._readable(node), self.dialect, max(SHORT_CHARS - len(name) - 3, 8))
            self.brief[text] = name if short == ELIDED else f"{name} = {short}"
        return text

    # ------------------------------------------------------------------ outputs
    def _source(self, select: exp.Select, qualifier: str = "") -> exp.Select | None:
        """The CTE or derived table a column of ``select`` comes from (``qualifier`` its table
        or alias; unqualified: the only source of a query without joins)."""
        from_ = select.args.get("from_") or select.args.get("from")
        sources = [from_.this] if from_ is not None else []
        sources += [j.this for j in select.args.get("joins") or []]
        if not qualifier:
            if len(sources) != 1:
                return None
            candidates = sources
        else:
            candidates = [s for s in sources if s.alias_or_name.lower() == qualifier.lower()]
        for source in candidates:
            if isinstance(source, exp.Subquery) and isinstance(source.this, exp.Select):
                return source.this
            if isinstance(source, exp.Table) and not source.args.get("db"):
                inner = self.ctes.get(source.name.lower())
                if isinstance(inner, exp.Select) and inner is not select:
                    return inner
        return None

    def _columns(self, select: exp.Select, depth: int = 0) -> list[tuple[str, exp.Expression, bool]]:
        """Each output column of ``select`` as ``(name, expression, is_measure)``, a column
        re-selected from a CTE or derived table resolved to what it is there."""
        out: list[tuple[str, exp.Expression, bool]] = []
        for projection in select.expressions:
            inner = projection.this if isinstance(projection, exp.Alias) else projection
            if isinstance(inner, exp.Star) or (isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star)):
                source = self._source(select, inner.table if isinstance(inner, exp.Column) else "")
                if source is not None and depth < 8:
                    out += self._columns(source, depth + 1)
                else:
                    out.append((projection.sql(dialect=self.dialect), inner, False))
                continue
            if isinstance(inner, exp.Column) and depth < 8:
                source = self._source(select, inner.table)
                if source is not None:
                    match = [c for c in self._columns(source, depth + 1) if c[0].lower() == inner.name.lower()]
                    if match:
                        out.append((projection.alias_or_name, match[0][1], match[0][2]))
                        continue
            out.append((projection.alias if isinstance(projection, exp.Alias) else
                        inner.name if isinstance(inner, exp.Column) else "",
                        inner, inner.find(exp.AggFunc) is not None))
        return out

    def _outputs(self, select: exp.Select) -> tuple[list[str], list[str]]:
        """``(measures, dimensions)`` of the result."""
        columns = self._columns(select)
        own = {id(p.this if isinstance(p, exp.Alias) else p) for p in select.expressions}
        # A window over an aggregate the query names says that name (ORDER BY cancelled DESC).
        columns = [(name, by_name(node, select) if id(node) in own and isinstance(node, exp.Window) else node, m)
                   for name, node, m in columns]
        measures = [self._named(name, node, self.sql(node)) for name, node, is_measure in columns if is_measure]
        dimensions = self._keys(select)
        if not dimensions and not select.args.get("group"):
            # A query that re-selects from one CTE or subquery keeps its grouping.
            source = self._source(select)
            if source is not None and not any(
                p.find(exp.AggFunc) for p in select.expressions
            ):
                names = {name.lower() for name, _, _ in columns}
                keys = self._keys(source)
                dimensions = [k for k in keys if k.split(" = ")[0].lower() in names]
                if keys and len(dimensions) == len(keys):
                    self.lifted.add(id(source))  # its grouping is the result's, said once
        if not dimensions and not measures:
            dimensions = [name or self.sql(node) for name, node, _ in columns]
        return measures, dimensions

    def _keys(self, select: exp.Select) -> list[str]:
        """The grouping keys, each as its output name (and expression when it differs)."""
        group = select.args.get("group")
        if group is None:
            return []
        projections = select.expressions
        aliases = {p.alias.lower(): p for p in projections if isinstance(p, exp.Alias) and p.alias}
        keys: list[str] = []
        if group.args.get("all"):
            for p in projections:
                inner = p.this if isinstance(p, exp.Alias) else p
                if inner.find(exp.AggFunc) is None:
                    name, sql = self._label(p, inner)
                    keys.append(self._named(name, inner, sql))
        terms = [(t, "") for t in group.expressions]
        for kind in ("rollup", "cube", "grouping_sets"):
            terms += [(part, "") for part in group.args.get(kind) or []]
        for term, _ in list(terms):
            if isinstance(term, exp.Rollup | exp.Cube | exp.GroupingSets):
                terms.remove((term, ""))
                label = {exp.Rollup: "ROLLUP", exp.Cube: "CUBE"}.get(type(term), "GROUPING SETS")
                terms += [(t, f" ({label}: with subtotals)") for t in term.expressions]
        for term, note in terms:
            keys.append(self._key(term, projections, aliases) + note)
        return list(dict.fromkeys(keys))

    def _key(self, term: exp.Expression, projections: list[exp.Expression],
             aliases: dict[str, exp.Expression]) -> str:
        projection: exp.Expression | None = None
        if isinstance(term, exp.Literal) and term.is_int and 1 <= int(term.name) <= len(projections):
            projection = projections[int(term.name) - 1]
        elif isinstance(term, exp.Column) and not term.table and term.name.lower() in aliases:
            projection = aliases[term.name.lower()]
        else:
            for p in projections:
                inner = p.this if isinstance(p, exp.Alias) else p
                if inner == term:
                    projection = p
                    break
        if projection is None:
            return self._term(term)
        inner = projection.this if isinstance(projection, exp.Alias) else projection
        name, sql = self._label(projection, inner)
        return self._named(name, inner, sql)


def _definitions(rows: list[Rows]) -> set[str]:
    """Every ``name = SQL`` said in the brackets of what these rows read (keys and columns)."""
    out: set[str] = set()
    for r in rows:
        out.update(c for c in [*r.columns, *r.keys] if " = " in c)
        out |= _definitions([*r.parts, *(rel.body for rel in r.reads if rel.body is not None)])
    return out


__all__ = ["brief", "query_shape"]
