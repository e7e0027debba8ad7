"""A query starts running once it has passed the read-only guard, while its columns are
still checked; the run is kept by its step, or stopped and cleaned up when not wanted."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import uuid
from pathlib import Path

import duckdb
import pytest

from jupyter_analyst.errors import SqlRejected, ToolRetry
from jupyter_analyst.sql import SqlPreparer, open_source, preparer
from jupyter_analyst.sql.prepare import prepare_sql

SCHEMA = {"regions": {"region": "VARCHAR", "manager": "VARCHAR"}}
#: Hours of work for DuckDB, in one query that reads a real table: a test that runs it ends
#: only if the query is interrupted (or fails by the suite's time limit).
SLOW = ("SELECT COUNT(*) AS n FROM regions, range(100000000000000) AS r(x) "
        "WHERE (x * 7 + length(regions.region)) % 13 = 5")


def unchecked(sql: str, tag: str | None = None) -> str:
    """``sql`` under a text no test has checked before: the checker's answers are kept per
    process and text, and a text answered before is never started early. (The comment is
    part of the step key: texts that must share a key share a ``tag``.)"""
    return f"{sql} /* {tag or uuid.uuid4().hex} */"


def test_a_query_is_cleared_after_the_guard_and_before_its_columns_are_checked():
    cleared = []
    prepared = prepare_sql("select Region from regions order by 1", schema=SCHEMA, dialect="duckdb",
                           on_cleared=cleared.append)
    (early,) = cleared
    assert early.executable == prepared.executable and early.has_order is True

    cleared.clear()
    with pytest.raises(SqlRejected) as refused:
        prepare_sql("SELECT regoin FROM regions", schema=SCHEMA, dialect="duckdb", on_cleared=cleared.append)
    # Cleared (it is read-only, its table exists), then refused: the caller drops the run.
    assert refused.value.reason == "unknown_column" and len(cleared) == 1


@pytest.mark.parametrize("sql, reason", [
    ("DELETE FROM regions", "sql_not_read_only"),
    ("SELECT 1; DROP TABLE regions", "sql_multiple_statements"),
    ("SELECT region FROM regoins", "unknown_table"),
    ("COPY regions TO '/tmp/out.csv'", "sql_not_read_only"),
    ("SELECT * FROM read_csv('/etc/passwd')", None),
])
def test_nothing_the_guard_refuses_is_ever_cleared(sql, reason):
    cleared = []
    with pytest.raises(SqlRejected) as refused:
        prepare_sql(sql, schema=SCHEMA, dialect="duckdb", on_cleared=cleared.append)
    assert cleared == []
    if reason is not None:
        assert refused.value.reason == reason


def test_the_worker_clears_a_query_before_its_answer_and_a_known_text_is_answered_at_once(sales_db):
    checker = SqlPreparer()
    source = open_source(str(sales_db))
    sql = unchecked("SELECT region_id, COUNT(*) AS n FROM orders GROUP BY region_id")
    said: list[tuple[str, str]] = []

    def meanwhile() -> None:
        said.append(("meanwhile", threading.current_thread().name))

    def on_cleared(query) -> None:
        said.append(("cleared", query.executable))

    try:
        prepared = asyncio.run(checker.prepare(sql, source, on_cleared=on_cleared, meanwhile=meanwhile))
        # Done while the worker checked, in the checker's own thread, before the query cleared.
        ((first, thread), (then, executable)) = said
        assert (first, then, executable) == ("meanwhile", "cleared", prepared.executable)
        assert thread.startswith("sql-prepare")
        said.clear()
        assert asyncio.run(checker.prepare(sql, source, on_cleared=on_cleared, meanwhile=meanwhile)) == prepared
        assert said == []  # checked before: nothing to start early, the answer is immediate
    finally:
        source.close()


@pytest.fixture
def toolbox(thread_tools):
    return thread_tools[1]


def _ctx(tools, call_id: str):
    from jupyter_analyst.agent.spec import CallContext

    return CallContext(tools.environment.thread_id, "turn_early", call_id)


def _staged(tools) -> list[Path]:
    folder = tools.artifacts.blobs.dir.parent / ".incoming"
    return sorted(folder.iterdir()) if folder.exists() else []


def test_a_step_keeps_the_run_that_started_while_it_was_checked(toolbox):
    async def go():
        args = {"sql": unchecked("SELECT region_id, SUM(quantity) AS units FROM orders GROUP BY region_id ORDER BY 1"),
                "name": "units"}
        plan = await toolbox.plan("run_sql", args)
        assert plan.early is not None  # started before the check had finished
        outcome = await toolbox.call("run_sql", args, _ctx(toolbox, "c1"), plan)
        regions = toolbox.environment.source.cursor().execute("SELECT COUNT(DISTINCT region_id) FROM orders").fetchone()[0]
        assert outcome.status == "ok" and outcome.result["rows"] == regions
        assert plan.early.taken and outcome.duration_s >= 0
        # What ran is the checked query: the artifact's bytes are the file the run wrote.
        (artifact, created) = outcome.artifacts[0]
        assert created and toolbox.artifacts.read_bytes(artifact.artifact_id)[:4] == b"PAR1"
        await plan.drop()  # taken: dropping it now changes nothing
        assert toolbox.artifacts.read_bytes(artifact.artifact_id)[:4] == b"PAR1"

    asyncio.run(go())
    assert _staged(toolbox) == []


def test_a_reused_step_stops_its_early_run_and_leaves_no_file(toolbox, monkeypatch):
    async def go():
        tag = uuid.uuid4().hex
        first = {"sql": unchecked("SELECT region FROM regions ORDER BY region", tag), "name": "r"}
        plan = await toolbox.plan("run_sql", first)
        assert (await toolbox.call("run_sql", first, _ctx(toolbox, "c1"), plan)).status == "ok"
        # The very text the thread ran: most likely reused, so nothing starts before the key is known.
        same = await toolbox.plan("run_sql", dict(first))
        assert same.key == plan.key and same.early is None
        # Checked afresh (as by a process that never checked it): the store says it ran.
        monkeypatch.setattr(preparer, "_checked", preparer._Checked())
        fresh = await toolbox.plan("run_sql", dict(first))
        assert fresh.key == plan.key and fresh.early is None
        # Another text of the same query, for the same dataset: most likely the same query
        # again (a "continue" that writes it differently), so it waits for its key, the same.
        again = {"sql": unchecked("select REGION from REGIONS order by region", tag), "name": "r"}
        plan2 = await toolbox.plan("run_sql", again)
        assert plan2.key == plan.key and plan2.early is None
        # A new text for a new dataset starts early; a run not wanted after all is dropped.
        other = {"sql": unchecked("select REGION from REGIONS order by region"), "name": "r2"}
        plan3 = await toolbox.plan("run_sql", other)
        assert plan3.early is not None and toolbox.recorded(_ctx(toolbox, "c3"), plan3.key) is None
        await plan3.drop()
        assert plan3.early.task.done()

    asyncio.run(go())
    assert _staged(toolbox) == []


def test_a_query_refused_after_it_started_is_stopped_before_the_source_closes(toolbox):
    """An unknown column is found while the query already runs: the run is interrupted, not
    left holding the source (closing a DuckDB source under a running query fails)."""
    async def go():
        args = {"sql": unchecked(SLOW.replace("COUNT(*) AS n", "COUNT(regions.nope) AS n")), "name": "slow"}
        with pytest.raises(ToolRetry) as refused:
            await toolbox.plan("run_sql", args)
        assert refused.value.reason == "unknown_column"

    asyncio.run(go())
    toolbox.environment.source.close()  # raises "connection is busy" while a query still runs
    assert _staged(toolbox) == []


def test_a_stopped_step_interrupts_its_query(toolbox):
    """Cancelling a step (the user's Stop) interrupts DuckDB; the thread lets go of the source."""
    async def go():
        args = {"sql": unchecked(SLOW), "name": "slow"}
        plan = await toolbox.plan("run_sql", args)
        step = asyncio.create_task(toolbox.call("run_sql", args, _ctx(toolbox, "c1"), plan))
        while not plan.early.taken:  # the step has taken the run: it awaits the query now
            await asyncio.sleep(0)
        step.cancel()
        with pytest.raises(asyncio.CancelledError):
            await step
        await plan.drop()

    asyncio.run(go())
    toolbox.environment.source.close()
    assert _staged(toolbox) == []


def test_a_plain_query_run_stopped_midway_lets_go_of_the_source(sales_db, tmp_path):
    from jupyter_analyst.sql import QueryRunner, prepare_query

    source = open_source(str(sales_db))

    async def go():
        run = asyncio.create_task(QueryRunner(source).run_to_parquet(prepare_query(SLOW, source), tmp_path / "x.parquet"))
        await asyncio.sleep(0)  # let it start its thread
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(go())
    source.close()
    assert not (tmp_path / "x.parquet").exists() and list(tmp_path.iterdir()) == []
    with pytest.raises(duckdb.ConnectionException):
        source.conn.execute("SELECT 1")


@pytest.mark.parametrize("tool", ["run_sql", "plan"])
def test_naming_a_query_tool_starts_the_sources_engine_worker_and_its_checker(tmp_path, sales_db, tool):
    """A DuckDB source's worker starts when the model names the tool, not when its first query
    waits for it; a SQLAlchemy source (its ``engine`` is SQLAlchemy's) has none to start."""
    from jupyter_analyst.agent.environment import ThreadEnvironment
    from jupyter_analyst.agent.spec.contract import spec_of

    sqlite_db = tmp_path / "shop.sqlite"
    with sqlite3.connect(sqlite_db) as con:
        con.execute("CREATE TABLE t (i INTEGER)")
    for spec in (str(sales_db), f"sqlite:///{sqlite_db}"):
        source = open_source(spec)
        env = ThreadEnvironment(thread_id="t1", source=source, artifacts=None, workdir=tmp_path / "k")
        try:
            spec_of(tool).named(env)
            if spec == str(sales_db):
                assert source.engine.pid() is not None and source.engine.started == 1
        finally:
            asyncio.run(env.close())
            source.close()
