"""SQL preparation (parse, guard, qualify) runs off the event loop, with a size and a time limit.

sqlglot cannot be interrupted, so preparation runs in worker processes that are stopped at
the time limit. While a hostile query is being prepared, the event loop keeps answering:
measured with a concurrent coroutine's tick latency, never with a sleep on wall time.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from jupyter_analyst.testing import sql_step, text_step

# Qualifying a UNION is quadratic in its arms: this one takes most of a second to check with
# sqlglot's compiled build, seconds without it; the tests' limits are well below that.
HUGE_UNION = " UNION ALL ".join(f"SELECT region FROM regions WHERE region = 'r{i}'" for i in range(900))


async def _turn_with_ticker(a, prompt: str, **config) -> tuple[object, list[float]]:
    """Run one turn while a coroutine ticks every 10 ms; returns the summary and the gaps."""
    from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn

    gaps: list[float] = []
    done = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    try:
        summary = await run_turn(
            TurnRequest(prompt=prompt, source=str(a.source)),
            config=AnalystConfig(workspace=a.workspace, summarizer=False, **config),
            model=ModelSettings(model="scripted", base_url=a.server.base_url, api_key="x"),
            on_event=a.events.append,
        )
    finally:
        done.set()
        await task
    return summary, gaps


def _told(a) -> list[dict]:
    return [json.loads(m["content"]) for m in a.server.requests[-1]["messages"] if m["role"] == "tool"]


@pytest.mark.serial  # a bound in seconds on the event loop's gaps: on a machine not shared with another test
def test_a_query_past_the_time_limit_is_refused_while_the_loop_keeps_answering(analyst):
    a = analyst({"turns": [{"steps": [sql_step(HUGE_UNION, "arms"), text_step("done")]}]})
    started = time.perf_counter()
    summary, gaps = asyncio.run(_turn_with_ticker(a, "union", sql_prepare_timeout_s=0.3))
    # The loop ticked all along: no gap anywhere near the preparation's length.
    assert len(gaps) > 20
    assert sorted(gaps)[len(gaps) // 2] < 0.05
    assert max(gaps) < 0.25, f"the event loop stalled for {max(gaps):.2f} s"
    assert summary.status == "completed"
    (told,) = _told(a)
    assert told["error"]["reason"] == "sql_too_complex", told
    assert "0.3 s" in told["error"]["message"] and told["error"]["hint"]
    assert time.perf_counter() - started < 30


def test_a_query_past_the_size_limit_is_refused_before_it_is_parsed(analyst):
    sql = "SELECT region FROM regions WHERE region IN (" + ", ".join(f"'r{i}'" for i in range(500)) + ")"
    a = analyst({"turns": [{"steps": [sql_step(sql, "big"), text_step("done")]}]})
    summary, _ = asyncio.run(_turn_with_ticker(a, "big", sql_max_chars=1_000))
    assert summary.status == "completed"
    (told,) = _told(a)
    assert told["error"]["reason"] == "sql_too_large"
    assert f"{len(sql):,}" in told["error"]["message"] and "1,000" in told["error"]["message"]


def test_default_limits_are_documented_on_the_config():
    from jupyter_analyst.turns import AnalystConfig

    config = AnalystConfig()
    assert config.sql_max_chars == 100_000 and config.sql_prepare_timeout_s == 10.0
    fields = AnalystConfig.model_fields
    assert fields["sql_max_chars"].description and fields["sql_prepare_timeout_s"].description


def test_a_worker_stopped_at_the_limit_is_replaced(sales_db):
    from jupyter_analyst.errors import SqlRejected
    from jupyter_analyst.sql import SqlPreparer, open_source

    source = open_source(str(sales_db))
    preparer = SqlPreparer(max_chars=1_000_000, timeout_s=0.2)

    async def both() -> None:
        with pytest.raises(SqlRejected) as info:
            await preparer.prepare(HUGE_UNION, source)
        assert info.value.reason == "sql_too_complex"
        prepared = await preparer.prepare("SELECT region FROM regions", source)
        assert prepared.tables == ["regions"]

    try:
        asyncio.run(both())
    finally:
        source.close()


def test_each_sql_step_is_prepared_once(analyst, monkeypatch):
    from jupyter_analyst.sql import preparer as preparation

    asked: list[str] = []
    real = preparation.SqlPreparer.prepare

    async def counted(self, sql, source, **options):
        asked.append(sql)
        return await real(self, sql, source, **options)

    monkeypatch.setattr(preparation.SqlPreparer, "prepare", counted)
    sql = "SELECT region FROM regions WHERE region <> 'prepared once'"
    a = analyst({"turns": [{"steps": [sql_step(sql, "r"), text_step("done")]}]})
    before = preparation.prepared_count()
    out = a.run("once")
    assert out.tool_calls["executed"] == 1
    # Then the fingerprint of the table it read, checked as any query is (table_fingerprints.py),
    # unless that table's fingerprint on this data was measured already in this process.
    assert asked[0] == sql and asked.count(sql) == 1 and len(asked) <= 2
    assert all("FROM \"regions\"" in other for other in asked[1:])
    # Each text went to a worker at most once (the fingerprint's may be answered from the
    # cache: another test checked it on the same data).
    assert 1 <= preparation.prepared_count() - before <= 2


def test_a_query_checked_once_is_not_sent_to_a_worker_again_until_the_data_changes(tmp_path):
    """The same text against the same version of the same source is the same check."""
    import duckdb

    from jupyter_analyst.sql import SqlPreparer, open_source
    from jupyter_analyst.sql import preparer as preparation

    db = tmp_path / "shop.duckdb"
    with duckdb.connect(str(db)) as conn:
        conn.execute("CREATE TABLE sales AS SELECT 1 AS amount")
    preparer = SqlPreparer()

    async def check(sql: str):
        source = open_source(str(db))
        try:
            return await preparer.prepare(sql, source)
        finally:
            source.close()

    sql = "SELECT SUM(amount) AS total FROM sales"
    before = preparation.prepared_count()
    first = asyncio.run(check(sql))
    again = asyncio.run(check(sql))
    assert again == first and preparation.prepared_count() - before == 1
    with duckdb.connect(str(db)) as conn:  # a new column: the data version changes
        conn.execute("ALTER TABLE sales ADD COLUMN region VARCHAR")
    asyncio.run(check("SELECT region FROM sales"))
    assert asyncio.run(check(sql)) == first
    assert preparation.prepared_count() - before == 3


def test_a_schema_is_sent_to_a_worker_once_and_again_when_it_let_it_go():
    """Jobs name a schema the worker was sent before; a worker without it asks for it."""
    from jupyter_analyst.sql import prepare_worker
    from jupyter_analyst.sql.preparer import WorkerPool

    schema = {"sales": {"region": "VARCHAR", "amount": "DOUBLE"}}
    job = {"sql": "SELECT region FROM sales", "schema_key": "k-test", "dialect": "duckdb"}
    prepare_worker._schemas.clear()
    assert prepare_worker.answer(job) == {"schema_missing": True}
    assert "prepared" in prepare_worker.answer({**job, "schema": schema})
    assert prepare_worker.answer(job)["prepared"]["tables"] == ["sales"]  # kept from the job before

    pool = WorkerPool(size=1)
    try:
        first = pool.run({**job, "schema": schema}, 30)
        (worker,) = pool._all
        assert first["prepared"]["tables"] == ["sales"] and worker.schemas == {"k-test"}
        worker.schemas.add("k-other")  # as if it had been sent and then let go by the worker
        other = pool.run({**job, "schema_key": "k-other", "schema": schema}, 30)
        assert other["prepared"]["tables"] == ["sales"]
    finally:
        pool.close()
