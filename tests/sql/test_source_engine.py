"""A new engine is one class and one registration: a toy engine, defined here alone (its SQL run
by sqlglot's Python executor over tables held in memory), answers a turn end to end through
``run_sql``: checked by the guard, its Arrow batches streamed into a Parquet artifact with the
fingerprint of its bytes, the dataset in the kernel, a second ask reused, a write refused, and
a query past its time stopped with a clear error while the turn goes on."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jupyter_analyst.artifacts import sha256_file
from jupyter_analyst.errors import QueryFailed
from jupyter_analyst.sql import (
    BatchQuery, QueryProgress, QueryRun, QueryRunner, ResultBatches, RunningQuery, SourceEngine, TableInfo, open_source,
    prepare_query, register_source,
)
from jupyter_analyst.sql import sources
from jupyter_analyst.sql.query_model import ColumnInfo, TableDescription
from jupyter_analyst.testing import ScriptedModelServer, TurnRunner, python_step, sql_step, text_step

ORDERS = [{"order_id": i, "region": ("north", "south", "east")[i % 3], "amount": float(i)} for i in range(1, 31)]
#: What a slow query waits on: released by the test, or by the query's interrupt.
SLOW = "SELECT 'slow' AS slow"


class ToyQuery(BatchQuery):
    """A query run by sqlglot's executor; its rows handed over in batches of 4. A slow query
    says it is 42% done while it waits."""

    reports_progress = True

    def __init__(self, engine: ToyEngine, run: QueryRun) -> None:
        super().__init__(run)
        self.engine = engine
        self.stopped = threading.Event()

    def batches(self) -> ResultBatches:
        from sqlglot.executor import execute

        if self.run.sql == SLOW:
            self.engine.slow_started.set()
            if self.stopped.wait(30):  # an interrupt ends it at once
                raise RuntimeError("the toy engine was interrupted")
        table = execute(self.run.sql, dialect=self.engine.dialect, tables={"orders": ORDERS})
        rows = [dict(zip(table.columns, row, strict=True)) for row in table.rows]
        kept = pa.Table.from_pylist(rows[: self.run.row_cap]) if rows else pa.table({c: [] for c in table.columns})
        self.engine.runs.append(self.run.sql)
        return ResultBatches(schema=kept.schema, batches=iter(kept.to_batches(max_chunksize=4)),
                             dropped=max(len(rows) - self.run.row_cap, 0))

    def interrupt(self) -> None:
        self.stopped.set()

    def progress(self) -> float:
        return 42.0 if self.engine.slow_started.is_set() and not self.stopped.is_set() else -1.0


class ToyEngine(SourceEngine):
    kind = "toy"
    dialect = "postgres"
    interruptible = True

    def __init__(self, spec, limits=None) -> None:
        super().__init__(spec, limits)
        self.runs: list[str] = []
        self.slow_started = threading.Event()

    def schema(self):
        return {"orders": {"order_id": "BIGINT", "region": "VARCHAR", "amount": "DOUBLE"}}

    def list_tables(self):
        return [TableInfo(name="orders", kind="table", rows=len(ORDERS))]

    def describe_table(self, table, sample_rows=5):
        columns = [ColumnInfo(name=c, type=t) for c, t in self.schema()["orders"].items()]
        return TableDescription(name="orders", columns=columns, rows=len(ORDERS), sample=ORDERS[:sample_rows])

    def data_version(self):
        return "toy:1"

    def start(self, run: QueryRun) -> RunningQuery:
        return ToyQuery(self, run)


OPENED: list[ToyEngine] = []


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(sources, "_REGISTRY", list(sources._REGISTRY))

    def factory(spec, limits):
        OPENED.append(ToyEngine(spec, limits))
        return OPENED[-1]

    register_source("toy", lambda spec: spec.startswith("toy://"), factory)
    OPENED.clear()
    yield OPENED


def test_the_toy_engine_runs_through_the_query_runner(toy, tmp_path):
    """Streamed batches make one file whose fingerprint is its bytes' hash; rows past the cap
    are counted; an unordered result gets a total order; the engine's progress is read while a
    query runs, and a query past its time is stopped through the engine's interrupt."""
    engine = open_source("toy://shop")
    assert isinstance(engine, ToyEngine)
    sql = "SELECT order_id, region FROM orders WHERE amount > 2"
    out = asyncio.run(QueryRunner(engine, row_cap=10).run_to_parquet(prepare_query(sql, engine), tmp_path / "a.parquet"))
    assert out.fingerprint == sha256_file(tmp_path / "a.parquet")
    assert (out.rows, out.truncated, out.dropped) == (10, True, 18)
    written = pq.read_table(tmp_path / "a.parquet")
    # No ORDER BY: every column ascending, whatever order the batches came in.
    assert written.column("order_id").to_pylist() == sorted(written.column("order_id").to_pylist())
    assert out.sample[0] == {"order_id": 3, "region": "north"}

    async def slow():
        progress = QueryProgress()
        runner = QueryRunner(engine, timeout_s=2.0)
        run = asyncio.create_task(runner.run_to_parquet(prepare_query(SLOW, engine), tmp_path / "slow.parquet", progress))
        await asyncio.to_thread(engine.slow_started.wait, 10)
        seen = progress.percent()  # the engine's estimate, read while it runs
        with pytest.raises(QueryFailed) as info:
            await run
        return seen, info.value

    seen, error = asyncio.run(slow())
    assert seen == 42
    assert error.reason == "query_timeout" and "2 s" in error.message
    assert not (tmp_path / "slow.parquet").exists()


