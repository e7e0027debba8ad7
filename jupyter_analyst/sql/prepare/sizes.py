"""The size of the values a query builds: refused, or checked as it runs, past a cap.

An engine's memory limit bounds what it keeps in its buffers, not one value a function
builds: ``SELECT length(repeat('x', 1200000000))`` took a DuckDB limited to 256 MB to
2.3 GB of resident memory, and ``len(range(0, 20000000))`` to 1.7 GB. Worse, DuckDB computes
a function on 2,048 rows at a time, so a value of 1 MB built per row held 2 GB at once
(measured in a subprocess's VmHWM). So the functions whose output size an argument sets, or
that multiply their input, build at most :data:`MAX_VALUE_CHARS` characters (strings,
blobs) or :data:`MAX_LIST_ITEMS` items (lists) per value: 2,048 rows of such values stay in
the hundreds of megabytes (64 KiB per row over 200,000 rows peaked at 200 MB).

* A size that is a constant (literals, with arithmetic and casts: ``2e9``, ``10*1e8``,
  ``CAST(1200000000 AS BIGINT)``; a nested builder's own size: ``repeat(repeat('x', 1e4),
  1e4)``) is judged here, before anything runs: over the cap, the query is refused
  (``sql_value_too_large``).
* A size read from the data (a column, a subquery, an expression) is checked as the query
  runs on DuckDB: the executable text (never the canonical one fingerprints are taken of)
  wraps the size argument in ``CASE WHEN <size> > <cap> THEN error('...') ELSE <size> END``,
  which fails the query before the value is built. Other engines have no such check
  (PostgreSQL folds an erroring branch when it plans; SQLite has no ``error()``), so there a
  size must be a constant. SQLite's connections also build no value past 16 MiB at all
  (``SQLITE_MAX_VALUE_BYTES`` in ``sealed.py``): what no size names, ``s || s`` nested, fails there.

Aggregates that build one value (``string_agg``, ``list``, ``array_agg``, ``histogram``,
``json_group_array``) grow with their rows, which the engine's memory limit and the row cap
bound; DuckDB caps ``bar``'s width at 1,000 itself; ``concat``, ``||``, ``list_value`` and
SQLite's ``char`` add up operands the query's text spells out, each bounded here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlglot import exp

from ...errors import SqlRejected
from .functions import _in_table_position, called_names
from .preparation import Preparation

#: Characters (or bytes) one call may build into one value.
MAX_VALUE_CHARS = 64 * 1024
#: Items one call may build into one list.
MAX_LIST_ITEMS = 10_000
#: Size-setting calls nested in each other's operands, at most: each level's runtime check
#: spells out the sizes of those inside it.
MAX_NESTED = 3
#: A separator or replacement this short grows its input at most this many times: no check.
_SHORT = 16


@dataclass(frozen=True)
class Bound:
    """One call's output size as SQL over its operands, the operand a runtime check wraps,
    and whether the size counts characters or list items."""

    size: exp.Expression
    operand: exp.Expression
    items: bool = False


def bound_sizes(prep: Preparation) -> Preparation:
    """The pass: refuse a call whose constant size is over the cap, and note in
    ``prep.size_checks`` the calls whose size only the running query knows (DuckDB), which
    :func:`checked` writes into the executable text.

    >>> import sqlglot
    >>> def read(sql): return Preparation(sql, schema={}, dialect="duckdb", tree=sqlglot.parse_one(sql))
    >>> len(bound_sizes(read("SELECT lpad(CAST(id AS VARCHAR), 6, '0'), repeat('-', 20) FROM t")).size_checks)
    0
    >>> bound_sizes(read("SELECT length(repeat('x', 1200000000))"))
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.SqlRejected: repeat(..., 1200000000) would build a value of ~1.2 GB; values are capped at 64 KiB (hint: build smaller values: a width or count within the cap; for a sequence of rows use the table function, FROM range(...))

    Raises:
        SqlRejected: ``sql_value_too_large``.
    """
    checks: list[exp.Func] = []
    for node in prep.tree.find_all(exp.Func):
        bound = bound_of(node, prep.dialect)
        if bound is None:
            continue
        depth = sum(1 for above in _ancestors(node) if isinstance(above, exp.Func) and bound_of(above, prep.dialect))
        if depth >= MAX_NESTED:
            raise _too_large(f"{_name(node, prep.dialect)}() is nested in {depth} other calls that set a value's "
                             f"size; at most {MAX_NESTED - 1} are checked")
        size = fold(bound.size, prep.dialect)
        if size is None:
            if prep.dialect != "duckdb":
                raise _too_large(f"{_name(node, prep.dialect)}() takes its size from the data, which this source "
                                 "cannot check as the query runs; give the size as a constant")
            checks.append(node)
        elif size > (MAX_LIST_ITEMS if bound.items else MAX_VALUE_CHARS):
            raise _too_large(_over(node, bound, size, prep.dialect))
    prep.size_checks = checks
    return prep


@contextmanager
def checked(prep: Preparation) -> Iterator[None]:
    """Within: ``prep.tree`` with the runtime checks of ``prep.size_checks`` written in;
    afterwards, the tree as it was (the canonical text is taken of it later).

    >>> import sqlglot
    >>> sql = "SELECT repeat('ab', n) FROM t"
    >>> prep = bound_sizes(Preparation(sql, schema={}, dialect="duckdb", tree=sqlglot.parse_one(sql)))
    >>> with checked(prep):
    ...     print(prep.tree.sql("duckdb"))
    SELECT REPEAT('ab', CASE WHEN (n * 2) > 65536 THEN ERROR('repeat() would build a value over 64 KiB; values built in a query are capped at 64 KiB') ELSE n END) FROM t
    >>> prep.tree.sql("duckdb")
    "SELECT REPEAT('ab', n) FROM t"
    """
    applied: list[tuple[exp.Expression, exp.Expression]] = []
    try:
        # Innermost first (reversed pre-order): an outer check copies its operands with the
        # inner checks already in them, so no copy computes an unchecked value.
        for node in reversed(prep.size_checks):
            bound = bound_of(node, prep.dialect)
            what = (f"a list over {MAX_LIST_ITEMS:,} items" if bound.items
                    else f"a value over {_human(MAX_VALUE_CHARS, True)}")
            cap = MAX_LIST_ITEMS if bound.items else MAX_VALUE_CHARS
            message = (f"{_name(node, prep.dialect)}() would build {what}; "
                       f"values built in a query are capped at {_human(MAX_VALUE_CHARS, True)}"
                       + (f" or {MAX_LIST_ITEMS:,} list items" if bound.items else ""))
            operand = bound.operand
            over = exp.GT(this=_p(bound.size.copy()), expression=exp.Literal.number(cap))
            case = exp.Case(ifs=[exp.If(this=over,
                                        true=exp.Anonymous(this="error", expressions=[exp.Literal.string(message)]))])
            operand.replace(case)
            case.set("default", operand)
            applied.append((case, operand))
        yield
    finally:
        for case, operand in reversed(applied):
            case.replace(operand)


# ------------------------------------------------------------------------------- the builders


def bound_of(node: exp.Func, dialect: str) -> Bound | None:
    """The size ``node`` builds, when it is a call whose size an argument sets or that
    multiplies its input; ``None`` for any other call."""
    if isinstance(node, exp.Anonymous):
        rule = _BY_NAME.get(str(node.name).lower())
        args = node.expressions
    else:
        rule = _BY_TYPE.get(type(node))
        args = [node.args.get(key) for key in _TYPED_ARGS.get(type(node), ())]
    if rule is None:
        return None
    return rule(node, args, dialect)


def _repeat(node: exp.Func, args: list, dialect: str) -> Bound | None:
    value, times = args
    return Bound(_mul(times, _length(value, dialect)), times)


def _pad(node: exp.Func, args: list, dialect: str) -> Bound | None:
    return Bound(args[1].copy(), args[1])


def _nth(index: int, items: bool = False, per: int = 1) -> Callable[[exp.Func, list, str], Bound | None]:
    def rule(node: exp.Func, args: list, dialect: str) -> Bound | None:
        if len(args) <= index:
            return None
        size = args[index].copy() if per == 1 else _div(args[index].copy(), exp.Literal.number(per))
        return Bound(size, args[index], items)
    return rule


def _replace(node: exp.Func, args: list, dialect: str) -> Bound | None:
    value, find, by = args
    if by is None or _grows_little(by, find) or _short_over_data(value, find, by):
        return None
    # At most one replacement per character found (per character when ``find`` is empty).
    grown = _div(_mul(_length(value, dialect), _length(by, dialect)), _at_least_one(_length(find, dialect)))
    return Bound(exp.Add(this=grown, expression=_length(value, dialect)), by)


def _regexp_replace(node: exp.Func, args: list, dialect: str) -> Bound | None:
    value, pattern, by = args
    if by is None or _short_over_data(value, pattern, by) and "\\" not in by.name and "$" not in by.name:
        return None
    # An empty match between every two characters; a group reference copies up to the input.
    size = _mul(exp.Add(this=_length(value, dialect), expression=exp.Literal.number(1)),
                exp.Add(this=_length(by, dialect), expression=exp.Literal.number(1)))
    return Bound(size, by)


def _joined(node: exp.Func, args: list, dialect: str) -> Bound | None:
    if len(args) < 2 or args[1] is None or _grows_little(args[1], None):
        return None
    return Bound(_mul(_length(args[0], dialect), _length(args[1], dialect)), args[1])


def _series(node: exp.Func, args: list, dialect: str) -> Bound | None:
    if dialect != "duckdb" or _in_table_position(node):
        return None  # rows, streamed: the engine's limits and the row cap bound them
    start, end, step = args
    start = start if start is not None else exp.Literal.number(0)
    if isinstance(step, exp.Interval):
        seconds = _interval_seconds(step)
        if seconds is None:
            raise _too_large(f"{_name(node, dialect)}()'s step {step.sql(dialect)} cannot be checked; "
                             "give it in days, hours, minutes or seconds")
        span = exp.Sub(this=_epoch(end), expression=_epoch(start))
        size = _div(exp.Abs(this=span), exp.Literal.number(seconds))
    elif step is None or fold(step, dialect) is not None:
        per = _at_least_one(step if step is not None else exp.Literal.number(1))
        size = _div(exp.Abs(this=exp.Sub(this=_p(end.copy()), expression=_p(start.copy()))), per)
    else:
        raise _too_large(f"{_name(node, dialect)}() takes its step from the data, which cannot be checked; "
                         "give the step as a constant")
    return Bound(size, end, items=True)


def _array_fill(node: exp.Func, args: list, dialect: str) -> Bound | None:
    dims = args[1] if len(args) > 1 else None
    if not isinstance(dims, exp.Array) or not dims.expressions:
        raise _too_large("array_fill()'s dimensions must be an ARRAY[...] of constants")
    size = dims.expressions[0].copy()
    for dim in dims.expressions[1:]:
        size = _mul(size, dim)
    return Bound(size, dims, items=True)


def _format(index: int) -> Callable[[exp.Func, list, str], Bound | None]:
    def rule(node: exp.Func, args: list, dialect: str) -> Bound | None:
        text = args[index] if len(args) > index else None
        if text is None:
            return None
        if not (isinstance(text, exp.Literal) and text.is_string):
            raise _too_large(f"{_name(node, dialect)}()'s format must be a string constant, "
                             "whose widths can be checked")
        widths = _widths(text.name)
        if widths is None:
            raise _too_large(f"{_name(node, dialect)}() takes a width from an argument (* or {{}}); write the width "
                             "in the format")
        return Bound(exp.Literal.number(max(widths, default=0)), text)
    return rule


#: Typed nodes: the rule, and the keys of their arguments in the order the rule reads them.
_BY_TYPE: dict[type, Callable[[exp.Func, list, str], Bound | None]] = {
    exp.Repeat: _repeat, exp.Pad: _pad, exp.Replace: _replace, exp.RegexpReplace: _regexp_replace,
    exp.ArrayToString: _joined, exp.GenerateSeries: _series, exp.ExplodingGenerateSeries: _series,
    exp.Format: _format(0),
}
_TYPED_ARGS: dict[type, tuple[str, ...]] = {
    exp.Repeat: ("this", "times"), exp.Pad: ("this", "expression"),
    exp.Replace: ("this", "expression", "replacement"), exp.RegexpReplace: ("this", "expression", "replacement"),
    exp.ArrayToString: ("this", "expression"), exp.GenerateSeries: ("start", "end", "step"),
    exp.ExplodingGenerateSeries: ("start", "end", "step"), exp.Format: ("this",),
}
#: Calls sqlglot leaves by name (their arguments in order).
_BY_NAME: dict[str, Callable[[exp.Func, list, str], Bound | None]] = {
    "repeat": lambda node, args, dialect: _repeat(node, args[:2], dialect) if len(args) >= 2 else None,
    "printf": _format(0), "format": _format(0),
    "to_base": _nth(2),  # to_base(n, radix, min_length): padded to min_length
    "bitstring": _nth(1, per=8),  # bitstring(bits, length): length bits
    "list_resize": _nth(1, items=True), "array_resize": _nth(1, items=True),
    "equi_width_bins": _nth(2, items=True),  # equi_width_bins(min, max, bin_count, nice)
    "list_string_agg": _joined, "array_to_string": _joined,
    "array_fill": _array_fill,
    "zeroblob": _nth(0), "randomblob": _nth(0),
}


# ----------------------------------------------------------------------------- sizes as SQL


def _length(value: exp.Expression | None, dialect: str) -> exp.Expression:
    """The length of ``value`` as SQL: a constant's own, a builder's size, or the length of
    its text (characters of a string, at least the bytes of a blob and the items of a list)."""
    if value is None:
        return exp.Literal.number(0)
    if isinstance(value, exp.Literal) and value.is_string:
        return exp.Literal.number(len(value.name))
    if isinstance(value, exp.Array) and all(isinstance(e, exp.Literal) for e in value.expressions):
        return exp.Literal.number(len(value.expressions))
    inner = bound_of(value, dialect) if isinstance(value, exp.Func) else None
    if inner is not None:
        return inner.size.copy()
    return exp.Length(this=exp.Cast(this=value.copy(), to=exp.DataType.build("VARCHAR")))


def _mul(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Mul(this=_p(a.copy()), expression=_p(b.copy()))


def _div(a: exp.Expression, b: exp.Expression) -> exp.Expression:
    return exp.Div(this=_p(a), expression=_p(b))


def _p(node: exp.Expression) -> exp.Expression:
    """``node`` in parentheses where it is an operation: these trees are built, not parsed,
    so nothing else would keep ``(a + 1) * b`` from being written ``a + 1 * b``."""
    return exp.Paren(this=node) if isinstance(node, exp.Binary | exp.Case) else node


def _at_least_one(value: exp.Expression) -> exp.Expression:
    """``greatest(abs(value), 1)``, computed here when ``value`` is a constant."""
    known = fold(value, "duckdb")
    if known is not None:
        return exp.Literal.number(max(abs(known), 1))
    return exp.Anonymous(this="greatest", expressions=[exp.Abs(this=value.copy()), exp.Literal.number(1)])


def _epoch(value: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this="epoch", expressions=[exp.Cast(this=value.copy(), to=exp.DataType.build("TIMESTAMP"))])


def _grows_little(by: exp.Expression, find: exp.Expression | None) -> bool:
    """Whether a constant replacement or separator ``by`` is short (for ``replace``: no longer
    than what it replaces), so the output grows with its input only."""
    if not (isinstance(by, exp.Literal) and by.is_string):
        return False
    if find is None:
        return len(by.name) <= _SHORT
    return isinstance(find, exp.Literal) and find.is_string and len(by.name) <= max(len(find.name), 1)


def _short_over_data(value: exp.Expression, find: exp.Expression | None, by: exp.Expression) -> bool:
    """Whether a short constant replaces a constant in a column's value: the output is at most
    :data:`_SHORT` + 1 times a value the source holds (``replace(name, '&', '&amp;')``)."""
    return (isinstance(value, exp.Column) and isinstance(find, exp.Literal) and find.is_string
            and isinstance(by, exp.Literal) and by.is_string and len(by.name) <= _SHORT)


_SECONDS = {"microsecond": 1e-6, "millisecond": 1e-3, "second": 1, "minute": 60, "hour": 3600, "day": 86400,
            "week": 7 * 86400, "month": 28 * 86400, "quarter": 90 * 86400, "year": 365 * 86400}


def _interval_seconds(step: exp.Interval) -> float | None:
    """An interval constant's shortest length in seconds (a month is 28 days)."""
    unit = step.text("unit").lower()
    if isinstance(step.this, exp.Literal):
        match = re.fullmatch(r"\s*([0-9.]+)\s*([a-z]*)\s*", step.this.name.lower())
        if not match:
            return None
        amount, unit = float(match[1]), unit or match[2]
    else:
        amount = fold(step.this, "duckdb")
    unit = unit[:-1] if unit.endswith("s") else unit
    seconds = _SECONDS.get(unit)
    return amount * seconds if amount and seconds and amount > 0 else None


