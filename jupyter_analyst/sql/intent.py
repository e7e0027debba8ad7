"""The data-intent note: what a query fetched, in a few structured lines.

After every successful query the agent keeps a short note (source tables, filters, grouping
keys, measures, row count, time range) that later Python steps and "continue" turns see, so
the model knows what a dataset *means* without re-reading its SQL or its rows. Everything
comes from the parsed query (``shape.py``) and the result file; nothing is guessed, and a
note that had to be shortened says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from pydantic import BaseModel, Field

from .._text import how_many
from .query_model import ELIDED, QueryShape, Relation, Rows

#: The most characters a description takes (every prompt lists the thread's datasets).
LINE_CHARS = 480
#: A line that no cut of whole parts brings within its budget is kept whole up to this many
#: times the budget (a UNION of CTEs with its columns mapped says more than a plain query).
OVER = 1.5
#: Where the whole query is, when its description was shortened: ``find`` is offered on every
#: call of every turn (``list_artifacts`` only once a thread has artifacts). The dataset's
#: name, when given, goes after ``find``, outside the line's budget (a long name does not cost
#: the description a term).
FULL_SQL_HINT = "full SQL: find with_code=true"
#: Filters are never left out below this many (past it, the line says how many more).
FILTERS_KEPT = 3
#: Of a CTE's, subquery's or set operation part's own filters, the fewest kept.
INNER_KEPT = 1
#: Of a set operation's parts, the fewest kept (past them, the line says how many more).
PARTS_KEPT = 3


class DataIntent(BaseModel):
    """What one dataset holds, as far as its query and its rows say."""

    tables: list[str]
    source: Rows | None = None
    """What the rows are read from (``flights LEFT JOIN planes ON tailnum``): a left join
    keeps the rows that match nothing, with NULLs; a CTE or subquery is said with what it
    reads and its own filters (``summer [flights where origin = 'JFK']``)."""
    also: list[Relation] = []
    """CTEs read only inside an expression of the query, with what they read."""
    measures: list[str] = []
    """Aggregates, as ``name = SQL``."""
    dimensions: list[str] = []
    """What the rows are grouped by (or the plain columns when nothing is aggregated)."""
    filters: list[str] = []
    """Every condition that limits the result's rows (WHERE, HAVING, one-sided inner join
    conditions), one per AND-ed term; those of what it reads are in ``source``."""
    having: list[str] = []
    """Its HAVING terms: which groups are kept, by the measures' names."""
    limit: str = ""
    """What the query's LIMIT keeps (``first 10 by n DESC``)."""
    rows: int
    time_range: dict[str, list[str]] = {}
    """For each date or time column of the result: its first and last value."""
    defined: dict[str, str] = Field(default={}, exclude=True)
    """Measures named only because a bracket defines them: their definitions, said where
    the brackets are elided."""
    brief: dict[str, str] = Field(default={}, exclude=True)
    """Short forms of long terms (whole sub-expressions elided), for :meth:`line`."""

    def ranges(self) -> list[tuple[str, list[str]]]:
        """The time ranges the note says: of the columns it names (an aggregate query's
        measures and keys; all, when its columns are the rows' own), never of a column the
        note does not name (``current_date AS today`` beside the measures).

        >>> DataIntent(tables=["t"], measures=["last = MAX(d)"], rows=1,
        ...            time_range={"today": ["2026-12-04", "2026-12-04"], "last": ["2025-12-31", "2025-12-31"]}).ranges()
        [('last', ['2025-12-31', '2025-12-31'])]
        """
        if not self.measures:
            return list(self.time_range.items())
        named = {term.split(" = ", 1)[0].strip().rsplit(".", 1)[-1].strip('"') for term in
                 (*self.measures, *self.dimensions)}
        return [(column, span) for column, span in self.time_range.items() if column in named]

    def line(self, budget: int = LINE_CHARS, name: str = "", *, ranges: bool = True) -> str:
        """The note in one line of at most ``budget`` characters (where whole parts allow), for prompts.

        What does not fit is shortened by whole parts, never cut inside an expression, in
        this order: long expressions elided to their outline, keeping a measure's comparisons
        where they fit (``AVG(CASE WHEN dep_delay <= 15 THEN … ELSE … END)``), time ranges
        left out, filters elided (the result's, then those of
        what it reads), the result's filters past the first :data:`FILTERS_KEPT` left out
        (counted), those of each CTE, subquery or part past the first :data:`INNER_KEPT`
        (counted), the joins' conditions, a set operation's parts past :data:`PARTS_KEPT`
        (counted), what CTEs and subqueries read (only for a line still far over its
        budget: see :data:`OVER`), and only for a line still far over its budget, measures
        and keys named only, then measures and keys left out from the last (counted): a measure's
        definition is what a later question is answered from. A join's keys are never cut.
        The line then says that it was cut and where the SQL is (``find`` with the dataset's
        ``name``). The first filters and the columns' names stay longest:
        a dataset that looks whole but is not, or whose columns are not known, is the costly
        mistake.

        >>> DataIntent(tables=["orders"], measures=["revenue = SUM(amount)"], dimensions=["region"], rows=4).line()
        'from orders; measures: revenue = SUM(amount); by: region; 4 rows'
        >>> long = "cancelled = SUM(CASE WHEN dep_time IS NULL AND arr_time IS NULL THEN 1 ELSE 0 END)"
        >>> DataIntent(tables=["flights"], measures=["n = COUNT(*)", long], filters=["month IN (1, 2, 3)"],
        ...            brief={long: "cancelled = SUM(CASE WHEN … THEN 1 ELSE 0 END)"}, rows=3).line(150)
        'from flights; measures: n = COUNT(*), cancelled = SUM(CASE WHEN dep_time IS NULL AND arr_time IS NULL THEN 1 ELSE 0 END); where: month IN (1, 2, 3); 3 rows'
        >>> DataIntent(tables=["flights"], measures=["n = COUNT(*)", long], filters=["month IN (1, 2, 3)"],
        ...            brief={long: "cancelled = SUM(CASE WHEN … THEN 1 ELSE 0 END)"}, rows=3).line(90, "q1")
        'from flights; measures: n = COUNT(*), cancelled; where: month IN (1, 2, 3); 3 rows; shortened to fit (full SQL: find "q1" with_code=true)'

        ``ranges=False``: without the time ranges, for where the rows are shown beside it. A
        range of one value (a single row's) is said as that value.

        >>> one = DataIntent(tables=["t"], measures=["last = MAX(d)"], rows=1, time_range={"last": ["2025-12-31"] * 2})
        >>> one.line(), one.line(ranges=False)
        ('from t; measures: last = MAX(d); 1 row; last 2025-12-31', 'from t; measures: last = MAX(d); 1 row')
        """
        named = f" {json.dumps(name, ensure_ascii=False)}" if name else ""
        return _Fitting(self, named, ranges=ranges).line(budget + len(named))


