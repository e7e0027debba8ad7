"""A client agent chooses among the user's sources by name: `jupyter analyst mcp --db PATH
--source NAME=PATH`, a real server process, driven by the SDK's own client over stdio and HTTP.
A thread stays on its source; every result says which thread and source it ran on; nothing a
client is sent carries a path of this machine."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from jupyter_analyst.testing.servers.jupyter import free_port, stop_process
from jupyter_analyst.testing.slow_queries import build_join_db

pytestmark = pytest.mark.process  # each test starts the server process

TOKEN = "mcp-sources-token"


def arguments(workspace: Path, sales: Path, joins: Path) -> list[str]:
    return ["-m", "jupyter_analyst.cli", "mcp", "--workspace", str(workspace), "--no-summarizer",
            "--db", str(sales), "--source", f"joins={joins}"]


def sent(result) -> str:
    """Everything a result carries to the client: its text and its structured content."""
    return " ".join(getattr(part, "text", "") for part in result.content) + json.dumps(result.structured_content)


def test_a_client_lists_the_sources_by_name_and_starts_threads_on_them(tmp_path, sales_db):
    joins = build_join_db(tmp_path / "joins.duckdb")

    async def session():
        params = StdioServerParameters(command=sys.executable, args=arguments(tmp_path / "ws", sales_db, joins))
        async with Client(params) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            listed = await client.call_tool("list_sources", {})
            default = await client.call_tool("run_sql", {"sql": "SELECT COUNT(*) AS n FROM orders", "name": "n"})
            chosen = await client.call_tool("run_sql", {"sql": "SELECT COUNT(*) AS n FROM b", "name": "n",
                                                        "source": "joins"})
            thread = chosen.structured_content["thread"]
            stays = await client.call_tool("describe_table", {"table": "a", "thread": thread})
            same = await client.call_tool("list_tables", {"thread": thread, "source": "joins"})
            other = await client.call_tool("list_tables", {"thread": thread, "source": "sales"})
            threads = await client.call_tool("threads", {})
            state = await client.call_tool("thread_state", {"thread": thread})
            again = await client.call_tool("list_sources", {})
            return tools, listed, default, chosen, stays, same, other, threads, state, again

    tools, listed, default, chosen, stays, same, other, threads, state, again = asyncio.run(session())
    # The schema names the sources a client may choose.
    for name in ("list_tables", "describe_table", "run_sql", "run_python", "ask"):
        described = tools[name].input_schema["properties"]["source"]["description"]
        assert "sales, joins (default sales)" in described and "never a path" in described, name
    sources = listed.structured_content["sources"]
    assert listed.structured_content["default"] == "sales"
    assert [(s["name"], s["kind"], s["default"]) for s in sources] == [("sales", "duckdb", True),
                                                                      ("joins", "duckdb", False)]
    assert {t["name"]: t["rows"] for t in sources[1]["tables"]} == {"a": 100_000, "b": 1_000}
    assert {"orders", "regions", "products"} <= {t["name"] for t in sources[0]["tables"]}
    # Counts as the agent's own prompt says them; the description's promise kept.
    assert "- joins, duckdb: a (100,000 rows), b (1,000 rows)" in listed.content[0].text
    assert "you have 0 threads (the threads tool lists them)" in listed.content[0].text
    assert "you have 2 threads" in again.content[0].text and "how many threads" in tools["list_sources"].description
    for name in ("thread_state", "verify", "list_artifacts", "restart_kernel"):  # list_sources names no thread
        assert "list_sources" not in tools[name].input_schema["properties"]["thread"]["description"], name
    # Each result says its thread and its source, in its text and its facts.
    assert default.structured_content["source"] == "sales" and chosen.structured_content["source"] == "joins"
    thread = chosen.structured_content["thread"]
    assert chosen.content[0].text.startswith(f"[thread {thread}, source joins] run_sql ok")
    assert chosen.structured_content["result"]["rows"] == 1
    # A thread stays on its source: it is said again when named, refused when another is named.
    assert not stays.is_error and stays.structured_content["source"] == "joins"
    assert not same.is_error and {t["name"] for t in same.structured_content["result"]["tables"]} == {"a", "b"}
    assert other.is_error and other.structured_content["error"]["reason"] == "source_of_thread"
    # The refusal is headed by the thread and its source, as the thread's results are, and says which it is on.
    assert other.content[0].text.startswith(f"[thread {thread}, source joins] thread {thread} is on source joins, "
                                            "not sales"), other.content[0].text
    assert (other.structured_content["thread"], other.structured_content["source"]) == (thread, "joins")
    assert {t["thread"]: t["source"] for t in threads.structured_content["threads"]} == {
        thread: "joins", default.structured_content["thread"]: "sales"}
    assert state.structured_content["source"] == "joins"
    assert {t["source"] for t in again.structured_content["threads"]} == {"sales", "joins"}
    # Names only: no path of this machine reaches the client (nor its model provider).
    for result in (listed, default, chosen, stays, same, other, threads, state, again):
        assert str(tmp_path) not in sent(result) and str(sales_db.parent) not in sent(result)


def test_one_row_is_said_one_row(tmp_path):
    import duckdb

    with duckdb.connect(str(tmp_path / "one.duckdb")) as conn:
        conn.execute("CREATE TABLE demo_script AS SELECT 1 AS step")
        conn.execute("CREATE TABLE steps AS SELECT i FROM range(2400) t(i)")

    async def session():
        params = StdioServerParameters(command=sys.executable, args=[
            "-m", "jupyter_analyst.cli", "mcp", "--workspace", str(tmp_path / "ws"), "--no-summarizer",
            "--db", str(tmp_path / "one.duckdb")])
        async with Client(params) as client:
            return await client.call_tool("list_sources", {})

    text = asyncio.run(session()).content[0].text
    assert "demo_script (1 row)" in text and "steps (2,400 rows)" in text, text


def test_sources_are_chosen_by_name_over_http(tmp_path, sales_db):
    joins = build_join_db(tmp_path / "joins.duckdb")
    port = free_port()
    with open(tmp_path / "mcp.log", "wb") as log:
        proc = subprocess.Popen([sys.executable, *arguments(tmp_path / "ws", sales_db, joins), "--http",
                                 "--port", str(port), "--token", TOKEN], stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:  # until it answers (without the token: 401)
            try:
                urllib.request.urlopen(url, timeout=5)
            except urllib.error.HTTPError:
                break
            except (urllib.error.URLError, ConnectionError):
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "mcp.log").read_text()
                time.sleep(0.1)

        async def session():
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                listed = await client.call_tool("list_sources", {})
                made = await client.call_tool("list_tables", {"source": "joins"})
                refused = await client.call_tool("list_tables", {"source": str(joins)})
                return listed, made, refused

        listed, made, refused = asyncio.run(session())
    finally:
        stop_process(proc)
    assert [s["name"] for s in listed.structured_content["sources"]] == ["sales", "joins"]
    assert not made.is_error and made.structured_content["source"] == "joins"
    assert {t["name"] for t in made.structured_content["result"]["tables"]} == {"a", "b"}
    assert refused.is_error and refused.structured_content["error"]["sources"] == ["sales", "joins"]
    assert "joins.duckdb" not in sent(refused) and "sales, joins" in refused.content[0].text