def test_a_toy_engine_answers_a_turn_end_to_end(toy, tmp_path):
    sql = "SELECT region, SUM(amount) AS total FROM orders GROUP BY region ORDER BY total DESC"
    server = ScriptedModelServer({"turns": [
        {"match": "again", "steps": [sql_step(sql, "totals"), text_step("[scripted] same")]},
        {"match": "delete", "steps": [sql_step("DELETE FROM orders", "gone"), text_step("[scripted] refused")]},
        {"match": "slow", "steps": [sql_step(SLOW, "slow"), text_step("[scripted] it was stopped")]},
        {"match": ".", "steps": [
            sql_step(sql, "totals"),
            python_step("print(len(totals), totals['total'].sum())"),
            text_step("[scripted] totals by region"),
        ]},
    ]}).start()
    try:
        runner = TurnRunner(tmp_path / "ws", server, Path("toy://shop"))
        runner.source = "toy://shop"
        first = runner.run("totals by region")
        assert first.status == "completed", first.error
        ran_sql, ran_python = runner.of_type("tool_result")
        assert ran_sql.status == "ok" and ran_sql.result["rows"] == 3, ran_sql.result
        (artifact,) = [e for e in runner.of_type("artifact") if e.artifact_type == "dataset"]
        blobs = [f for f in (tmp_path / "ws" / "artifacts").rglob("*") if f.is_file()]
        assert artifact.fingerprint in {sha256_file(f) for f in blobs}
        # The dataset reached the kernel, from the Parquet the toy's batches were written to.
        assert ran_python.status == "ok" and "3 465.0" in json.dumps(ran_python.result), ran_python.result
        ran = [r for r in toy[-1].runs if "GROUP BY" in r]
        assert len(ran) == 1

        again = runner.run("again", thread=first.thread_id)
        assert again.status == "completed", again.error
        told = runner.of_type("tool_result")[-1]
        assert told.status == "ok" and told.reused, told
        assert [r for e in toy for r in e.runs if "GROUP BY" in r] == ran  # not run again

        refused = runner.run("delete", thread=first.thread_id)
        assert refused.status == "completed", refused.error
        told = runner.of_type("tool_result")[-1]
        assert told.status == "error" and told.result["error"]["reason"] == "sql_not_read_only", told.result
        assert not [r for e in toy for r in e.runs if "DELETE" in r.upper()]

        stopped = runner.run("slow", thread=first.thread_id, query_timeout_s=0.5)
        assert stopped.status == "completed", stopped.error
        told = runner.of_type("tool_result")[-1]
        assert told.status == "error" and told.result["error"]["reason"] == "query_timeout", told.result
        assert "0.5 s" in told.result["error"]["message"], told.result
    finally:
        server.stop()
