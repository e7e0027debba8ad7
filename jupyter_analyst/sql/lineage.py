"""Where a query's rows come from, read off its tree: each relation with its own filters.

A filter is only true where it applies. ``dest <> 'XXX'`` in the second part of a UNION
inside a CTE limits that part's rows, not the dataset's; ``age_rank <= 3`` means nothing
unless ``age_rank`` is said. So the rows a query reads are described as a tree, the shape
the SQL has, at any nesting:

* a table by its name; a CTE or derived table by its name with what it reads in brackets,
  said once where it is first read (``summer [flights where origin = 'JFK']``), and by its
  name after that; an alias always as the name it stands for;
* each SELECT with its own WHERE, QUALIFY, grouping, HAVING and LIMIT, and the computed or
  renamed columns of it that the reading query uses (``age_rank = RANK() OVER (...)``);
* a set operation as its parts, each with its own filters and its own column mapping where
  the parts differ (``faa = origin`` in one part, ``faa = dest`` in the other); a term every
  part has is said once, for each part;
* joins with their kind and keys, and an outer join's conditions on one side (they pick
  the rows that match, they keep every row).
"""

from __future__ import annotations

from sqlglot import exp

from .query_model import Relation, Rows
from .terms import brief, by_name, conditions, joins_tables

#: How deep derived tables are read (deeper ones are named only).
DEPTH = 12
#: What is said as written (a table function, a SELECT without a table) is elided past this length.
WRITTEN_CHARS = 100
_OPS = {exp.Union: "UNION", exp.Except: "EXCEPT", exp.Intersect: "INTERSECT"}


def _unwrapped(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Subquery):
        node = node.this
    return node


def _is_star(node: exp.Expression) -> bool:
    inner = node.this if isinstance(node, exp.Alias) else node
    return isinstance(inner, exp.Star) or (isinstance(inner, exp.Column) and isinstance(inner.this, exp.Star))


def _derived(node: exp.Expression) -> bool:
    return isinstance(node, exp.Subquery) and isinstance(node.parent, exp.From | exp.Join)


