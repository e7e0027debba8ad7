"""The source as the model's system message outlines it: which tables are listed, their
row counts, and notes on columns a model would misread.

The schema section of every prompt lists the source's tables and their columns; a source
with more tables than it lists is browsed through ``list_tables`` (only then offered to the
model) or ``find``. Beside the names and types, the host derives what it can state as fact,
reading the data through the source's own sealed engine, each look-up under a time limit:

* each table's exact row count (``count(*)``; a table not counted in time shows none), or,
  for a table past ``EXACT_COUNT_MAX`` rows by the engine's catalogue estimate, the estimate
  said as one (counting would read the table whole; its ranges are not read either);
* the source's size class (:func:`size_class`), which the model is told with the rule that
  large data is aggregated in SQL;
* text columns whose first values are all dates or timestamps (a ``VARCHAR`` ``time_hour``),
  with one of those values, so the model casts before it compares;
* columns that share a name across tables but not their values (``planes.year``, a build
  year from 1956, beside ``flights.year``, always 2013), or not their kind of type.

Nothing is guessed: what could not be read in time is left out, and the notes say what was
seen (the first rows; the ranges), not what a column means. The outline is read once per
data version of the source; a live database's is read again after :data:`LIVE_TTL_S` and
says when it was counted.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from .source_engine import uncounted

#: How many tables of the source the system message lists.
OUTLINE_TABLES = 40
#: How many columns per table it lists.
OUTLINE_COLUMNS = 40
#: The longest one look-up may take (seconds); past it, its figure is left out.
PROBE_TIMEOUT_S = 2.0
#: All look-ups of one outline together (seconds); tables past it get no figures.
OUTLINE_BUDGET_S = 6.0
#: Rows read from the top of a table to tell what its text columns hold.
SAMPLE_ROWS = 100
#: The longest text read as a date or timestamp (``2013-01-01T05:00:00.000000+05:30`` is 32).
LONGEST_DATE = 40
#: How long a live database's outline is kept before it is read again (seconds).
LIVE_TTL_S = 300.0
#: Same-named columns are noted when two tables' ranges overlap less than this share of
#: their union (``hour`` 0-23 beside 1-23 is the same thing; ``year`` 2013 beside 1956-2013 is not).
OVERLAP = 0.5
#: The most notes on same-named columns.
SHARED_NOTES = 8

_TEXT = re.compile(r"char|text|string|clob", re.I)
_NUMBER = re.compile(r"int|float|double|real|decimal|numeric|number|money|serial", re.I)
_TEMPORAL = re.compile(r"date|time", re.I)
_DATE_TEXT = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2}|\d{4}/\d{2}/\d{2}|\d{1,2}/\d{1,2}/\d{4})"
    r"(?P<time>[ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?\s*(Z|[+-]\d{2}(:?\d{2})?|UTC)?)?"
)


class ColumnRange(BaseModel):
    """The smallest and largest value of a column, as text, and as numbers to compare."""

    low: str
    high: str
    low_value: float
    high_value: float


class TableOutline(BaseModel):
    """What was read of one table."""

    rows: int | None = None
    """Its exact row count (or the engine's estimate: ``estimated``); ``None`` when it was not
    counted in time."""
    estimated: bool = False
    """Whether ``rows`` is the engine's catalogue estimate (past ``EXACT_COUNT_MAX``)."""
    date_text: dict[str, str] = {}
    """Text columns whose first non-null values are all dates or timestamps: one of them."""
    times: dict[str, str] = {}
    """Which of those hold times of day too (``"timestamps"``) or only dates (``"dates"``)."""
    ranges: dict[str, ColumnRange] = {}
    """Of the columns whose name another table shares: their range."""


class SourceOutline(BaseModel):
    """The tables the system message lists, with what was read of them."""

    tables: dict[str, TableOutline] = {}
    shared: list[str] = []
    """One line per name shared across tables with different values or kinds of type."""
    counted_at: str | None = None
    """For a live database, when its tables were counted (``HH:MM UTC``)."""
    size: str = "unknown"
    """Its size class (:func:`size_class`): ``small``, ``medium``, ``large`` or ``unknown``."""
    largest: int | None = None
    """The rows of its largest table, as counted or estimated."""


#: Under this many rows in its largest table, a source is ``small``.
SMALL_ROWS = 100_000
#: From this many rows in its largest table, a source is ``large``.
LARGE_ROWS = 10_000_000


def size_class(tables: dict[str, TableOutline], listed: int) -> str:
    """A source's size class by its largest table: ``small`` (under 100,000 rows), ``medium``,
    ``large`` (10,000,000 or more), or ``unknown`` when a table whose rows could decide it was not
    counted cheaply (not all ``listed`` tables were read, or one was not counted in time).

    >>> t = lambda n: TableOutline(rows=n)
    >>> [size_class({"a": t(50), "b": t(2_000)}, 2), size_class({"a": t(200_000)}, 1),
    ...  size_class({"a": t(12_000_000), "b": TableOutline()}, 2), size_class({"a": t(5), "b": TableOutline()}, 2),
    ...  size_class({}, 0)]
    ['small', 'medium', 'large', 'unknown', 'unknown']
    """
    known = [t.rows for t in tables.values() if t.rows is not None]
    largest = max(known, default=None)
    if largest is not None and largest >= LARGE_ROWS:
        return "large"
    if largest is None or len(known) < max(listed, len(tables)):
        return "unknown"
    return "small" if largest < SMALL_ROWS else "medium"


def kind_of(type_name: str) -> str:
    """The kind of a column's type: ``text``, ``number``, ``time`` or ``other``.

    >>> [kind_of(t) for t in ("VARCHAR", "BIGINT", "TIMESTAMP WITH TIME ZONE", "BLOB")]
    ['text', 'number', 'time', 'other']
    """
    if _TEMPORAL.search(type_name) and not _TEXT.search(type_name):
        return "time"
    if _NUMBER.search(type_name):
        return "number"
    if _TEXT.search(type_name):
        return "text"
    return "other"


def date_text(values: Sequence[Any]) -> str | None:
    """What a text column's sampled values hold, when every one is a date (``"dates"``) or
    a timestamp (``"timestamps"``); ``None`` otherwise or when there is none.

    >>> date_text(["2013-01-01 05:00:00", "2013-01-01 06:00:00", None])
    'timestamps'
    >>> date_text(["2013-01-01", "12/31/2013"]), date_text(["2013-01-01", "soon"]), date_text([None])
    ('dates', None, None)
    """
    seen = [v for v in values if v is not None]
    if not seen or not all(isinstance(v, str) and _DATE_TEXT.fullmatch(v.strip()) for v in seen):
        return None
    return "timestamps" if any(_DATE_TEXT.fullmatch(v.strip()).group("time") for v in seen) else "dates"  # type: ignore[union-attr]


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float | decimal.Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).timestamp()
    if isinstance(value, dt.date):
        return float(value.toordinal()) * 86_400
    return None


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def overlap(a: ColumnRange, b: ColumnRange) -> float:
    """How much two ranges share, as a share of their union (1: the same range).

    >>> r = lambda lo, hi: ColumnRange(low=str(lo), high=str(hi), low_value=lo, high_value=hi)
    >>> overlap(r(2013, 2013), r(1956, 2013)), overlap(r(0, 23), r(1, 23)) > 0.9, overlap(r(5, 5), r(5, 5))
    (0.0, True, 1.0)
    """
    union = max(a.high_value, b.high_value) - min(a.low_value, b.low_value)
    if union == 0:
        return 1.0
    return max(0.0, min(a.high_value, b.high_value) - max(a.low_value, b.low_value)) / union


