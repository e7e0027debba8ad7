"""The model's SQL building one huge value, which no memory limit of the engine bounds.

Before the fix, ``SELECT length(repeat('x', 1200000000))`` passed the guard and took a server
whose DuckDB was limited to 256 MB from 273 to 2,560 MiB of resident memory (measured again
here in a subprocess: VmHWM 62 -> 2,355 MiB; ``len(range(0, 20000000))`` 62 -> 1,754 MiB).
Now a constant size over the cap is refused before anything runs (the same query, through
``prepare_query`` and the ``QueryRunner`` of a source limited to 256 MB: VmHWM 161 -> 161 MiB,
``sql_value_too_large``), and a size the data sets fails the query in the engine before the
value is built (``repeat('x', quantity * 100000000)`` over the orders: 161 -> 165 MiB).

Values each within the cap still compound (``s||s||...`` over CTEs: 163 -> 3,632 MiB of the
host's); the model's queries therefore run in the source's engine worker, under a memory cap
of its own, and fail there with ``query_memory`` (``sql/engine_process.py``).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from jupyter_analyst.errors import QueryFailed, SqlRejected
from jupyter_analyst.sql import QueryRunner, open_source, prepare_query
from jupyter_analyst.sql.prepare.sizes import MAX_LIST_ITEMS, MAX_VALUE_CHARS
from jupyter_analyst.testing import sql_step, text_step

from .conftest import results_of, scripted

RED_TEAM = "SELECT length(repeat('x', 1200000000)) AS n"

#: Constant sizes over the cap, each refused before anything runs (tables of the sample database).
CONSTANT = {
    "repeat": RED_TEAM,
    "repeat, float": "SELECT repeat('x', 2e9) AS v",
    "repeat, arithmetic": "SELECT repeat('x', 10 * 1e8) AS v",
    "repeat, cast": "SELECT repeat('x', CAST(1200000000 AS BIGINT)) AS v",
    "repeat, a long string": "SELECT repeat('abcdefghij', 10000) AS v",
    "repeat, nested": "SELECT repeat(repeat('x', 1e4), 1e4) AS v",
    "repeat, a list": "SELECT repeat([1, 2, 3], 1000000) AS v",
    "lpad": "SELECT lpad(region, 1200000000, 'x') AS v FROM regions",
    "rpad": "SELECT rpad(region, 1200000000) AS v FROM regions",
    "printf width": "SELECT printf('%2000000000d', 1) AS v",
    "printf precision": "SELECT printf('%.2000000000f', 1.5) AS v",
    "printf width from an argument": "SELECT printf('%*d', 2000000000, 1) AS v",
    "format width": "SELECT format('{:>2000000000}', 1) AS v",
    "format width from an argument": "SELECT format('{:>{}}', 1, 2000000000) AS v",
    "to_base min_length": "SELECT to_base(1, 2, 2000000000) AS v",
    "bitstring length": "SELECT bitstring('1', 2000000000) AS v",
    "range as a list": "SELECT len(range(0, 2000000000)) AS n",
    "range of dates as a list": "SELECT unnest(range(DATE '2000-01-01', DATE '2099-01-01', INTERVAL 1 MINUTE)) AS t",
    "generate_series as a list": "SELECT unnest(generate_series(1, 20000000)) AS n",
    "list_resize": "SELECT len(list_resize([1], 2000000000)) AS n",
    "array_resize": "SELECT len(array_resize([1], 2000000000, 0)) AS n",
    "equi_width_bins": "SELECT equi_width_bins(0, 10, 2000000000, false) AS v",
    "replace multiplying": "SELECT replace(repeat('a', 60000), 'a', repeat('b', 60000)) AS v",
    "regexp_replace of every empty match": "SELECT regexp_replace(repeat('a', 6e4), '', repeat('b', 6e4), 'g') AS v",
    "array_to_string with a long separator": "SELECT array_to_string(range(0, 10000), repeat('z', 1000)) AS v",
    "in a CTE": "WITH c AS (SELECT repeat('x', 1200000000) AS v) SELECT length(v) AS n FROM c",
    "in a subquery": "SELECT (SELECT length(repeat('x', 1200000000))) AS n",
    "in a WHERE": "SELECT region FROM regions WHERE length(lpad(region, 1200000000)) > 0",
    "in a lambda": "SELECT list_transform([1, 2], x -> repeat('x', 1200000000)) AS v",
}

#: Sizes the data sets, each failing in the engine as the query runs, before the value is built.
FROM_THE_DATA = {
    "repeat": "SELECT length(repeat('x', quantity * 100000000)) AS n FROM orders",
    "repeat of a column": "SELECT length(repeat(region, quantity * 100000000)) AS n FROM orders, regions",
    "repeat nested": "SELECT length(repeat(repeat('x', quantity * 10000), quantity * 10000)) AS n FROM orders",
    "lpad": "SELECT length(lpad('x', CAST(quantity AS INTEGER) * 100000, 'y')) AS n FROM orders",
    "range": "SELECT len(range(0, order_id * 100000000)) AS n FROM orders",
    "range of dates": ("SELECT len(range(order_date, order_date + INTERVAL 100 YEAR, INTERVAL 1 MINUTE)) AS n "
                       "FROM orders"),
    "list_resize": "SELECT len(list_resize([1], quantity * 100000000)) AS n FROM orders",
    "replace": "SELECT length(replace(region, 'a', repeat('b', quantity * 1000))) AS n FROM orders, regions",
    "in a lambda": ("SELECT list_transform([1, 2], x -> length(repeat('a', x * quantity * 100000000))) AS v "
                    "FROM orders"),
    "a subquery's size": "SELECT length(repeat('x', (SELECT max(order_id) * 100000000 FROM orders))) AS n",
    "in a CTE": ("WITH s AS (SELECT max(quantity) * 100000000 AS k FROM orders) "
                 "SELECT length(repeat('x', k)) AS n FROM s"),
}

#: Ordinary queries, still accepted and run.
ORDINARY = {
    "lpad an id": "SELECT lpad(CAST(order_id AS VARCHAR), 6, '0') AS code FROM orders",
    "a rule": "SELECT repeat('-', 20) AS rule",
    "a short list": "SELECT range(0, 10) AS r",
    "a calendar": "SELECT unnest(generate_series(DATE '2024-01-01', DATE '2024-12-31', INTERVAL 1 DAY)) AS day",
    "rows of a table function": "SELECT count(*) AS n FROM generate_series(1, 1000000) AS g(i)",
    "stars per row": "SELECT repeat('*', CAST(quantity AS INTEGER)) AS stars FROM orders",
    "escaping": "SELECT replace(region, '&', '&amp;') AS r FROM regions",
    "printf": "SELECT printf('%06d|%-10s', order_id, 'x') AS v FROM orders",
    "a joined list": "SELECT array_to_string(list(region), ', ') AS names FROM regions",
}


@pytest.fixture(scope="module")
def source(sales_db):
    src = open_source(str(sales_db))
    yield src
    src.close()


@pytest.mark.parametrize("sql", list(CONSTANT.values()), ids=list(CONSTANT))
def test_a_constant_size_over_the_cap_is_refused_before_it_runs(source, sql):
    with pytest.raises(SqlRejected) as info:
        prepare_query(sql, source)
    assert info.value.reason == "sql_value_too_large", info.value.message


def test_the_red_teams_query_is_refused_with_its_size_and_the_cap(source):
    with pytest.raises(SqlRejected) as info:
        prepare_query(RED_TEAM, source)
    assert info.value.message == ("repeat(..., 1200000000) would build a value of ~1.2 GB; "
                                  "values are capped at 64 KiB")
    assert "FROM range" in (info.value.hint or "")


@pytest.mark.parametrize("sql", list(FROM_THE_DATA.values()), ids=list(FROM_THE_DATA))
def test_a_size_from_the_data_fails_in_the_engine_before_the_value_is_built(source, sql, tmp_path):
    prepared = prepare_query(sql, source)
    assert "error(" not in prepared.canonical.lower(), "fingerprints see the query as written"
    assert "ERROR(" in prepared.executable
    with pytest.raises(QueryFailed, match="capped at 64 KiB"):
        asyncio.run(QueryRunner(source, timeout_s=60).run_to_parquet(prepared, tmp_path / "v.parquet"))


@pytest.mark.parametrize("sql", list(ORDINARY.values()), ids=list(ORDINARY))
def test_ordinary_queries_still_run(source, sql, tmp_path):
    prepared = prepare_query(sql, source)
    result = asyncio.run(QueryRunner(source, timeout_s=60).run_to_parquet(prepared, tmp_path / "v.parquet"))
    assert result.rows >= 1


def test_a_value_just_within_the_cap_is_built(source, tmp_path):
    sql = f"SELECT length(repeat('x', {MAX_VALUE_CHARS})) AS n, len(range(0, {MAX_LIST_ITEMS})) AS k"
    result = asyncio.run(QueryRunner(source).run_to_parquet(prepare_query(sql, source), tmp_path / "v.parquet"))
    assert result.sample == [{"n": MAX_VALUE_CHARS, "k": MAX_LIST_ITEMS}]


def test_the_red_teams_query_through_a_turn_is_refused(tmp_path, sales_db):
    script = {"turns": [{"match": ".", "steps": [sql_step(RED_TEAM, "big"), text_step()]}]}
    with scripted(tmp_path / "ws", sales_db, script) as analyst:
        summary = analyst.run("how long is a long string")
    results = results_of(analyst, summary.turn_id)
    error = results[0].result["error"]
    assert error["reason"] == "sql_value_too_large"
    assert "1.2 GB" in error["message"] and "64 KiB" in error["message"]


# ------------------------------------------------------------------ SQLite: no check as it runs


@pytest.fixture
def sqlite_source(tmp_path):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE orders (id INTEGER, name TEXT)")
        con.executemany("INSERT INTO orders VALUES (?, ?)", [(i, f"n{i}") for i in range(10)])
    src = open_source(f"sqlite:///{path}")
    yield src
    src.close()


@pytest.mark.parametrize("sql", [
    "SELECT zeroblob(2000000000) AS b",
    "SELECT length(randomblob(2000000000)) AS b",
    "SELECT printf('%2000000000d', 1) AS v",
    "SELECT printf('%.*c', 2000000000, 'x') AS v",
    "SELECT zeroblob(id * 1000000000) AS b FROM orders",
    "SELECT replace(name, 'n', printf('%60000d', 1)) AS v FROM orders",
])
def test_sqlite_sizes_must_be_constants_within_the_cap(sqlite_source, sql):
    with pytest.raises(SqlRejected) as info:
        prepare_query(sql, sqlite_source)
    assert info.value.reason == "sql_value_too_large", info.value.message


def test_sqlite_ordinary_queries_pass(sqlite_source, tmp_path):
    sql = "SELECT printf('%06d', id) AS code, replace(name, 'n', '&amp;') AS v, zeroblob(4) AS z FROM orders"
    result = asyncio.run(QueryRunner(sqlite_source).run_to_parquet(prepare_query(sql, sqlite_source),
                                                                   tmp_path / "v.parquet"))
    assert result.rows == 10


def test_sqlite_values_grown_by_concatenation_fail_before_they_take_the_memory(sqlite_source, tmp_path):
    """``s || s`` in nested subqueries names no size: each level of eight multiplies the value
    by eight (60 KB to 2 GB in five levels; 134 MB to 3.4 GB of resident memory before SQLite's
    length limit was set). In a fresh process: the query fails, and the peak stays put."""
    eight = " || ".join(["s"] * 8)
    levels = ", ".join(f"l{i + 1} AS (SELECT {eight} AS s FROM l{i})" for i in range(5))
    sql = f"WITH l0 AS (SELECT printf('%60000d', 1) AS s), {levels} SELECT length(s) AS n FROM l5"
    run = subprocess.run([sys.executable, "-c", _MEASURE, sqlite_source.spec, sql, str(tmp_path / "v.parquet")],
                         capture_output=True, text=True, timeout=300, check=True)
    measured = json.loads(run.stdout.strip().splitlines()[-1])
    assert measured["outcome"] == "query_failed", measured
    assert measured["after"] - measured["before"] < 256, measured


def test_sqlite_rows_that_add_up_past_the_memory_limit_fail_before_they_take_it(sqlite_source, tmp_path):
    """Each value within SQLite's 16 MiB, but a thousand of them: the rows come into this
    process (SQLite runs here, PostgreSQL's arrive over the wire), so a query's result is
    held to a share of the source's memory limit (256 MB here: 64 MB of values)."""
    eight = " || ".join(["s"] * 8)
    sql = (f"WITH l0 AS (SELECT printf('%60000d', a.id) AS s FROM orders a, orders b, orders c), "
           f"l1 AS (SELECT {eight} AS s FROM l0), l2 AS (SELECT {eight} AS s FROM l1) SELECT s FROM l2")
    run = subprocess.run([sys.executable, "-c", _MEASURE, sqlite_source.spec, sql, str(tmp_path / "v.parquet")],
                         capture_output=True, text=True, timeout=300, check=True)
    measured = json.loads(run.stdout.strip().splitlines()[-1])
    assert measured["outcome"] == "query_memory", measured
    assert measured["after"] - measured["before"] < 256, measured


# ------------------------------------------------------------------ the memory it takes

_MEASURE = textwrap.dedent("""
    import asyncio, json, sys
    from pathlib import Path
    from jupyter_analyst.sql import QueryRunner, open_source, prepare_query
    from jupyter_analyst.sql.sealed import EngineLimits

    def peak():
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) // 1024

    source = open_source(sys.argv[1], limits=EngineLimits(memory_bytes=256 * 2**20))
    prepare_query("SELECT 1 AS one", source)
    before, outcome, message, hint = peak(), "ran", "", ""
    try:
        prepared = prepare_query(sys.argv[2], source)
        asyncio.run(QueryRunner(source, timeout_s=60).run_to_parquet(prepared, Path(sys.argv[3])))
    except Exception as exc:
        outcome = getattr(exc, "reason", type(exc).__name__)
        message, hint = getattr(exc, "message", str(exc)), getattr(exc, "hint", "") or ""
    after = peak()
    nxt = asyncio.run(QueryRunner(source).run_to_parquet(prepare_query("SELECT 1 AS one", source),
                                                         Path(sys.argv[3] + ".next")))
    print(json.dumps({"before": before, "after": after, "outcome": outcome, "message": message, "hint": hint,
                      "next": "ran" if nxt.sample == [{"one": 1}] else "failed"}))
""")


_EIGHTFOLD = "s||s||s||s||s||s||s||s"
#: Values each within the cap, compounded past it: one statement, no size to check.
COMPOUNDING = {
    "concatenated over CTEs": (
        "WITH t AS (SELECT range AS id FROM range(3000)), a AS (SELECT repeat('x', 60000 + id) AS s FROM t), "
        f"b AS (SELECT {_EIGHTFOLD} AS s FROM a), c AS (SELECT {_EIGHTFOLD} AS s FROM b) "
        "SELECT length(s) AS n FROM c"),
    "five nested CTEs": (
        "WITH a AS (SELECT repeat('x', 60000) AS s), "
        + ", ".join(f"{n} AS (SELECT {_EIGHTFOLD} AS s FROM {p})" for p, n in zip("abcde", "bcdef"))
        + " SELECT length(s) AS n FROM f"),
    "string_agg": "SELECT length(string_agg(repeat('x', 60000), '')) AS n FROM range(60000)",
    "list_concat over CTEs": (
        "WITH a AS (SELECT range(0, 9000 + id) AS l FROM range(1000) AS t(id)), "
        "b AS (SELECT list_concat(l, l, l, l, l, l, l, l) AS l FROM a), "
        "c AS (SELECT list_concat(l, l, l, l, l, l, l, l) AS l FROM b) SELECT list_sum(l) AS n FROM c"),
}


@pytest.mark.parametrize("sql, outcome", [
    (RED_TEAM, "sql_value_too_large"),
    ("SELECT length(repeat('x', quantity * 100000000)) AS n FROM orders", "query_failed"),
    *((sql, "query_memory") for sql in COMPOUNDING.values()),
], ids=["constant", "from the data", *COMPOUNDING])
@pytest.mark.serial  # peak memory of a process let grow to GBs before the fix: alone, not beside another test's
def test_the_huge_value_no_longer_takes_the_memory(sales_db, tmp_path, sql, outcome):
    """In a fresh process whose engine is limited to 256 MB: the peak resident memory (VmHWM)
    before and after the attempt, which took it to 2.3 GB before the fix. Values compounded
    within the cap took it from 163 to 3,632 MiB (over CTEs), 1,105 MiB (five nested CTEs),
    352 MiB (``string_agg``) and 308 MiB (``list_concat``) while the query ran in the host;
    in the source's engine worker they fail against its memory cap, and the host's memory
    does not move (181 -> 182 MiB)."""
    run = subprocess.run([sys.executable, "-c", _MEASURE, str(sales_db), sql, str(tmp_path / "v.parquet")],
                         capture_output=True, text=True, timeout=300, check=True)
    measured = json.loads(run.stdout.strip().splitlines()[-1])
    assert measured["outcome"] == outcome, measured
    assert measured["after"] - measured["before"] < 128, measured
    if outcome == "query_memory":
        assert "needed more memory than its engine may use (the memory limit is 256 MiB)" in measured["message"]
        assert "build smaller values" in measured["hint"]
        assert measured["next"] == "ran", "the engine serves the next query"
