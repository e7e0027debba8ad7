"""The last pass: the canonical text a query's fingerprint is taken of.

Layout, keyword and identifier case, quoting and the names of table aliases do not change
it; anything that changes the result does (a value, a column, an output name, an aggregate).
A query that reads the clock (``current_date``, ``now()``, SQLite's ``date('now')``...) is
marked so: the same text gives another result on another day, so its step key takes the day
it runs (``agent/tools/run_sql.py``).
"""

from __future__ import annotations

from sqlglot import exp

from .preparation import Preparation


def canonicalize(prep: Preparation) -> Preparation:
    """The pass: ``prep.canonical``, the text of ``prep.qualified`` (renamed in place: see
    :func:`canonical_sql`).

    >>> import sqlglot
    >>> tree = sqlglot.parse_one('SELECT "o"."x" FROM "t" AS "o"')
    >>> canonicalize(Preparation("", schema={}, dialect="duckdb", qualified=tree)).canonical
    'SELECT "_t0"."x" FROM "t" AS "_t0"'
    """
    prep.reads_clock = reads_clock(prep.qualified)
    prep.canonical = canonical_sql(prep.qualified, copy=False)
    return prep


#: The calls whose value is the current date or time, as sqlglot reads them in any dialect
#: (``today()``, ``getdate()``, ``sysdate()``, ``curdate()`` and ``now()`` become these).
_CLOCK_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name) for name in (
        "CurrentDate", "CurrentDatetime", "CurrentTime", "CurrentTimestamp", "CurrentTimestampLTZ", "Localtime",
        "Localtimestamp", "Systimestamp", "UtcDate", "UtcTime", "UtcTimestamp",
    ) if hasattr(exp, name)  # the set grows with sqlglot's versions
)
#: The same calls where sqlglot keeps them by name (as written, in lower case).
_CLOCK_CALLS = frozenset({
    "now", "today", "getdate", "sysdate", "sysdatetime", "curdate", "curtime", "get_current_timestamp",
    "current_localtime", "current_localtimestamp", "transaction_timestamp", "statement_timestamp",
    "clock_timestamp", "timeofday", "unixepoch", "utc_timestamp", "utc_date", "systimestamp",
})
#: Words that stand for the current time as a string (SQLite's ``date('now')``, PostgreSQL's
#: ``'today'::date``). Any literal of them counts: a column compared with the word 'now' only
#: costs a query a key of the day, where missing one would reuse yesterday's answer.
_CLOCK_WORDS = frozenset({"now", "today", "yesterday", "tomorrow"})


def reads_clock(tree: exp.Expression | None) -> bool:
    """Whether the query's result depends on when it runs (it reads the current date or time).

    >>> import sqlglot
    >>> [reads_clock(sqlglot.parse_one(q, read=d)) for q, d in [
    ...     ("SELECT * FROM t WHERE d > current_date - 7", "duckdb"), ("SELECT now()", "duckdb"),
    ...     ("SELECT getdate()", "tsql"), ("SELECT date('now')", "sqlite"), ("SELECT d FROM t", "duckdb")]]
    [True, True, True, True, False]
    """
    if tree is None:
        return False
    for node in tree.walk():
        if isinstance(node, _CLOCK_NODES):
            return True
        if isinstance(node, exp.Anonymous) and str(node.this).lower() in _CLOCK_CALLS:
            return True
        if isinstance(node, exp.Literal) and node.is_string and node.this.strip().lower() in _CLOCK_WORDS:
            return True
    return False


def canonical_sql(qualified: exp.Expression, *, copy: bool = True) -> str:
    """Canonical text: table and subquery aliases renamed in order of appearance.

    >>> import sqlglot
    >>> a = canonical_sql(sqlglot.parse_one('SELECT "s"."x" FROM "t" AS "s"'))
    >>> a == canonical_sql(sqlglot.parse_one('select "q"."x" from "t" as "q"'))
    True
    """
    tree = qualified.copy() if copy else qualified  # ``copy=False`` renames in place
    renames: dict[str, str] = {}
    for node in tree.find_all(exp.Table, exp.Subquery):
        alias = node.alias
        if alias and alias not in renames:
            renames[alias] = f"_t{len(renames)}"
    for node in tree.find_all(exp.TableAlias):
        if node.name in renames:
            node.set("this", exp.to_identifier(renames[node.name], quoted=True))
    for column in tree.find_all(exp.Column):
        if column.table in renames:
            column.set("table", exp.to_identifier(renames[column.table], quoted=True))
    # The generator changes what it writes out: without a copy only when it is ours to change.
    return tree.sql(dialect="duckdb", normalize=True, pretty=False, copy=copy)
