"""Queries slow enough to watch a DuckDB engine's progress estimate rise while they run, or that
outlive their timeout, on generated databases (tests of the runner's progress and timeouts, and
of the step's live progress)."""

from __future__ import annotations

from pathlib import Path

#: A join of a generated table with a small one: a few seconds of DuckDB's work on two cores.
JOIN = "SELECT a.k, COUNT(*) AS c, SUM(a.x * b.w) AS s FROM a, b WHERE a.k <= b.k GROUP BY a.k"
#: Hours of work: ends only when it is stopped.
ENDLESS = "SELECT COUNT(*) AS n FROM b, range(100000000000000) AS r(x) WHERE (x * 7 + b.k) % 13 = 5"


def build_join_db(path: Path) -> Path:
    """The DuckDB file :data:`JOIN` and :data:`ENDLESS` read: ``a`` (100,000 rows) and ``b`` (1,000)."""
    import duckdb

    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE a AS SELECT i AS id, i % 1000 AS k, (i * 7919) % 10007 / 10007.0 AS x "
                     "FROM range(100000) t(i)")
        conn.execute("CREATE TABLE b AS SELECT i AS k, i * 2 AS w FROM range(1000) t(i)")
    return path


#: One engine call on one huge value: DuckDB takes an interrupt only between vectors, so this
#: runs to its end however often it is interrupted (seconds per ten million characters). It
#: names no size, so the SQL guard lets it through.
STUBBORN = "SELECT length(regexp_replace(s, 'a', 'cc', 'g')) AS n FROM blob"


def build_stubborn_db(path: Path, chars: int) -> Path:
    """The DuckDB file :data:`STUBBORN` reads: ``blob``, one row of ``chars`` characters."""
    import duckdb

    with duckdb.connect(str(path)) as conn:
        conn.execute(f"CREATE TABLE blob AS SELECT repeat('ab', {int(chars) // 2}) AS s")
    return path