#: How a note on a column name that tables share but do not mean alike begins.
DIFFERS = "differs between tables (check before joining on it): "


def shared_notes(schema: dict[str, dict[str, str]], tables: dict[str, TableOutline]) -> list[str]:
    """One line per column name that several tables share with different kinds of type or
    ranges that barely overlap.

    >>> r = lambda lo, hi: ColumnRange(low=str(lo), high=str(hi), low_value=lo, high_value=hi)
    >>> schema = {"flights": {"year": "BIGINT"}, "planes": {"year": "BIGINT"}}
    >>> shared_notes(schema, {"flights": TableOutline(ranges={"year": r(2013, 2013)}),
    ...                       "planes": TableOutline(ranges={"year": r(1956, 2013)})})
    ['year differs between tables (check before joining on it): flights.year 2013..2013; planes.year 1956..2013']
    >>> shared_notes({"a": {"id": "INTEGER"}, "b": {"id": "VARCHAR"}}, {})
    ['id differs between tables (check before joining on it): a.id INTEGER; b.id VARCHAR']
    """
    notes: list[str] = []
    for name, owners in _shared_names(schema).items():
        kinds = {kind_of(schema[t][c]) for t, c in owners}
        if len(kinds) > 1:
            notes.append(f"{name} {DIFFERS}" + "; ".join(f"{t}.{c} {schema[t][c]}" for t, c in owners))
            continue
        ranges = [(t, c, tables[t].ranges[c]) for t, c in owners if t in tables and c in tables[t].ranges]
        apart = any(overlap(a[2], b[2]) < OVERLAP for i, a in enumerate(ranges) for b in ranges[i + 1:])
        if apart:
            notes.append(f"{name} {DIFFERS}" + "; ".join(f"{t}.{c} {r.low}..{r.high}" for t, c, r in ranges))
    return notes[:SHARED_NOTES]