_PRINTF = re.compile(r"%(?:\d+\$)?[-+ #0!,']*(\*|\d*)(?:\.(\*|\d*))?")
_FMT = re.compile(r"\{[^{}:]*:([^{}]*)\}")


def _widths(text: str) -> list[int] | None:
    """The widths and precisions a format asks for (printf's ``%2000d``, fmt's ``{:>2000}``);
    ``None`` when one comes from an argument (``%*d``, ``{:>{}}``)."""
    widths: list[int] = []
    for match in _PRINTF.finditer(text.replace("%%", "")):
        for part in match.groups():
            if part == "*":
                return None
            if part:
                widths.append(int(part))
    fields = text.replace("{{", "")
    if re.search(r"\{[^{}]*\{", fields):  # a field inside a field: fmt's width from an argument
        return None
    for match in _FMT.finditer(fields):
        widths.extend(int(d) for d in re.findall(r"\d+", match[1]))
    return widths


def fold(node: exp.Expression | None, dialect: str) -> float | None:
    """The value of a constant numeric expression (literals, arithmetic, casts, a nested
    builder's size), or ``None`` when the data sets it.

    >>> import sqlglot
    >>> fold(sqlglot.parse_one("CAST(10 * 1e8 AS BIGINT) + 2e9"), "duckdb")
    3000000000.0
    >>> fold(sqlglot.parse_one("n * 2"), "duckdb") is None
    True
    """
    if node is None:
        return None
    if isinstance(node, exp.Literal):
        if node.is_string:
            try:
                return float(node.name)
            except ValueError:
                return None
        return float(node.name)
    if isinstance(node, exp.Paren | exp.Cast | exp.TryCast):
        return fold(node.this, dialect)
    if isinstance(node, exp.Neg):
        value = fold(node.this, dialect)
        return None if value is None else -value
    if isinstance(node, exp.Abs):
        value = fold(node.this, dialect)
        return None if value is None else abs(value)
    if isinstance(node, exp.Greatest | exp.Least):
        values = [fold(v, dialect) for v in [node.this, *node.expressions]]
        if any(v is None for v in values):
            return None
        return max(values) if isinstance(node, exp.Greatest) else min(values)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul | exp.Div | exp.IntDiv):
        a, b = fold(node.this, dialect), fold(node.expression, dialect)
        if a is None or b is None:
            return None
        if isinstance(node, exp.Add):
            return a + b
        if isinstance(node, exp.Sub):
            return a - b
        if isinstance(node, exp.Mul):
            return a * b
        return a / b if b else None
    if isinstance(node, exp.Func):
        bound = bound_of(node, dialect)
        if bound is not None:
            return fold(bound.size, dialect)
    if isinstance(node, exp.Anonymous) and str(node.name).lower() == "epoch" and node.expressions:
        return _epoch_of(node.expressions[0])
    return None