class _Fitting:
    """One description being shortened to a budget, a whole part at a time."""

    def __init__(self, intent: DataIntent, name: str = "", *, ranges: bool = True) -> None:
        self.intent = intent
        self.name = name
        self.ranges = intent.ranges() if ranges else []
        # Per term shown: 0 whole, 1 its short form, 2 its name only; terms past the list's
        # length are left out.
        self.measures = [0] * len(intent.measures)
        self.dimensions = [0] * len(intent.dimensions)
        self.filters = [0] * len(intent.filters)
        self.times = len(self.ranges)
        # What is read: 0 whole, 1 its terms in short form, 2 past INNER_KEPT filters of each
        # relation counted, 3 without the joins' conditions, 4 past PARTS_KEPT parts of a set
        # operation counted, 5 CTEs and subqueries by their names only.
        self.inner = 0
        self.elided = False
        self.saying_cut = False
        self.budget = LINE_CHARS

    def _term(self, text: str, level: int) -> str:
        if level == 0:
            return text
        short = self.intent.brief.get(text, text)
        return short if level == 1 else short.split(" = ", 1)[0]

    def _shown(self, texts: list[str], levels: list[int]) -> list[str]:
        return [self._term(t, level) for t, level in zip(texts, levels, strict=False)]

    # ------------------------------------------------------------------ what is read
    def _inner(self, texts: list[str]) -> list[str]:
        return [self._term(t, 1 if self.inner else 0) for t in texts]

    def _conditions(self, texts: list[str]) -> str:
        shown = self._inner(texts)
        if self.inner >= 2 and len(shown) > INNER_KEPT:
            return " AND ".join(shown[:INNER_KEPT]) + f" AND {len(shown) - INNER_KEPT} more"
        return " AND ".join(shown)

    def _rows(self, rows: Rows) -> str:
        if rows.op:
            parts = [f"({self._rows(p)})" for p in rows.parts]
            if self.inner >= 4 and len(parts) > PARTS_KEPT:
                parts[PARTS_KEPT:] = [f"{len(parts) - PARTS_KEPT} more parts"]
            # A union's parts are alike; EXCEPT and INTERSECT say which part is which.
            text = (f"{rows.op} of " + " and ".join(parts) if rows.op.startswith("UNION")
                    else f" {rows.op} ".join(parts))
            if rows.filters:
                text += f", each where {self._conditions(rows.filters)}"
        else:
            text = " ".join(self._relation(r) for r in rows.reads) or "(no table)"
            if rows.filters:
                text += f" where {self._conditions(rows.filters)}"
            if rows.keys:
                text += " by " + ", ".join(self._inner(rows.keys))
            if rows.having:
                text += f" having {self._conditions(rows.having)}"
            if rows.distinct:
                text += f", {rows.distinct}"
        if rows.limit:
            text += f", {rows.limit}"
        if rows.columns:
            text += "; " + ", ".join(self._inner(rows.columns))
        return text

    def _relation(self, relation: Relation) -> str:
        text = f"{relation.join} {relation.name}" if relation.join else relation.name
        if relation.body is not None:
            text += f" [{self._rows(relation.body) if self.inner < 5 else ELIDED}]"
        # Past level 3 the join's other conditions go; its keys stay (a join said without
        # them reads as a cross join).
        on = relation.on if self.inner < 3 else relation.keys
        if on:
            text += f" {on}" if on.startswith("USING (") else f" ON {on}"
        return text

    def render(self) -> str:
        i = self.intent
        parts = [f"from {self._rows(i.source) if i.source is not None else ', '.join(i.tables) or '(no table)'}"]
        if i.also:
            parts.append("with " + ", ".join(self._relation(r) for r in i.also))
        # Without a measure nothing is aggregated by them: they are the rows' own columns.
        keys = "by" if i.measures else "columns"
        for label, texts, levels in (("measures", i.measures, self.measures), (keys, i.dimensions, self.dimensions)):
            if texts:
                more = len(texts) - len(levels)
                shown = self._shown(texts, levels)
                if label == "measures" and self.inner >= 5:
                    # The brackets that define them are elided: the definitions come here.
                    shown = [self._term(i.defined[t], 1) if t in i.defined else t for t in shown]
                parts.append(f"{label}: " + (", ".join(shown) + (f", {more} more" if more else "") if shown
                                             else f"{more} left out"))
        if i.filters:
            more = len(i.filters) - len(self.filters)
            # A measure's own FILTER said whole in its definition is not said again here.
            defined = dict(zip([m.split(" = ", 1)[0] for m in i.measures], self._shown(i.measures, self.measures),
                               strict=False))
            shown = [f for f in self._shown(i.filters, self.filters) if not _repeats(f, defined)]
            if shown or more:
                parts.append("where: " + " AND ".join(shown) + (f" AND {more} more" if more else ""))
        if i.having:
            parts.append("having: " + " AND ".join(i.having))  # few, and each says which groups are kept
        if i.limit:
            parts.append(i.limit)
        parts.append(how_many(i.rows, "row"))
        for column, (first, last) in self.ranges[: self.times]:
            parts.append(f"{column} {first}" if first == last else f"{column} {first} .. {last}")
        if self.saying_cut or self.cut():
            parts.append(f"shortened to fit ({FULL_SQL_HINT.replace('find', 'find' + self.name, 1)})")
        return "; ".join(parts)

    def cut(self) -> bool:
        """Whether anything was shortened or left out."""
        i = self.intent
        return (self.elided or self.inner > 0 or self.times < len(self.ranges) or len(self.measures) < len(i.measures)
                or len(self.dimensions) < len(i.dimensions) or len(self.filters) < len(i.filters))

    def _state(self) -> tuple[list[int], list[int], list[int], int, bool, int]:
        return list(self.measures), list(self.dimensions), list(self.filters), self.times, self.elided, self.inner

    def _restore(self, state: tuple[list[int], list[int], list[int], int, bool, int]) -> None:
        self.measures[:], self.dimensions[:], self.filters[:] = state[0], state[1], state[2]
        self.times, self.elided, self.inner = state[3], state[4], state[5]

    def _shorten(self, levels: list[int], texts: list[str], level: int) -> bool:
        """Shorten the last term not yet at ``level`` whose text that changes; whether one was."""
        for n in range(len(levels) - 1, -1, -1):
            if levels[n] < level and self._term(texts[n], level) != self._term(texts[n], levels[n]):
                levels[n] = level
                self.elided = True
                return True
        return False

    def _regain(self, budget: int) -> str:
        """The line with each cut taken back, the first terms first, where it still fits: a
        later, larger cut may have made an earlier one needless."""
        text = self.render()
        for levels in (self.filters, self.measures, self.dimensions):
            for n in range(len(levels)):
                while levels[n] > 0:
                    levels[n] -= 1
                    wider = self.render()
                    if len(wider) > budget:
                        levels[n] += 1
                        break
                    text = wider
        while self.inner > 0:
            self.inner -= 1
            wider = self.render()
            if len(wider) > budget:
                self.inner += 1
                break
            text = wider
        self.elided = any(level > 0 for level in (*self.measures, *self.dimensions, *self.filters))
        return text

    def _fewer_times(self) -> bool:
        if self.times:
            self.times -= 1
            return True
        return False

    def _inner_to(self, level: int) -> bool:
        """What is read said at ``level``; whether that changes the line."""
        if self.inner >= level:
            return False
        before = self.render()
        was, self.inner = self.inner, level
        if self.render() == before:
            self.inner = was
            return False
        return True

    def _moves(self) -> Iterator[Callable[[], bool]]:
        """The cuts, in order. Measures and keys keep their names (the dataset's columns, what
        a later step reads) until everything else that can go has gone: filters past the
        first few (the line says how many more), then the joins' keys and conditions."""
        i = self.intent
        # A measure's definition is what a later question ("what counts as on time?") is
        # answered from: it is shortened (keeping its comparisons), never dropped, unless the
        # line is still far over its budget once everything else has gone.
        far = lambda: len(self.render()) > self.budget * OVER  # noqa: E731
        yield lambda: self._shorten(self.measures, i.measures, 1)
        yield lambda: self._shorten(self.dimensions, i.dimensions, 1)
        yield self._fewer_times
        yield lambda: self._shorten(self.filters, i.filters, 1)
        yield lambda: self._inner_to(1)
        yield lambda: len(self.filters) > FILTERS_KEPT and self.filters.pop() >= 0
        yield lambda: self._inner_to(2)
        yield lambda: self._inner_to(3)
        yield lambda: self._inner_to(4)
        # What the CTEs read goes only from a line still far over its budget.
        yield lambda: far() and self._inner_to(5)
        yield lambda: far() and self._shorten(self.measures, i.measures, 2)
        yield lambda: far() and self._shorten(self.dimensions, i.dimensions, 2)
        for levels in (self.measures, self.dimensions):
            yield lambda levels=levels: far() and bool(levels) and levels.pop() >= 0  # type: ignore[misc]

    #: The moves that leave terms out: taken only where they bring the line within its budget.
    LAST = 2

    def line(self, budget: int) -> str:
        self.budget = budget
        whole = text = self.render()
        # A line over its budget will say that it was cut: each cut is weighed with that said.
        self.saying_cut = len(text) > budget
        text = self.render()
        moves = list(self._moves())
        for n, move in enumerate(moves):
            if n == len(moves) - self.LAST:
                named, named_text = self._state(), text
            before, start = self._state(), text
            while len(text) > budget and move():
                text = self.render()
            if len(text) > len(start):  # what this cut saves costs less than saying it was cut
                self._restore(before)
                text = start
        if len(text) > budget:  # a column is left out only where that makes the line fit
            self._restore(named)
            text = named_text
        else:
            text = self._regain(budget)
        if self.saying_cut and not self.cut():
            self.saying_cut = False  # nothing could be cut: the line is whole
            text = self.render()
        if len(text) > budget and len(whole) <= budget * OVER:
            # No whole parts could be cut to fit: a line a little long is kept whole rather
            # than losing what its columns are for a few characters.
            return whole
        return text


