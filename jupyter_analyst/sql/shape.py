"""What a query computes, read off its syntax tree: measures, grouping keys and filters.

A dataset's description is only worth its truth: a model told "reuse what exists" reuses a
JFK-only or six-month dataset as if it were whole unless the description says otherwise.
So it is read from the tree, never from the text:

* filters come from everything that feeds the result: the query's WHERE and HAVING, the
  conditions of its joins that test one side only, and the same inside every CTE and
  subquery it reads (each labelled with where it applies);
* grouping keys are resolved: ``GROUP BY 1`` and ``GROUP BY month`` (an alias) name the
  projected expression, ``GROUP BY ALL`` every plain projection;
* measures are named by their output column, and a query that only re-selects from a CTE
  (``WITH m AS (... GROUP BY ...) SELECT * FROM m``) takes its measures and keys from there;
* every term has a short form that elides whole sub-expressions (``SUM(…)``), never a cut in
  the middle of one, for descriptions that must fit a budget (``intent.py``).
"""

from __future__ import annotations

from sqlglot import exp

from .model import QueryShape

#: A term longer than this gets a short form (whole sub-expressions elided).
BRIEF_CHARS = 60
#: A list longer than this (an IN list, a function's arguments) keeps its first items in a short form.
LIST_ITEMS = 3
ELIDED = "…"
_LEAVES = (exp.Column, exp.Literal, exp.Identifier, exp.Star, exp.Null, exp.Boolean, exp.Var, exp.DataType)


def query_shape(tree: exp.Expression, dialect: str) -> QueryShape:
    """The measures, dimensions and filters of a parsed query (read where it is prepared,
    so that the host never parses it again).

    >>> import sqlglot
    >>> shape = query_shape(sqlglot.parse_one(
    ...     "WITH jfk AS (SELECT * FROM flights WHERE origin = 'JFK') "
    ...     "SELECT month, AVG(dep_delay) AS delay FROM jfk WHERE year = 2013 GROUP BY 1"), "duckdb")
    >>> shape.filters, shape.dimensions, shape.measures
    (['year = 2013', "origin = 'JFK' (in jfk)"], ['month'], ['delay = AVG(dep_delay)'])
    """
    return _Reader(tree, dialect).shape()


def brief(node: exp.Expression, dialect: str, limit: int = BRIEF_CHARS) -> str:
    """``node`` as SQL within ``limit`` characters if whole sub-expressions can be elided so
    that it fits (the deepest that fit are kept); ``…`` when nothing of it fits.

    >>> import sqlglot
    >>> brief(sqlglot.parse_one("SUM(CASE WHEN dep_delay > 15 AND NOT cancelled THEN 1 ELSE 0 END)"), "duckdb", 40)
    'SUM(CASE WHEN … AND … THEN 1 ELSE 0 END)'
    >>> brief(sqlglot.parse_one("month IN (1, 2, 3, 4, 5, 6)"), "duckdb", 20)
    'month IN (1, 2, …)'
    """
    text = node.sql(dialect=dialect)
    if len(text) <= limit:
        return text
    for depth in range(4, -1, -1):
        try:
            text = _elided(node.copy(), depth).sql(dialect=dialect)
        except Exception:  # noqa: BLE001 - a generator gap on an elided tree: try shallower
            continue
        if len(text) <= limit:
            return text
    return ELIDED


def _leaf(node: exp.Expression) -> bool:
    return isinstance(node, _LEAVES) or not any(isinstance(v, exp.Expression | list) for v in node.args.values())


def _elided(node: exp.Expression, depth: int) -> exp.Expression:
    """``node`` with every non-leaf below ``depth`` levels replaced by ``…``, long lists shortened."""
    for key, value in list(node.args.items()):
        if isinstance(value, list):
            items = [v for v in value if isinstance(v, exp.Expression)]
            if len(items) != len(value):
                continue
            if len(items) > LIST_ITEMS:
                items = [*items[: LIST_ITEMS - 1], exp.var(ELIDED)]
            node.set(key, [_elided_child(v, depth) for v in items])
        elif isinstance(value, exp.Expression):
            node.set(key, _elided_child(value, depth))
    return node


