"""Calls sent at once on one thread inside Jupyter's own MCP server, as models built on Claude
and GPT send them: a thread's steps wait for one another instead of being refused, a look-up
answers beside a running step, and a call refused before it ran leaves no thread behind. One
real Jupyter server with jupyter-server-mcp for the module, the SDK's own client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client import Client

from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess, free_port
from jupyter_analyst.testing.slow_queries import build_join_db
from jupyter_analyst.workspace import Workspace

from .test_parallel import look_up_beside_a_running_step


def _text(result) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


@pytest.fixture(scope="module")
def jupyter_mcp(tmp_path_factory, sales_db) -> Iterator[tuple[str, Path]]:
    """Jupyter's MCP endpoint, with the analyst's tools allowed on sources ``sales`` and
    ``joins`` (where :data:`ENDLESS` runs), and the server's workspace."""
    root = tmp_path_factory.mktemp("jupyter-mcp")
    joins = build_join_db(root / "joins.duckdb")
    port = free_port()
    with JupyterServerProcess(root / "server", sources={"sales": str(sales_db), "joins": str(joins)},
                              model_url="http://127.0.0.1:9/v1", mcp_port=port,
                              extra=["--AnalystApp.jupyter_mcp_tools=True", "--AnalystApp.summarizer=False"]):
        yield f"http://127.0.0.1:{port}/mcp", root / "server" / "ws"


def test_steps_and_look_ups_sent_at_once_on_one_thread_all_run(jupyter_mcp):
    url, _workspace = jupyter_mcp

    async def session():
        async with Client(url) as client:
            made = await client.call_tool("analyst_list_tables", {})
            thread = made.structured_content["thread"]
            looks = await asyncio.gather(*(client.call_tool("analyst_describe_table", {"table": t, "thread": thread})
                                           for t in ("orders", "regions", "products")))
            steps = await asyncio.gather(
                client.call_tool("analyst_run_sql", {"sql": "SELECT 41 AS n", "name": "answer", "thread": thread}),
                client.call_tool("analyst_run_python", {"code": "print(6 * 7)", "thread": thread}))
            after = await client.call_tool("analyst_run_python", {"code": "print(int(answer['n'][0]) + 1)",
                                                                  "thread": thread})
            state = await client.call_tool("analyst_thread_state", {"thread": thread})
            return thread, looks, steps, after, state

    thread, looks, steps, after, state = asyncio.run(session())
    for result in [*looks, *steps, after]:
        assert not result.is_error, _text(result)  # queued, never "a turn is already running"
        assert result.structured_content["thread"] == thread
    assert steps[1].structured_content["result"]["stdout"].strip() == "42"
    assert after.structured_content["result"]["stdout"].strip() == "42"  # the queued SQL step's dataset
    # Each step a turn of its own, one after another, all completed.
    assert [t["status"] for t in state.structured_content["turns"]] == ["completed"] * 7


def test_a_look_up_answers_beside_a_running_step(jupyter_mcp):
    url, _workspace = jupyter_mcp

    async def session():
        async with Client(url) as client:
            made = await client.call_tool("analyst_list_tables", {"source": "joins"})
            thread = made.structured_content["thread"]
            look, ended_first = await look_up_beside_a_running_step(client, thread, prefix="analyst_")
            return thread, look, ended_first

    thread, look, ended_first = asyncio.run(session())
    assert not look.is_error, _text(look)
    assert look.structured_content["thread"] == thread and look.structured_content["source"] == "joins"
    assert not ended_first, "the look-up answered while the step still ran"


@pytest.mark.parametrize("tool, arguments", [
    ("analyst_run_sql", {"sql": "DELETE FROM orders", "name": "gone"}),
    ("analyst_run_python", {"code": "   "}),
    ("analyst_describe_table", {"table": ""}),
    ("analyst_describe_table", {"table": "no_such_table"}),  # a failed look-up made nothing to keep either
])
def test_a_call_refused_before_it_ran_leaves_no_thread(jupyter_mcp, tool, arguments):
    """A client looping on a bad call does not fill the store with threads."""
    url, workspace = jupyter_mcp

    async def session():
        async with Client(url) as client:
            before = await client.call_tool("analyst_threads", {})
            refused = await client.call_tool(tool, arguments)
            after = await client.call_tool("analyst_threads", {})
            return before, refused, after

    before, refused, after = asyncio.run(session())
    assert refused.is_error and refused.structured_content["thread"] is None, _text(refused)
    assert "nothing ran, and no thread was made" in _text(refused)
    assert after.structured_content["threads"] == before.structured_content["threads"]
    store = Workspace(workspace)
    try:  # the server's own store holds none either
        assert len(store.store.list_threads(user="local")) == len(before.structured_content["threads"])
    finally:
        store.close()
