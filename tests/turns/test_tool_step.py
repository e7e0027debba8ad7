"""A step of any named tool, asked for by a user or a client agent: the model's pipeline
(guards, reuse, artifacts, events, the audit notebook) on a real DuckDB file and a real
kernel, kept between steps by the host as between turns."""

from __future__ import annotations

import asyncio

import pytest

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.turns import AnalystConfig, LiveThreads, ToolStepRequest, run_tool_step
from jupyter_analyst.workspace import Workspace

REVENUE = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id ORDER BY region_id"


def test_sql_then_python_share_the_kept_kernel_and_reuse(tmp_path, sales_db):
    config = AnalystConfig(workspace=tmp_path / "ws", summarizer=False)

    async def steps():
        live = LiveThreads()
        events: list = []
        try:
            first = await run_tool_step(ToolStepRequest(tool="run_sql", source=str(sales_db),
                                                        arguments={"sql": REVENUE, "name": "revenue"}),
                                        config=config, live=live, on_event=events.append)
            thread = first.thread_id
            python = await run_tool_step(ToolStepRequest(
                tool="run_python", thread_id=thread,
                arguments={"code": "import matplotlib.pyplot as plt\nrevenue.plot.bar(x='region_id', y='revenue')\n"
                                   "plt.show()\nprint(len(revenue))"}), config=config, live=live)
            runtime = live.runtime(thread)
            kernel = runtime.kernel_session if runtime.kernel_started else None
            again = await run_tool_step(ToolStepRequest(tool="run_sql", thread_id=thread,
                                                        arguments={"sql": REVENUE, "name": "revenue"}),
                                        config=config, live=live)
            tables = await run_tool_step(ToolStepRequest(tool="list_tables", thread_id=thread), config=config,
                                         live=live)
            return first, python, again, tables, kernel, live.runtime(thread).kernel_session, events
        finally:
            await live.close()

    first, python, again, tables, kernel, kernel_after, events = asyncio.run(steps())
    assert first.ok and first.result["rows"] == 5 and [a.type for a in first.artifacts] == ["dataset"]
    assert python.ok and python.result["stdout"].strip() == "5"
    assert "image" in {a.type for a in python.artifacts}
    assert again.ok and again.reused and again.artifacts[0].fingerprint == first.artifacts[0].fingerprint
    assert tables.ok and {"orders", "regions", "products"} <= {t["name"] for t in tables.result["tables"]}
    assert kernel is not None and kernel_after is kernel  # one kernel for the thread's steps
    assert {type(e).__name__ for e in events} >= {"TurnStarted", "ToolCallStarted", "TurnEnded"}
    workspace = Workspace(tmp_path / "ws")
    try:  # an ordinary thread: four turns, in the same store the panel reads
        assert len(workspace.store.turns(first.thread_id)) == 4
    finally:
        workspace.close()


def test_a_hostile_query_is_refused_with_the_guards_message(tmp_path, sales_db):
    config = AnalystConfig(workspace=tmp_path / "ws", summarizer=False)
    step = asyncio.run(run_tool_step(ToolStepRequest(
        tool="run_sql", source=str(sales_db), arguments={"sql": "SELECT * FROM read_csv('/etc/passwd')", "name": "x"}),
        config=config))
    assert not step.ok and step.status in ("error", "refused")
    assert "read_csv" in step.error and step.artifacts == []


def test_a_tool_that_cannot_be_asked_for_is_refused_before_anything_opens(tmp_path):
    with pytest.raises(ConfigError, match="no step runs the tool 'plan'"):
        asyncio.run(run_tool_step(ToolStepRequest(tool="plan", source="nowhere.duckdb"),
                                  config=AnalystConfig(workspace=tmp_path / "ws")))
    assert not (tmp_path / "ws").exists()


def test_a_look_up_beside_a_running_turn_leaves_that_turn_running(tmp_path, sales_db):
    """A host's parallel calls: a look-up opens its own turn while the thread's step runs,
    and that step's turn stays running in the store the panel reads (it was marked
    interrupted, as if its process had died, until it ended)."""
    config = AnalystConfig(workspace=tmp_path / "ws", summarizer=False)
    workspace = Workspace(tmp_path / "ws")
    try:
        thread = workspace.store.create_thread(source=str(sales_db))
        running = workspace.store.start_turn(thread.thread_id, "run_python {...}")
        step = asyncio.run(run_tool_step(ToolStepRequest(tool="describe_table", thread_id=thread.thread_id,
                                                         arguments={"table": "orders"}, beside=True), config=config))
        assert step.ok
        statuses = {t.turn_id: t.status for t in workspace.store.turns(thread.thread_id)}
        assert statuses[running.turn_id] == "running"
        assert list(statuses.values()) == ["running", "completed"]
    finally:
        workspace.close()
