"""A running query's progress, as the engine estimates it: read while a real DuckDB query
runs, nothing from an engine without an estimate, and no change to what the query returns
or to how it stops."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import pyarrow.parquet as pq
import pytest

from jupyter_analyst.errors import QueryFailed
from jupyter_analyst.sql import QueryProgress, QueryRunner, open_source, prepare_query
from jupyter_analyst.testing.slow_queries import ENDLESS, JOIN, build_join_db


@pytest.fixture(scope="module")
def join_db(tmp_path_factory):
    return build_join_db(tmp_path_factory.mktemp("progress") / "join.duckdb")


async def _watched(runner: QueryRunner, sql: str, dest, every_s: float = 0.02):
    """Run ``sql``, reading its progress all along: the result (or error) and the readings."""
    progress = QueryProgress()
    run = asyncio.create_task(runner.run_to_parquet(prepare_query(sql, runner.source), dest, progress))
    readings: list[int | None] = []
    while not run.done():
        readings.append(progress.percent())
        await asyncio.sleep(every_s)
    readings.append(progress.percent())  # after the end: nothing is read from the query
    try:
        return run.result(), readings
    except QueryFailed as exc:
        return exc, readings


def test_a_long_duckdb_query_tells_its_progress_while_it_runs(join_db, tmp_path):
    source = open_source(str(join_db))
    try:
        result, readings = asyncio.run(_watched(QueryRunner(source), JOIN, tmp_path / "a.parquet"))
        told = [r for r in readings if r is not None]
        assert result.rows == 1000
        assert readings[-1] is None, "read only while the query runs"
        assert len(set(told)) >= 3, readings
        assert all(0 <= r <= 99 for r in told) and max(told) >= 50, told
        # The same query again, on the connection the first one used, gives the same bytes.
        again, _ = asyncio.run(_watched(QueryRunner(source), JOIN, tmp_path / "b.parquet"))
        assert again.fingerprint == result.fingerprint
        # Each k has 100 rows of a, each met by the 1000 - k rows of b from k on.
        expected = {k: 100 * (1000 - k) for k in range(1000)}
        table = pq.read_table(tmp_path / "b.parquet").to_pydict()
        assert dict(zip(table["k"], table["c"], strict=True)) == expected
    finally:
        source.close()


def test_a_query_timed_out_while_telling_progress_stops_at_once_and_its_connection_serves_again(join_db, tmp_path):
    source = open_source(str(join_db))
    try:
        runner = QueryRunner(source, timeout_s=1.0)
        started = time.perf_counter()
        failed, readings = asyncio.run(_watched(runner, ENDLESS, tmp_path / "x.parquet"))
        assert isinstance(failed, QueryFailed) and failed.reason == "query_timeout"
        assert time.perf_counter() - started < 6.0
        assert 0 in readings and readings[-1] is None
        assert not (tmp_path / "x.parquet").exists()
        # The connection it ran on is free again (the next query takes it), and answers truly.
        for _ in range(3):
            ok, _ = asyncio.run(_watched(QueryRunner(source), "SELECT COUNT(*) AS n FROM b", tmp_path / "n.parquet"))
            assert ok.rows == 1 and ok.sample == [{"n": 1000}]
            (tmp_path / "n.parquet").unlink()
    finally:
        source.close()


def test_an_engine_without_an_estimate_tells_nothing(tmp_path):
    db = tmp_path / "t.sqlite"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (i INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(150)])
    source = open_source(f"sqlite:///{db}")
    try:
        sql = "SELECT COUNT(*) AS n FROM t AS a, t AS b, t AS c WHERE (a.i + b.i + c.i) % 7 = 1"
        result, readings = asyncio.run(_watched(QueryRunner(source), sql, tmp_path / "s.parquet"))
        assert result.rows == 1 and len(readings) >= 2
        assert set(readings) == {None}
    finally:
        source.close()
