"""Tools called in parallel on one thread, as models built on Claude and GPT call them: a
thread's steps wait for one another (in the order they came), and look-ups run beside a
running step. A real `jupyter analyst mcp` process, driven by the SDK's client."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from jupyter_analyst.testing.slow_queries import ENDLESS, build_join_db

pytestmark = pytest.mark.process  # each test starts the server process


def server(workspace: Path, source: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[
        "-m", "jupyter_analyst.cli", "mcp", "--workspace", str(workspace), "--no-summarizer", "--db", str(source)])


def _text(result) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


def test_parallel_lookups_and_steps_on_one_thread_all_run(tmp_path, sales_db):
    async def session():
        async with Client(server(tmp_path / "ws", sales_db)) as client:
            made = await client.call_tool("list_tables", {})
            thread = made.structured_content["thread"]
            looks = await asyncio.gather(*(client.call_tool("describe_table", {"table": table, "thread": thread})
                                           for table in ("orders", "regions", "products")))
            steps = await asyncio.gather(
                client.call_tool("run_sql", {"sql": "SELECT 41 AS n", "name": "answer", "thread": thread}),
                client.call_tool("run_python", {"code": "print(int(answer['n'][0]) + 1)", "thread": thread}))
            return thread, looks, steps

    thread, looks, steps = asyncio.run(session())
    for result in [*looks, *steps]:
        assert not result.is_error, _text(result)
        assert result.structured_content["thread"] == thread
    # In the order they came: the Python step saw the dataset the SQL step made.
    assert "42" in _text(steps[1])


async def look_up_beside_a_running_step(client: Client, thread: str, prefix: str = "") -> tuple[object, bool]:
    """``describe_table`` on ``thread`` (of :func:`build_join_db`'s source) while its endless
    ``run_sql`` runs (told by its progress), that step then cancelled: the look-up's result, and
    whether the step had ended before it answered. ``prefix``: the tools' (``analyst_`` in Jupyter)."""
    running = asyncio.Event()

    async def progress(value, total, message):
        if "run_sql running" in (message or ""):
            running.set()

    slow = asyncio.create_task(client.call_tool(
        f"{prefix}run_sql", {"sql": ENDLESS, "name": "endless", "thread": thread}, progress_callback=progress))
    await asyncio.wait_for(running.wait(), 120)
    look = await asyncio.wait_for(client.call_tool(f"{prefix}describe_table", {"table": "b", "thread": thread}), 60)
    ended_first = slow.done()
    slow.cancel()
    with pytest.raises(asyncio.CancelledError):
        await slow
    return look, ended_first


def test_a_lookup_answers_beside_a_running_step(tmp_path):
    source = build_join_db(tmp_path / "join.duckdb")

    async def session():
        async with Client(server(tmp_path / "ws", source)) as client:
            made = await client.call_tool("list_tables", {})
            thread = made.structured_content["thread"]
            look, ended_first = await look_up_beside_a_running_step(client, thread)
            return look, ended_first, thread

    look, ended_first, thread = asyncio.run(session())
    assert not look.is_error, _text(look)
    assert look.structured_content["thread"] == thread
    assert not ended_first, "the look-up answered while the step still ran"


def test_threads_rerun_restart_and_the_audit_notebook(tmp_path, sales_db):
    """What an agent expects to find: its threads, a step forced to run again, a fresh kernel,
    and the thread's audit notebook as a resource."""
    # The kernel process's start time (its pid is the same in every sandbox).
    pid = "print(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19])"

    async def session():
        async with Client(server(tmp_path / "ws", sales_db)) as client:
            made = await client.call_tool("run_python", {"code": pid})
            thread = made.structured_content["thread"]
            listed = await client.call_tool("threads", {})
            reused = await client.call_tool("run_python", {"code": pid, "thread": thread})
            forced = await client.call_tool("run_python", {"code": pid, "thread": thread, "rerun": True})
            restarted = await client.call_tool("restart_kernel", {"thread": thread})
            fresh = await client.call_tool("run_python", {"code": pid, "thread": thread, "rerun": True})
            notebook = (await client.read_resource(f"analyst://notebook/{thread}")).contents[0]
            return thread, made, listed, reused, forced, restarted, fresh, notebook

    thread, made, listed, reused, forced, restarted, fresh, notebook = asyncio.run(session())
    assert [t["thread"] for t in listed.structured_content["threads"]] == [thread]
    assert reused.structured_content["reused"] is True
    assert not forced.is_error and forced.structured_content["reused"] is False

    def kernel(result) -> str:
        return result.structured_content["result"]["stdout"].strip()

    assert kernel(forced) == kernel(made)  # run again, in the same kernel
    assert restarted.structured_content["stopped"] is True
    assert not fresh.is_error and kernel(fresh) != kernel(made)  # a fresh kernel
    assert notebook.mime_type == "application/x-ipynb+json"
    import base64
    import json

    cells = json.loads(base64.b64decode(notebook.blob))["cells"]
    assert any("/proc/self/stat" in "".join(cell["source"]) for cell in cells)