def _elided_child(child: exp.Expression, depth: int) -> exp.Expression:
    if _leaf(child):
        return child
    if depth <= 0:
        return exp.var(ELIDED)
    return _elided(child, depth - 1)


def _conditions(node: exp.Expression | None) -> list[exp.Expression]:
    """The AND-ed terms of a condition (a WHERE, HAVING or ON clause's, or a bare one)."""
    if node is None:
        return []
    condition = node.this if isinstance(node, exp.Where | exp.Having) else node
    while isinstance(condition, exp.Paren) and isinstance(condition.this, exp.And):
        condition = condition.this
    if isinstance(condition, exp.And):
        return [*_conditions(condition.left), *_conditions(condition.right)]
    return [condition]


def _joins_tables(term: exp.Expression) -> bool:
    """Whether a join condition's term relates two tables (a join key) rather than testing one
    side (a filter): its columns name two tables, or it equates two unqualified columns."""
    columns = list(term.find_all(exp.Column))
    tables = {c.table for c in columns}
    if len(tables - {""}) >= 2:
        return True
    return isinstance(term, exp.EQ) and isinstance(term.left, exp.Column) and isinstance(term.right, exp.Column)


class _Reader:
    """One query's shape, with its CTEs and derived tables known by name."""

    def __init__(self, tree: exp.Expression, dialect: str) -> None:
        self.tree = tree
        self.dialect = dialect
        self.ctes: dict[str, exp.Expression] = {}
        for with_ in tree.find_all(exp.With):
            for cte in with_.expressions:
                self.ctes.setdefault(cte.alias_or_name.lower(), cte.this)
        self.brief: dict[str, str] = {}
        # The joins said in the description's source (their own conditions are said there).
        self.described: set[int] = set()
        # Table aliases read as the tables they stand for (``f.month`` is ``flights.month``);
        # with one table and no CTE or subquery, columns need no qualifier at all.
        tables = [t for t in tree.find_all(exp.Table) if t.name.lower() not in self.ctes]
        names: dict[str, set[str]] = {}
        for table in tables:
            names.setdefault(table.alias_or_name.lower(), set()).add(table.name)
        self.aliases = {alias: next(iter(real)) for alias, real in names.items() if len(real) == 1}
        # A table read twice (a self-join) is told apart by its aliases.
        counts: dict[str, int] = {}
        for table in tables:
            counts[table.name.lower()] = counts.get(table.name.lower(), 0) + 1
        self.repeated = {name for name, count in counts.items() if count > 1}
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
        source = ""
        if len(selects) == 1:
            # An outer join's own conditions are said with the join, never as filters.
            source = self._joined(main) or ""
            filters = [self._filter_text(node, places) for node, places in self._filters(main, "", set())]
        else:
            filters = self._union_filters(selects)
        return QueryShape(measures=measures, dimensions=dimensions, filters=filters, source=source,
                          brief=self.brief)

    def _filter_text(self, node: exp.Expression, places: tuple[str, ...]) -> str:
        return self._term(node, f" ({', '.join(places)})" if places else "")

    def _union_filters(self, selects: list[exp.Select]) -> list[str]:
        """The filters of a UNION's parts, ranked for a description that keeps its first few.

        A term every part has limits the whole result: it is said once, with no part named.
        A term only some parts have is what makes those parts' rows (``dep_delay < 0`` for
        the early flights, ``dep_delay > 60`` for the late ones): without it the parts read
        the same and the dataset reads as what it is not, while a shared term left out is
        only one more of the "AND n more" the description announces. So the parts' own
        terms come first, one part's at a time in turn (so every part keeps its first one as
        long as that many are kept), each part's the fewer parts they belong to the earlier,
        and the shared terms after them.
        """
        found: dict[str, tuple[exp.Expression, tuple[str, ...], list[int]]] = {}
        order: list[list[str]] = []
        for n, select in enumerate(selects, start=1):
            order.append([])
            for node, places in self._filters(select, "", set()):
                key = self.sql(node) + repr(places)
                found.setdefault(key, (node, places, []))
                if n not in found[key][2]:
                    found[key][2].append(n)
                    order[-1].append(key)
        everywhere = len(selects)
        # Each part's own terms, those of fewer parts first; taken one per part in turn.
        own = [sorted((k for k in keys if len(found[k][2]) < everywhere), key=lambda k: len(found[k][2]))
               for keys in order]
        ranked: list[str] = []
        for turn in range(max(map(len, own))):
            ranked += [keys[turn] for keys in own if turn < len(keys) and keys[turn] not in ranked]
        shared = [k for keys in order for k in keys if len(found[k][2]) == everywhere]
        out: list[str] = []
        for key in [*ranked, *shared]:
            node, places, parts = found[key]
            if len(parts) < everywhere:
                named = f"UNION part {parts[0]}" if len(parts) == 1 else f"UNION parts {', '.join(map(str, parts))}"
                places = (*places, f"{named} only")
            out.append(self._filter_text(node, places))
        return list(dict.fromkeys(out))

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
            short = brief(self._readable(node), self.dialect, max(BRIEF_CHARS - len(name) - 3, 8))
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
        measures = [self._named(name, node, self.sql(node)) for name, node, is_measure in columns if is_measure]
        dimensions = self._keys(select)
        if not dimensions and not select.args.get("group"):
            # A query that re-selects from one CTE or subquery keeps its grouping.
            source = self._source(select)
            if source is not None and not any(
                p.find(exp.AggFunc) for p in select.expressions
            ):
                names = {name.lower() for name, _, _ in columns}
                dimensions = [k for k in self._keys(source) if k.split(" = ")[0].lower() in names]
        if not dimensions and not measures:
            dimensions = [name for name, _, _ in columns]
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

    # ------------------------------------------------------------------ joins
    def _joined(self, select: exp.Select) -> str | None:
        """What the rows of ``select`` are read from when it joins (``flights LEFT JOIN planes
        ON tailnum``): tables by name, a CTE or subquery by what it reads, each join with its
        kind and keys. ``None`` when nothing is joined or a part is not one plain SELECT (the
        description then lists the tables)."""
        joins: list[exp.Join] = []
        text = self._from_clause(select, joins, 0)
        if text is None or not joins:
            return None
        self.described.update(id(j) for j in joins)
        return text

    def _from_clause(self, select: exp.Select, joins: list[exp.Join], depth: int) -> str | None:
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None or depth > 8:
            return None
        own = select.args.get("joins") or []
        parts = [self._relation(from_.this, joins, depth, nested=bool(own))]
        for join in own:
            parts.append(self._join(join, joins, depth))
        return None if None in parts else " ".join(p for p in parts if p is not None)

    def _relation(self, node: exp.Expression, joins: list[exp.Join], depth: int, nested: bool) -> str | None:
        """A table by its name; a CTE or derived table by what it reads (in parentheses when
        it joins and is joined in turn)."""
        body: exp.Expression | None = None
        if isinstance(node, exp.Table) and node.name:
            body = None if node.args.get("db") else self.ctes.get(node.name.lower())
            if body is None:
                alias = node.alias if node.name.lower() in self.repeated else ""
                return f"{node.name} AS {alias}" if alias else node.name
        elif isinstance(node, exp.Subquery):
            body = node.this
        if not isinstance(body, exp.Select):
            return None
        text = self._from_clause(body, joins, depth + 1)
        if text is None:
            return None
        return f"({text})" if nested and " JOIN " in text else text

    def _join(self, join: exp.Join, joins: list[exp.Join], depth: int) -> str | None:
        """``LEFT JOIN planes ON tailnum``: the kind (inner said as plain ``JOIN``), the table,
        the keys by column name, and an outer join's conditions on one side."""
        joined = self._relation(join.this, joins, depth, nested=True)
        if joined is None:
            return None
        joins.append(join)
        words = [w.upper() for w in (join.method, join.side, join.kind) if w and w.upper() not in ("INNER", "OUTER")]
        on = join.args.get("on")
        if not words and on is None and not join.args.get("using") and not join.method:
            words = ["CROSS"]  # FROM a, b
        text = " ".join([*words, "JOIN", joined])
        using = [u.name for u in join.args.get("using") or []]
        if using:
            return f"{text} USING ({', '.join(using)})"
        keys: list[str] = []
        others: list[str] = []
        for term in _conditions(on):
            if _joins_tables(term):
                if isinstance(term, exp.EQ) and isinstance(term.left, exp.Column) and isinstance(term.right, exp.Column):
                    left, right = term.left.name, term.right.name
                    keys.append(left if left == right else f"{left} = {right}")
                else:
                    others.append(brief(self._readable(term), self.dialect, 40))
            elif join.side:
                others.append(brief(self._readable(term), self.dialect))
        condition = " AND ".join(filter(None, [", ".join(keys), *others]))
        return f"{text} ON {condition}" if condition else text

    # ------------------------------------------------------------------ filters
    def _filters(self, select: exp.Select, where: str, seen: set[int],
                 depth: int = 0) -> list[tuple[exp.Expression, tuple[str, ...]]]:
        """The filters of ``select`` and of every CTE and subquery that feeds it, each read
        once, with where each applies (``where``: the CTE or subquery ``select`` is, if any)."""
        if id(select) in seen or depth > 16:
            return []
        seen.add(id(select))
        inside = (f"in {where}",) if where else ()
        out: list[tuple[exp.Expression, tuple[str, ...]]] = []
        for term in _conditions(select.args.get("where")):
            out.append((term, inside))
        for join in select.args.get("joins") or []:
            if id(join) in self.described and join.side:
                continue
            joined = join.this.name if isinstance(join.this, exp.Table) else join.this.alias_or_name
            # An outer join's condition on one side picks the rows that match, not the rows kept.
            place = f"{join.side} JOIN {joined} condition" if join.side else f"joining {joined}"
            for term in _conditions(join.args.get("on")):
                if not _joins_tables(term):
                    out.append((term, (place, *inside)))
        for term in _conditions(select.args.get("having")):
            out.append((term, ("HAVING", *inside)))
        for projection in select.expressions:
            # An aggregate's FILTER (WHERE ...) limits the rows of that measure only.
            for only in projection.find_all(exp.Filter):
                for term in _conditions(only.expression):
                    out.append((term, (f"in {projection.alias_or_name} only",)))
        for name, inner in self._fed_by(select):
            for branch in self._branches(inner):
                out += self._filters(branch, name, seen, depth + 1)
        return out

    def _fed_by(self, select: exp.Select) -> list[tuple[str, exp.Expression]]:
        """The CTEs and derived tables ``select`` reads, by name, in the order it names them."""
        def derived(node: exp.Expression) -> bool:
            return isinstance(node, exp.Subquery) and isinstance(node.parent, exp.From | exp.Join)

        found: list[tuple[str, exp.Expression]] = []
        # Not into CTE definitions (a CTE feeds the query only where it is named) nor into
        # derived tables (read in turn, under their own name).
        for node in select.walk(prune=lambda n: n is not select and (isinstance(n, exp.With) or derived(n))):
            if node is select:
                continue
            if derived(node):
                found.append((node.alias_or_name or "a subquery", node.this))
            elif isinstance(node, exp.Table) and not node.args.get("db"):
                inner = self.ctes.get(node.name.lower())
                if inner is not None:
                    found.append((node.name, inner))
        return found