def _repeats(condition: str, measures: dict[str, str]) -> bool:
    """Whether ``condition`` is a measure's own filter (``x > 0 (in m only)``) that the
    measure's definition, as shown, already says whole (``FILTER(WHERE x > 0)``)."""
    if not condition.endswith(" only)") or " (in " not in condition:
        return False
    term, name = condition[: -len(" only)")].rsplit(" (in ", 1)
    shown = measures.get(name, "")
    return f"FILTER(WHERE {term})" in shown or f"FILTER(WHERE {term} AND" in shown or f" AND {term})" in shown


def data_intent(
    shape: QueryShape, *, tables: list[str], rows: int, time_range: dict[str, list[str]] | None = None
) -> DataIntent:
    """The note for a query of this shape that returned ``rows`` rows.

    >>> shape = QueryShape(measures=["total = SUM(amount)"], dimensions=["region"], filters=["year = 2024"])
    >>> data_intent(shape, tables=["orders"], rows=3).line()
    'from orders; measures: total = SUM(amount); by: region; where: year = 2024; 3 rows'
    """
    return DataIntent(
        tables=tables, source=shape.source, also=shape.also, measures=shape.measures, dimensions=shape.dimensions,
        filters=shape.filters, having=shape.having, limit=shape.limit, rows=rows, time_range=time_range or {}, brief=shape.brief,
        defined=shape.defined,
    )


__all__ = ["DataIntent", "data_intent"]
