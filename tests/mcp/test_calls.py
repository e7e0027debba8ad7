"""What a client agent is told, and what a call leaves behind: a refused call makes no thread,
every result names its thread and how to go on in it, a failed `ask` says why, and a
cancelled `verify` stops. A real `jupyter analyst mcp` process, driven by the SDK's client."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from jupyter_analyst.testing.servers.jupyter import free_port

pytestmark = pytest.mark.process  # each test starts the server process

SLOW_ON_REPLAY = ("import os, time\n"
                  "# The audit notebook's replay runs in a folder of verify's own: slow only there.\n"
                  "time.sleep(300 if 'analyst-verify-' in os.getcwd() else 0)\n"
                  "print('done')")


def server(workspace: Path, source: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[
        "-m", "jupyter_analyst.cli", "mcp", "--workspace", str(workspace), "--no-summarizer", "--db", str(source),
        *extra])


def test_a_call_refused_before_it_runs_makes_no_thread(tmp_path, sales_db):
    async def session():
        async with Client(server(tmp_path / "ws", sales_db)) as client:
            refused = [
                await client.call_tool("run_sql", {"sql": "SELECT * FROM read_csv('/etc/passwd')", "name": "x"}),
                await client.call_tool("run_sql", {"sql": "", "name": "x"}),
                await client.call_tool("describe_table", {"table": "no_such_table"}),
                await client.call_tool("run_sql", {"sql": "SELECT 1", "name": "x", "thread": "thr_0000000000000000"}),
            ]
            after = await client.call_tool("list_sources", {})
            made = await client.call_tool("run_sql", {"sql": "SELECT 1 AS one", "name": "one"})
            thread = made.structured_content["thread"]
            kept = await client.call_tool("run_sql", {"sql": "SELECT * FROM nope", "name": "x", "thread": thread})
            state = await client.call_tool("thread_state", {"thread": thread})
            return refused, after, made, kept, state

    refused, after, made, kept, state = asyncio.run(session())
    assert all(result.is_error for result in refused)
    assert [r.structured_content["thread"] for r in refused] == [None] * 4
    assert "no thread was made" in refused[0].content[0].text
    assert after.structured_content["threads"] == []  # a client looping on a bad call fills nothing
    unknown = refused[3].content[0].text
    assert "threads lists your threads" in unknown and "--thread" not in unknown and "jupyter analyst" not in unknown
    # A refusal in a thread that goes on stays in its history, as any turn does.
    assert kept.is_error and kept.structured_content["thread"] == made.structured_content["thread"]
    assert len(state.structured_content["turns"]) == 2


def test_every_result_names_its_thread_and_how_to_continue_in_it(tmp_path, sales_db):
    async def session():
        async with Client(server(tmp_path / "ws", sales_db)) as client:
            first = await client.call_tool("list_tables", {})
            thread = first.structured_content["thread"]
            second = await client.call_tool("run_python", {"code": "raise ValueError('boom')", "thread": thread})
            return first, second, thread

    first, second, thread = asyncio.run(session())
    assert thread.startswith("thr_")
    assert f'pass "thread": "{thread}"' in first.content[0].text and "new thread" in first.content[0].text
    assert second.is_error and f'pass "thread": "{thread}"' in second.content[0].text
    assert "new thread" not in second.content[0].text


SAMPLES = {"table": "orders", "sql": "SELECT 1 AS one", "name": "one", "code": "print(1)", "prompt": "Revenue?"}


def test_a_tool_whose_thread_may_be_left_out_starts_one_and_the_others_require_it(tmp_path, sales_db, monkeypatch):
    """The schema is true: `thread` is optional only where leaving it out starts a new thread."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    unreachable = f"http://127.0.0.1:{free_port()}/v1"  # ask starts its thread, then fails to reach a model

    async def session():
        async with Client(server(tmp_path / "ws", sales_db, "--base-url", unreachable)) as client:
            tools = (await client.list_tools()).tools
            optional = {}
            for tool in tools:
                schema = tool.input_schema
                if "thread" in schema["properties"] and "thread" not in schema.get("required", []):
                    arguments = {k: SAMPLES[k] for k in schema.get("required", [])}
                    optional[tool.name] = await client.call_tool(tool.name, arguments)
            left_out = await client.call_tool("list_artifacts", {})
            return tools, optional, left_out

    tools, optional, left_out = asyncio.run(session())
    for name, result in optional.items():
        assert str(result.structured_content["thread"]).startswith("thr_"), (name, result.content[0].text)
    assert len({r.structured_content["thread"] for r in optional.values()}) == len(optional)
    assert set(optional) == {"list_tables", "describe_table", "run_sql", "run_python", "ask"}
    for tool in tools:
        if tool.name not in optional and "thread" in tool.input_schema["properties"]:
            assert "thread" in tool.input_schema["required"], tool.name
            assert "Leave it out" not in tool.input_schema["properties"]["thread"]["description"], tool.name
    assert left_out.is_error  # the SDK holds the client to the schema


def test_ask_says_why_it_failed(tmp_path, sales_db, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    unreachable = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there

    async def session():
        async with Client(server(tmp_path / "ws", sales_db, "--base-url", unreachable)) as client:
            return await client.call_tool("ask", {"prompt": "Revenue by region"})

    result = asyncio.run(session())
    assert result.is_error and result.structured_content["status"] == "error"
    error = result.structured_content["error"]
    assert error["message"] and error["message"] in result.content[0].text
    thread = result.structured_content["thread"]
    assert f'pass "thread": "{thread}"' in result.content[0].text


def _processes() -> dict[int, tuple[int, bytes]]:
    """Every process: its parent and its command line."""
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_bytes()
                command = Path(entry.path, "cmdline").read_bytes()
            except OSError:  # it ended meanwhile
                continue
            found[int(entry.name)] = (int(stat.rsplit(b")", 1)[1].split()[1]), command)
    return found


def _replays(workspace: Path) -> list[int]:
    """The processes of a replay of an audit notebook by the MCP server of ``workspace``:
    those under it that run in a folder of verify's own (``analyst-verify-*``)."""
    processes = _processes()
    under = {pid for pid, (_, command) in processes.items()
             if b"mcp" in command and str(workspace).encode() in command}
    grown = True
    while grown:
        more = {pid for pid, (parent, _) in processes.items() if parent in under} - under
        under |= more
        grown = bool(more)
    return sorted(pid for pid in under if b"analyst-verify-" in processes[pid][1])


def test_cancelling_verify_stops_it(tmp_path, sales_db):
    workspace = tmp_path / "ws"

    async def session():
        async with Client(server(workspace, sales_db)) as client:
            made = await client.call_tool("run_sql", {"sql": "SELECT 1 AS one", "name": "one"})
            thread = made.structured_content["thread"]
            ran = await client.call_tool("run_python", {"code": SLOW_ON_REPLAY, "thread": thread})
            assert not ran.is_error, ran.content[0].text
            running = asyncio.Event()

            async def progress(value, total, message):
                if "verify running" in (message or "") and _replays(workspace):
                    running.set()

            call = asyncio.create_task(client.call_tool("verify", {"thread": thread}, progress_callback=progress))
            await asyncio.wait_for(running.wait(), 120)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            deadline = time.monotonic() + 60
            while _replays(workspace) and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            return _replays(workspace)

    assert asyncio.run(session()) == []
