"""A query whose engine call takes no interrupt ends at its timeout all the same: its
connection is set aside (never closed while the call runs, never handed to another query)
and released when the call returns; a source sets aside only so many.

Before the fix the runner closed the busy DuckDB connection once it gave up waiting, and
DuckDB's ``ResourceInUseException`` escaped in place of the ``query_timeout``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time

import duckdb
import pytest

from jupyter_analyst.errors import QueryFailed
from jupyter_analyst.sql import QueryRunner, open_source, prepare_query
from jupyter_analyst.testing.slow_queries import STUBBORN, build_stubborn_db

#: The call runs for seconds (twenty million characters); the runner waits for a fraction of one.
SHORT = {"timeout_s": 0.3, "give_up_s": 0.3}
#: How long a test waits for the stubborn call to return on a loaded machine (never reached).
RETURNS_WITHIN_S = 300


@pytest.fixture(scope="module")
def stubborn_db(tmp_path_factory):
    return build_stubborn_db(tmp_path_factory.mktemp("stubborn") / "blob.duckdb", 20_000_000)


def _query(source, sql, dest, **kw):
    return QueryRunner(source, **kw).run_to_parquet(prepare_query(sql, source), dest)


def test_a_call_that_takes_no_interrupt_is_given_up_at_its_timeout_and_its_connection_set_aside(stubborn_db, tmp_path):
    src = open_source(str(stubborn_db))
    try:
        pooled = list(src._sessions)

        async def scenario():
            started = time.perf_counter()
            with pytest.raises(QueryFailed) as info:
                await _query(src, STUBBORN, tmp_path / "a.parquet", **SHORT)
            given_up = time.perf_counter() - started
            assert src.parking.count == 1
            parked = [s for s in pooled if s not in src._sessions]
            assert len(parked) == 1
            # Other queries run meanwhile, none on the busy connection.
            for n in range(3):
                other = await _query(src, "SELECT 42 AS x", tmp_path / f"b{n}.parquet")
                assert other.rows == 1 and other.sample == [{"x": 42}]
            assert parked[0] not in src._sessions
            return info.value, given_up, parked[0]

        error, given_up, parked = asyncio.run(scenario())
        assert error.reason == "query_timeout"
        assert "0.3 s" in error.message and "still finishing" in error.message and "set aside" in error.message
        assert "huge string" in error.hint
        assert given_up < 3.0, f"the query was waited for {given_up:.1f} s"
        assert not (tmp_path / "a.parquet").exists()
        # Once its call returns, the connection is back in the pool, and it works.
        assert src.parking.wait_idle(RETURNS_WITHIN_S)
        assert not (tmp_path / "a.parquet").exists()  # the call that returned wrote nothing back
        assert sorted(map(id, src._sessions)) == sorted(map(id, pooled))
        assert parked.execute("SELECT 7").fetchone() == (7,)
    finally:
        src.close()


def test_a_source_sets_aside_only_so_many_calls_then_refuses_at_once_until_one_returns(stubborn_db, tmp_path):
    src = open_source(str(stubborn_db))
    src.parking.limit = 1
    try:
        async def scenario():
            with pytest.raises(QueryFailed) as first:
                await _query(src, STUBBORN, tmp_path / "a.parquet", **SHORT)
            started = time.perf_counter()
            with pytest.raises(QueryFailed) as busy:
                await _query(src, "SELECT 1 AS x", tmp_path / "b.parquet")
            return first.value, busy.value, time.perf_counter() - started

        first, busy, waited = asyncio.run(scenario())
        assert first.reason == "query_timeout"
        assert busy.reason == "engine_busy" and "still finishing 1 earlier" in busy.message
        assert waited < 1.0 and not (tmp_path / "b.parquet").exists()
        assert src.parking.wait_idle(RETURNS_WITHIN_S)
        assert asyncio.run(_query(src, "SELECT 1 AS x", tmp_path / "c.parquet")).rows == 1
    finally:
        src.close()


def test_a_source_closed_while_a_call_is_set_aside_closes_its_engine_when_the_call_returns(stubborn_db, tmp_path):
    src = open_source(str(stubborn_db))

    async def scenario():
        with pytest.raises(QueryFailed):
            await _query(src, STUBBORN, tmp_path / "a.parquet", **SHORT)

    asyncio.run(scenario())
    src.close()  # no ResourceInUseException: the busy connection and its engine are left to it
    assert src.private.path.exists() or src.parking.count == 0
    assert src.parking.wait_idle(RETURNS_WITHIN_S)
    assert not src.private.path.exists()
    with pytest.raises(duckdb.ConnectionException):
        src.conn.execute("SELECT 1")


def test_a_stopped_query_whose_call_takes_no_interrupt_lets_its_turn_stop(stubborn_db, tmp_path):
    src = open_source(str(stubborn_db))
    try:
        async def scenario():
            running = asyncio.ensure_future(_query(src, STUBBORN, tmp_path / "a.parquet", timeout_s=600, give_up_s=0.3))
            for _ in range(2000):  # until its thread is inside the engine's call (bounded)
                if _in_engine() or running.done():
                    break
                await asyncio.sleep(0.01)
            assert _in_engine() == 1
            # Stopped half a second in, as a user presses stop: past the reading of the value,
            # inside the one call (the timed-out queries above are given up sooner).
            await asyncio.wait([running], timeout=0.5)
            assert not running.done()
            running.cancel()
            started = time.perf_counter()
            with pytest.raises(asyncio.CancelledError):
                await running
            return time.perf_counter() - started

        stopped_in = asyncio.run(scenario())
        assert stopped_in < 3.0, f"the stop waited {stopped_in:.1f} s for the engine"
        assert src.parking.count == 1 and not (tmp_path / "a.parquet").exists()
        assert src.parking.wait_idle(RETURNS_WITHIN_S)
    finally:
        src.close()


def _in_engine() -> int:
    """Threads of sources' own executors inside a DuckDB query's engine call now."""
    import sys
    import threading

    frames = sys._current_frames()
    busy = 0
    for thread in threading.enumerate():
        frame = frames.get(thread.ident) if thread.name.startswith("analyst-query") else None
        while frame is not None and frame.f_code.co_name != "copy":
            frame = frame.f_back
        busy += frame is not None
    return busy


@pytest.fixture(scope="module")
def stubborn_sqlite(tmp_path_factory):
    path = tmp_path_factory.mktemp("stubborn") / "blob.sqlite"
    with sqlite3.connect(path) as con:
        # 8 M characters: each replace below builds 12 M, within SQLite's 16 MiB per value.
        con.execute("CREATE TABLE blob AS SELECT replace(hex(zeroblob(2000000)), '0', 'ab') AS s")
    return path


def test_a_sqlite_call_that_takes_no_interrupt_is_given_up_and_its_thread_counted(stubborn_sqlite, tmp_path):
    src = open_source(f"sqlite:///{stubborn_sqlite}")
    src.parking.limit = 1
    try:
        # Twenty calls over one 8 M-character value, in one row (seconds of work): SQLite looks at its interrupt
        # between steps of its program, never inside a call. (Each replaces a constant in the
        # column's own value, which the size check lets through: the output stays bounded.)
        terms = " + ".join(f"length(replace(s, '{c}', '{c}{c}'))" for c in "ab" * 10)
        sql = f"SELECT {terms} AS n FROM blob"

        async def scenario():
            with pytest.raises(QueryFailed) as info:
                await _query(src, sql, tmp_path / "a.parquet", **SHORT)
            with pytest.raises(QueryFailed) as busy:
                await _query(src, "SELECT 1 AS x", tmp_path / "b.parquet")
            return info.value, busy.value

        error, busy = asyncio.run(scenario())
        assert error.reason == "query_timeout" and "still finishing" in error.message
        assert busy.reason == "engine_busy"
        assert src.parking.wait_idle(RETURNS_WITHIN_S)
        assert not (tmp_path / "a.parquet").exists()  # the call that returned wrote nothing back
        assert asyncio.run(_query(src, "SELECT 1 AS x", tmp_path / "c.parquet")).rows == 1
    finally:
        src.close()