def _epoch_of(node: exp.Expression) -> float | None:
    """A date or timestamp constant's seconds since 1970 (a ``CAST('2020-01-01' AS DATE)``)."""
    from datetime import datetime, timezone

    while isinstance(node, exp.Cast | exp.TryCast | exp.Paren):
        node = node.this
    if not (isinstance(node, exp.Literal) and node.is_string):
        return None
    try:
        moment = datetime.fromisoformat(node.name)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp()


# --------------------------------------------------------------------------------- messages


def _ancestors(node: exp.Expression) -> Iterator[exp.Expression]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _name(node: exp.Func, dialect: str) -> str:
    """The name the engine runs (``range`` is syntax to ``called_names``: read off the text)."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    names = [n for n in called_names(node, dialect) if n != "unnest"]
    if not names:
        names = [n.lower() for n in re.findall(r"(\w+)\(", node.sql(dialect)) if n.lower() != "unnest"]
    return names[0] if names else type(node).__name__.lower()


def _over(node: exp.Func, bound: Bound, size: float, dialect: str) -> str:
    arguments = bound.operand.sql(dialect)
    shown = arguments if len(arguments) <= 40 else arguments[:37] + "..."
    if bound.items:
        return (f"{_name(node, dialect)}(..., {shown}) would build a list of ~{size:,.0f} items; "
                f"lists are capped at {MAX_LIST_ITEMS:,} items")
    return (f"{_name(node, dialect)}(..., {shown}) would build a value of ~{_human(size)}; "
            f"values are capped at {_human(MAX_VALUE_CHARS, True)}")


def _human(size: float, binary: bool = False) -> str:
    """``1.2 GB`` (decimal, for a size asked for) or ``64 KiB`` (binary, for the cap)."""
    base, units = (1024, ("B", "KiB", "MiB", "GiB", "TiB")) if binary else (1000, ("B", "kB", "MB", "GB", "TB"))
    unit = 0
    while size >= base and unit < len(units) - 1:
        size /= base
        unit += 1
    return f"{size:.0f} {units[unit]}" if binary or size >= 100 or unit == 0 else f"{size:.1f} {units[unit]}"


def _too_large(message: str) -> SqlRejected:
    return SqlRejected(
        message, reason="sql_value_too_large",
        hint="build smaller values: a width or count within the cap; for a sequence of rows use the table "
             "function, FROM range(...)",
    )