class Lineage:
    """The relations a query reads (a part of the shape's reader, which supplies ``sql``,
    ``_term``, ``_named``, ``_keys``, ``_readable`` and the CTEs by name)."""

    dialect: str
    ctes: dict[str, exp.Expression]
    aliases: dict[str, str]
    said: set[str]
    """The CTEs already described (a later mention names them only)."""
    lifted: set[int]
    """The SELECTs whose grouping and measures the result's description already gives."""

    def sql(self, node: exp.Expression) -> str:
        raise NotImplementedError

    def _readable(self, node: exp.Expression) -> exp.Expression:
        raise NotImplementedError

    def _term(self, node: exp.Expression, note: str = "") -> str:
        raise NotImplementedError

    def _named(self, name: str, node: exp.Expression, sql: str) -> str:
        raise NotImplementedError

    def _keys(self, select: exp.Select) -> list[str]:
        raise NotImplementedError

    # ------------------------------------------------------------------ relations
    def reads(self, select: exp.Select, depth: int = 0) -> list[Relation]:
        """What ``select`` reads: its FROM and each join, in order."""
        from_ = select.args.get("from_") or select.args.get("from")
        if from_ is None:
            return []
        relations = [self._relation(from_.this, select, depth)]
        for join in select.args.get("joins") or []:
            relation = self._relation(join.this, select, depth)
            relation.join, (relation.on, relation.keys) = self._join_words(join), self._on(join)
            relations.append(relation)
        return relations

    def _relation(self, node: exp.Expression, reader: exp.Select, depth: int) -> Relation:
        """A table by its name (with its alias where the description keeps that alias), a
        CTE or subquery by its name and, at its first mention, what it reads."""
        if isinstance(node, exp.Table) and node.name and not node.args.get("db"):
            name = node.name.lower()
            cte = self.ctes.get(name)
            if cte is not None:
                relation = Relation(name=self._called(node))
                if name not in self.said:
                    self.said.add(name)
                    relation.body = self.body(cte, self._used(reader, node.alias_or_name, cte), depth + 1)
                return relation
        if isinstance(node, exp.Table) and node.name:
            return Relation(name=self._called(node))
        if isinstance(node, exp.Lateral) and isinstance(node.this, exp.Subquery):
            name = node.alias_or_name or node.this.alias_or_name
            body = self.body(node.this.this, self._used(reader, name, node.this.this), depth + 1)
            return Relation(name=f"LATERAL {name}".strip(), body=body)
        if isinstance(node, exp.Subquery):
            name = node.alias_or_name or "a subquery"
            return Relation(name=name, body=self.body(node.this, self._used(reader, name, node.this), depth + 1))
        # A table function, VALUES, UNNEST: as written (whole parts elided past a length).
        return Relation(name=brief(self._readable(node), self.dialect, WRITTEN_CHARS))

    def _called(self, table: exp.Table) -> str:
        alias = table.alias
        return f"{table.name} AS {alias}" if alias and alias.lower() not in self.aliases else table.name

    def _join_words(self, join: exp.Join) -> str:
        """``LEFT JOIN``: the kind (an inner join said as plain ``JOIN``)."""
        words = [w.upper() for w in (join.method, join.side, join.kind) if w and w.upper() not in ("INNER", "OUTER")]
        if not words and join.args.get("on") is None and not join.args.get("using") and not join.method:
            words = ["CROSS"]  # FROM a, b
        return " ".join([*words, "JOIN"])

    def _on(self, join: exp.Join) -> tuple[str, str]:
        """``(condition, keys)``: the join's keys by column name and an outer join's
        conditions on one side (an inner join's are filters of the rows: see
        :meth:`joined_filters`); and the keys alone. A key is never elided: it sets what
        each row is (per hour or per airport)."""
        using = [u.name for u in join.args.get("using") or []]
        if using:
            said = f"USING ({', '.join(using)})"
            return said, said
        keys: list[str] = []
        others: list[str] = []
        for term in conditions(join.args.get("on")):
            if joins_tables(term):
                left, right = (_uncast(term.left), _uncast(term.right)) if isinstance(term, exp.EQ) else (None, None)
                if isinstance(left, exp.Column) and isinstance(right, exp.Column):
                    # A cast on both sides of one column (CAST(a.t AS TIMESTAMP) = CAST(b.t AS
                    # TIMESTAMP)) keys on that column.
                    keys.append(left.name if left.name == right.name else f"{left.name} = {right.name}")
                else:
                    keys.append(self.sql(term))
            elif join.side:
                others.append(brief(self._readable(term), self.dialect))
        said_keys = ", ".join(keys) if all(" " not in k for k in keys) else " AND ".join(keys)
        return " AND ".join(filter(None, [said_keys, *others])), said_keys

    def joined_filters(self, select: exp.Select) -> list[str]:
        """An inner join's conditions on one side: they drop rows, as a WHERE does."""
        out: list[str] = []
        for join in select.args.get("joins") or []:
            if join.side:
                continue
            joined = join.this.name if isinstance(join.this, exp.Table) else join.this.alias_or_name
            out += [self._term(t, f" (joining {joined})") for t in conditions(join.args.get("on"))
                    if not joins_tables(t)]
        return out

    def limit(self, query: exp.Expression) -> str:
        """``first 10 by n DESC``: what a LIMIT keeps; empty without one."""
        limit = query.args.get("limit")
        count = limit.args.get("expression") if isinstance(limit, exp.Limit) else None
        if count is None:
            return ""
        offset = query.args.get("offset")
        skipped = f" after the first {self.sql(offset.expression)}" if isinstance(offset, exp.Offset) else ""
        order = query.args.get("order")
        by = f" by {', '.join(self.sql(o) for o in order.expressions)}" if order is not None else " (in no set order)"
        return f"first {self.sql(count)}{skipped}{by}"

    # ------------------------------------------------------------------ bodies
    def body(self, node: exp.Expression, used: set[str] | None, depth: int) -> Rows:
        """The rows ``node`` (a CTE's or subquery's query) makes; ``used``: the names of its
        columns that the reading query uses (``None``: all of them)."""
        node = _unwrapped(node)
        if depth > DEPTH:
            return Rows(reads=[Relation(name="…")])
        if isinstance(node, exp.SetOperation):
            return self.set_operation(node, used, depth)
        if not isinstance(node, exp.Select) or not (node.args.get("from_") or node.args.get("from")):
            # A PIVOT, VALUES, or a SELECT of values without a table (a recursive CTE's seed).
            return Rows(reads=[Relation(name=brief(self._readable(node), self.dialect, WRITTEN_CHARS))])
        if used is not None and node.args.get("limit") is not None and node.args.get("order") is not None:
            used = used | {c.name.lower() for c in node.args["order"].find_all(exp.Column)}  # what LIMIT keeps
        filters = [self._term(t) for t in conditions(node.args.get("where"))]
        filters += self.joined_filters(node)
        filters += [self._term(t, " (QUALIFY)") for t in conditions(node.args.get("qualify"))]
        return Rows(
            reads=self.reads(node, depth), filters=filters,
            keys=[] if id(node) in self.lifted else self._keys(node),
            having=[self._term(by_name(t, node)) for t in conditions(node.args.get("having"))],
            limit=self.limit(node), distinct=self._distinct(node), columns=self._defined(node, used),
        )

    def _distinct(self, select: exp.Select) -> str:
        """``distinct rows`` for a SELECT DISTINCT (``distinct on (k)``): one row of each is kept."""
        distinct = select.args.get("distinct")
        if not isinstance(distinct, exp.Distinct):
            return ""
        on = distinct.args.get("on")
        keys = on.expressions if isinstance(on, exp.Tuple) else [on] if on is not None else []
        if not keys:
            return "distinct rows"
        order = select.args.get("order")
        first = f" first by {', '.join(self.sql(o) for o in order.expressions)}" if order is not None else ""
        return f"distinct on ({', '.join(self.sql(k) for k in keys)}){first}"

    def _defined(self, select: exp.Select, used: set[str] | None) -> list[str]:
        """The computed or renamed columns of ``select`` among ``used``, as ``name = SQL``."""
        out: list[str] = []
        for projection in select.expressions:
            if _is_star(projection):
                continue
            name = projection.alias_or_name
            inner = projection.this if isinstance(projection, exp.Alias) else projection
            if (used is not None and name.lower() not in used) or (
                    isinstance(inner, exp.Column) and inner.name.lower() == name.lower()):
                continue
            out.append(self._named(name, inner, self.sql(inner)))
        return out

    def set_operation(self, node: exp.SetOperation, used: set[str] | None, depth: int,
                      differing: bool = False) -> Rows:
        """A UNION (EXCEPT, INTERSECT) as its parts, each with its filters and, for each
        column used, its own expression where a part's is not the plain column
        (``differing``: only where the parts differ, the result's own columns being said
        beside). A term every part has is said once."""
        op = _OPS.get(type(node), "UNION") + ("" if node.args.get("distinct") else " ALL")
        op += " BY NAME" if node.args.get("by_name") else ""

        def flat(part: exp.Expression) -> list[exp.Expression]:
            inner = _unwrapped(part)
            if (type(inner) is type(node) and inner.args.get("distinct") == node.args.get("distinct")
                    and inner.args.get("by_name") == node.args.get("by_name")
                    and (inner is node or not inner.args.get("limit"))):
                return [*flat(inner.left), *flat(inner.right)]
            return [inner]

        nodes = flat(node)
        parts = [self.body(p, set(), depth + 1) for p in nodes]
        selects = [p for p in nodes if isinstance(p, exp.Select)]
        widths = {len(s.expressions) for s in selects}
        starred = any(_is_star(p) for s in selects for p in s.expressions)
        if len(selects) == len(nodes) and len(widths) == 1 and not starred:
            for n, first in enumerate(selects[0].expressions):
                name = first.alias_or_name
                exprs = [s.expressions[n].this if isinstance(s.expressions[n], exp.Alias) else s.expressions[n]
                         for s in selects]
                if used is not None and name.lower() not in used:
                    continue
                if all(isinstance(e, exp.Column) and e.name.lower() == name.lower() for e in exprs):
                    continue
                if differing and len({self.sql(e) for e in exprs}) == 1:
                    continue
                for rows, e in zip(parts, exprs, strict=True):
                    if not (isinstance(e, exp.Column) and e.name.lower() == name.lower()):
                        rows.columns.append(self._named(name, e, self.sql(e)))
        shared = [f for f in parts[0].filters if all(f in p.filters for p in parts[1:])] if len(parts) > 1 else []
        for rows in parts:
            rows.filters = [f for f in rows.filters if f not in shared]
        return Rows(op=op, parts=parts, filters=shared, limit=self.limit(node))

    def differing(self, node: exp.SetOperation) -> set[str]:
        """The result's columns (by the first part's names) whose expression differs between
        the parts of ``node``."""
        selects = self._selects(node)
        out: set[str] = set()
        for n, projection in enumerate(selects[0].expressions if selects else []):
            texts = {self.sql(p.this if isinstance(p, exp.Alias) else p)
                     for p in (s.expressions[n] for s in selects if n < len(s.expressions))}
            if len(texts) > 1:
                out.add(projection.alias_or_name.lower())
        return out

    def _selects(self, node: exp.Expression) -> list[exp.Select]:
        node = _unwrapped(node)
        if isinstance(node, exp.SetOperation):
            return [*self._selects(node.left), *self._selects(node.right)]
        return [node] if isinstance(node, exp.Select) else []

    # ------------------------------------------------------------------ what is used
    def _used(self, reader: exp.Select, name: str, body: exp.Expression) -> set[str] | None:
        """The columns of the relation ``name`` that ``reader`` uses outside its ORDER BY:
        qualified by ``name``, or unqualified when it is the only relation read; ``None``
        (all) for a ``*``. A query whose description gives the relation's grouping and
        measures (``SELECT * FROM monthly``) uses none by re-selecting them."""
        from_ = reader.args.get("from_") or reader.args.get("from")
        lone = from_ is not None and not reader.args.get("joins")
        lifted = id(_unwrapped(body)) in self.lifted
        used: set[str] = set()
        for key, value in reader.args.items():
            if key in ("order", "with", "with_", "limit", "offset", "from", "from_"):
                continue
            for item in value if isinstance(value, list) else [value]:
                if not isinstance(item, exp.Expression):
                    continue
                if key == "expressions" and lifted and (_is_star(item) or isinstance(
                        item.this if isinstance(item, exp.Alias) else item, exp.Column)):
                    continue
                if key == "expressions" and _is_star(item):
                    inner = item.this if isinstance(item, exp.Alias) else item
                    if isinstance(inner, exp.Star) or inner.table.lower() == name.lower():
                        return None
                    continue
                for column in item.walk(prune=lambda n: isinstance(n, exp.With) or _derived(n)):
                    if isinstance(column, exp.Column) and (
                            column.table.lower() == name.lower() or (not column.table and lone)):
                        used.add(column.name.lower())
        return used

    def also(self, tree: exp.Expression) -> list[Relation]:
        """The CTEs read only inside an expression (``x IN (SELECT a FROM jfk)``), each
        with what it reads: their filters are part of what that expression means."""
        out: list[Relation] = []
        roots = [tree, *(self.ctes[n] for n in self.said if n in self.ctes)]
        while roots:
            root = roots.pop(0)
            for node in root.walk(prune=lambda n: isinstance(n, exp.With)):
                if isinstance(node, exp.Table) and not node.args.get("db") and node.name.lower() in self.ctes:
                    name = node.name.lower()
                    if name not in self.said:
                        self.said.add(name)
                        out.append(Relation(name=node.name, body=self.body(self.ctes[name], None, 1)))
                        roots.append(self.ctes[name])
        return out


def _uncast(node: exp.Expression) -> exp.Expression:
    """The column under a cast (``CAST(t AS TIMESTAMP)``, ``t::DATE``); ``node`` otherwise."""
    while isinstance(node, exp.Cast | exp.TryCast):
        node = node.this
    return node


__all__ = ["Lineage"]
