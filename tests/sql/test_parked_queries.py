"""A query whose engine call takes no interrupt ends at its timeout all the same.

On DuckDB the call runs in the source's engine worker, which is killed at the give-up wait:
the query's thread lets go at once, nothing is set aside, and the next query starts a new
worker. On SQLite the connection is set aside (never closed while the call runs, never handed
to another query) and released when the call returns; a source sets aside only so many.

Before the fix the runner closed the busy DuckDB connection once it gave up waiting, and
DuckDB's ``ResourceInUseException`` escaped in place of the ``query_timeout``; then (with
parking) the call held one of the source's threads and its memory until it returned, and a
fifth such call made the source refuse every query (``engine_busy``).
"""

from __future__ import annotations

import asyncio
import os
import signal
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


def _gone(pid: int) -> bool:
    """Whether the process ``pid`` has ended (and been reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_call_that_takes_no_interrupt_ends_at_its_timeout_with_its_engine_worker(stubborn_db, tmp_path):
    src = open_source(str(stubborn_db))
    try:
        async def scenario():
            assert (await _query(src, "SELECT 1 AS x", tmp_path / "warm.parquet")).rows == 1
            worker = src.engine.pid()
            started = time.perf_counter()
            with pytest.raises(QueryFailed) as info:
                await _query(src, STUBBORN, tmp_path / "a.parquet", **SHORT)
            given_up = time.perf_counter() - started
            assert _gone(worker), "the worker the call ran in was killed"
            # The next queries run at once, in a new worker.
            for n in range(3):
                other = await _query(src, "SELECT 42 AS x", tmp_path / f"b{n}.parquet")
                assert other.rows == 1 and other.sample == [{"x": 42}]
            assert src.engine.pid() not in (None, worker) and src.engine.started == 2
            return info.value, given_up

        error, given_up = asyncio.run(scenario())
        assert error.reason == "query_timeout"
        assert "0.3 s" in error.message and "took no interrupt" in error.message and "ended" in error.message
        assert "huge string" in error.hint
        assert given_up < 3.0, f"the query was waited for {given_up:.1f} s"
        assert not (tmp_path / "a.parquet").exists()
        assert not hasattr(src, "parking"), "nothing is set aside on DuckDB"
    finally:
        src.close()


def test_as_many_stubborn_calls_as_come_end_and_the_source_never_refuses(stubborn_db, tmp_path):
    """Parking refused every query once four calls were set aside; a killed worker holds nothing."""
    src = open_source(str(stubborn_db))
    try:
        async def scenario():
            killed = 0
            for n in range(6):
                # Its worker started first: the call, not the start, is what the timeout meets.
                assert (await _query(src, "SELECT 1 AS x", tmp_path / f"w{n}.parquet")).rows == 1
                with pytest.raises(QueryFailed) as info:
                    await _query(src, STUBBORN, tmp_path / f"a{n}.parquet", **SHORT)
                assert info.value.reason == "query_timeout"
                # On a loaded machine the timeout can meet the statement before its long call
                # starts, where the interrupt still lands: then its worker lives on.
                killed += "took no interrupt" in info.value.message
            started = time.perf_counter()
            ok = await _query(src, "SELECT 1 AS x", tmp_path / "b.parquet")
            return ok, time.perf_counter() - started, killed

        ok, waited, killed = asyncio.run(scenario())
        assert ok.rows == 1 and waited < 10.0
        assert killed >= 1, "at least one call took no interrupt"
        # One worker at the start, and a new one after each that was ended.
        assert src.engine.started == 1 + killed
    finally:
        src.close()


def test_a_source_closed_while_its_query_runs_ends_the_query_and_removes_its_folder(stubborn_db, tmp_path):
    src = open_source(str(stubborn_db))

    async def scenario():
        running = asyncio.ensure_future(_query(src, STUBBORN, tmp_path / "a.parquet", timeout_s=600))
        while src.engine.pid() is None or not _in_engine():
            await asyncio.sleep(0.01)
        worker = src.engine.pid()
        await asyncio.to_thread(src.close)  # no ResourceInUseException: the worker is killed
        with pytest.raises(QueryFailed) as info:
            await running
        return worker, info.value

    worker, error = asyncio.run(scenario())
    assert _gone(worker)
    assert error.reason == "query_failed" and "source was closed" in error.message
    assert not src.private.path.exists() and not (tmp_path / "a.parquet").exists()
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
            worker = src.engine.pid()
            # Stopped half a second in, as a user presses stop: past the reading of the value,
            # inside the one call (the timed-out queries above are given up sooner).
            await asyncio.wait([running], timeout=0.5)
            assert not running.done()
            running.cancel()
            started = time.perf_counter()
            with pytest.raises(asyncio.CancelledError):
                await running
            stopped_in = time.perf_counter() - started
            assert _gone(worker) and _in_engine() == 0
            assert (await _query(src, "SELECT 1 AS x", tmp_path / "b.parquet")).rows == 1
            return stopped_in

        stopped_in = asyncio.run(scenario())
        assert stopped_in < 3.0, f"the stop waited {stopped_in:.1f} s for the engine"
        assert not (tmp_path / "a.parquet").exists()
    finally:
        src.close()


def test_a_worker_killed_under_its_query_fails_it_clearly_and_the_next_query_runs(stubborn_db, tmp_path):
    """Its worker killed from outside (the kernel's OOM killer, an operator): the query says so."""
    src = open_source(str(stubborn_db))
    try:
        async def scenario():
            running = asyncio.ensure_future(_query(src, STUBBORN, tmp_path / "a.parquet", timeout_s=600))
            while src.engine.pid() is None or not _in_engine():
                await asyncio.sleep(0.01)
            worker = src.engine.pid()
            os.kill(worker, signal.SIGKILL)
            with pytest.raises(QueryFailed) as info:
                await running
            after = await _query(src, "SELECT 42 AS x", tmp_path / "b.parquet")
            return info.value, after, worker

        error, after, worker = asyncio.run(scenario())
        assert error.reason == "query_failed"
        assert error.message == "the query's engine process ended while the query ran (killed by SIGKILL)"
        assert "run it again" in error.hint
        assert not (tmp_path / "a.parquet").exists()
        assert after.sample == [{"x": 42}] and src.engine.pid() != worker
    finally:
        src.close()


def test_a_query_running_beside_a_stubborn_one_is_told_why_its_engine_ended(stubborn_db, tmp_path):
    """Both in the source's one worker: killing it for the stubborn call ends the other query
    too, which says so (and the next query runs in a new worker)."""
    src = open_source(str(stubborn_db))
    try:
        async def scenario():
            long = "SELECT COUNT(*) AS n FROM range(100000000000) AS r(x) WHERE x % 7 = 1"
            beside = asyncio.ensure_future(_query(src, long, tmp_path / "b.parquet", timeout_s=600))
            while not _in_engine():
                await asyncio.sleep(0.01)
            with pytest.raises(QueryFailed) as stubborn:
                await _query(src, STUBBORN, tmp_path / "a.parquet", **SHORT)
            with pytest.raises(QueryFailed) as other:
                await beside
            after = await _query(src, "SELECT 42 AS x", tmp_path / "c.parquet")
            return stubborn.value, other.value, after

        stubborn, other, after = asyncio.run(scenario())
        assert stubborn.reason == "query_timeout"
        assert other.reason == "query_failed"
        assert other.message == ("the query's engine process was ended (to stop a statement that took no "
                                 "interrupt) while the query ran")
        assert after.sample == [{"x": 42}]
        assert not (tmp_path / "a.parquet").exists() and not (tmp_path / "b.parquet").exists()
    finally:
        src.close()


def _in_engine() -> int:
    """Threads of sources' own executors waiting for a statement their engine worker runs now."""
    import sys
    import threading

    frames = sys._current_frames()
    busy = 0
    for thread in threading.enumerate():
        frame = frames.get(thread.ident) if thread.name.startswith("analyst-query") else None
        while frame is not None and frame.f_code.co_name != "rows":
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
        # Eighty calls over one 8 M-character value, in one row (seconds of work even on a quiet
        # machine, so the call still runs when the next query comes): SQLite looks at its interrupt
        # between steps of its program, never inside a call. (Each replaces a constant in the
        # column's own value, which the size check lets through: the output stays bounded.)
        terms = " + ".join(f"length(replace(s, '{c}', '{c}{c}'))" for c in "ab" * 40)
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