def _shared_names(schema: dict[str, dict[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """Column names (case-blind) held by more than one table: each table and its column."""
    owners: dict[str, list[tuple[str, str]]] = {}
    for table, columns in schema.items():
        for column in columns:
            owners.setdefault(column.lower(), []).append((table, column))
    return {name: found for name, found in owners.items() if len(found) > 1}


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# ---------------------------------------------------------------------- reading the source


def probe(source: Any, sql: str, timeout_s: float = PROBE_TIMEOUT_S) -> list[tuple[Any, ...]] | None:
    """The rows of a host-written look-up, run by the source's own sealed engine and stopped
    in the engine past ``timeout_s``; ``None`` when it failed, took too long, or the source's
    engine has no quick look-ups (``SourceEngine.probe``)."""
    look = getattr(source, "probe", None)
    return look(sql, timeout_s) if look is not None else None


def read_outline(source: Any, schema: dict[str, dict[str, str]], *, budget_s: float = OUTLINE_BUDGET_S) -> SourceOutline:
    """What the host can state about the listed tables of ``source`` (see the module's doc)."""
    deadline = time.monotonic() + budget_s
    shared = {c for owners in _shared_names(schema).values() for c in owners}
    tables: dict[str, TableOutline] = {}
    estimates = _estimates(source)
    for table, columns in list(schema.items())[:OUTLINE_TABLES]:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        outline = TableOutline()
        ranged = [c for c, t in columns.items() if (table, c) in shared and kind_of(t) in ("number", "time")]
        parts = ["count(*)"] + [f"min({_quoted(c)}), max({_quoted(c)})" for c in ranged]
        estimate = uncounted(estimates, table)
        if estimate is not None:  # counting (and ranging) would read it whole: the estimate is said
            outline.rows, outline.estimated, row = estimate, True, None
        else:
            row = probe(source, f"SELECT {', '.join(parts)} FROM {_quoted(table)}", min(PROBE_TIMEOUT_S, left))
        if row:
            values = row[0]
            outline.rows = int(values[0])
            for n, column in enumerate(ranged):
                low, high = values[1 + 2 * n], values[2 + 2 * n]
                low_value, high_value = _as_number(low), _as_number(high)
                if low_value is not None and high_value is not None:
                    outline.ranges[column] = ColumnRange(low=_shown(low), high=_shown(high),
                                                         low_value=low_value, high_value=high_value)
        texts = [c for c, t in list(columns.items())[:OUTLINE_COLUMNS] if kind_of(t) == "text"]
        left = deadline - time.monotonic()
        if texts and left > 0:
            # Values longer than any date come back as a word: a wide text column is not
            # read whole into the host to learn that it holds no dates.
            shown = ", ".join(f"CASE WHEN length({_quoted(c)}) <= {LONGEST_DATE} THEN {_quoted(c)} ELSE 'text' END"
                              for c in texts)
            rows = probe(source, f"SELECT {shown} FROM {_quoted(table)} LIMIT {SAMPLE_ROWS}", min(PROBE_TIMEOUT_S, left))
            for n, column in enumerate(texts):
                values = [r[n] for r in rows or ()]
                held = date_text(values)
                if held is not None:
                    outline.date_text[column] = next(str(v).strip() for v in values if v is not None)
                    outline.times[column] = held
        tables[table] = outline
    listed = min(len(schema), OUTLINE_TABLES)
    largest = max((t.rows for t in tables.values() if t.rows is not None), default=None)
    return SourceOutline(tables=tables, shared=shared_notes(schema, tables), size=size_class(tables, listed),
                         largest=largest)


def _estimates(source: Any) -> dict[str, int]:
    """The source engine's catalogue estimates (none where it has no such method)."""
    read = getattr(source, "row_estimates", None)
    try:
        return read() if read is not None else {}
    except Exception:  # noqa: BLE001 - an engine error: no estimates, the tables are counted
        return {}


_CACHE: weakref.WeakKeyDictionary[Any, tuple[str, float, SourceOutline]] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def source_outline(source: Any) -> SourceOutline:
    """The outline of ``source``'s listed tables, read once per data version of it (a live
    database's again after :data:`LIVE_TTL_S`, saying when it was counted). Blocking: call
    it off the event loop."""
    version = source.data_version()
    live = version.endswith(":live")
    now = time.monotonic()
    with _CACHE_LOCK:
        cached = _CACHE.get(source)
    if cached is not None and cached[0] == version and not (live and now - cached[1] > LIVE_TTL_S):
        return cached[2]
    outline = read_outline(source, source.schema())
    if live:
        outline.counted_at = dt.datetime.now(dt.UTC).strftime("%H:%M UTC")
    with _CACHE_LOCK:
        _CACHE[source] = (version, now, outline)
    return outline
