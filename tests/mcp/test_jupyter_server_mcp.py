"""The analyst's tools inside Jupyter's own MCP server: a real Jupyter server with the
jupyter-server-mcp extension lists them (from their entry point) on its MCP endpoint, and
one runs on the server's own analyst (its sources, its workspace) as its user."""

from __future__ import annotations

import asyncio
import re

from mcp.client import Client

from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess, free_port
from jupyter_analyst.testing.slow_queries import build_join_db
from jupyter_analyst.workspace import Workspace


def test_the_analysts_tools_refuse_to_run_there_unless_the_owner_allows_them(tmp_path, sales_db):
    """Jupyter's MCP server answers on a port of its own, without the Jupyter token: any
    local user reaching it could run code as the owner. Off by default, said plainly."""
    port = free_port()
    with JupyterServerProcess(tmp_path, sources={"sales": str(sales_db)}, model_url="http://127.0.0.1:9/v1",
                              mcp_port=port):
        async def session():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                return await client.call_tool("analyst_run_python", {"code": "print(open('/etc/hostname').read())"})

        refused = asyncio.run(session())
    text = " ".join(getattr(part, "text", "") for part in refused.content)
    assert refused.is_error and "c.AnalystApp.jupyter_mcp_tools = True" in text, text
    workspace = Workspace(tmp_path / "ws")
    try:
        assert workspace.store.list_threads() == [], "nothing ran"
    finally:
        workspace.close()


def test_jupyters_mcp_server_lists_and_runs_the_analysts_tools(tmp_path, sales_db):
    port = free_port()
    extra = ["--AnalystApp.jupyter_mcp_tools=True"]
    joins = build_join_db(tmp_path / "joins.duckdb")
    with JupyterServerProcess(tmp_path, sources={"sales": str(sales_db), "joins": str(joins)},
                              model_url="http://127.0.0.1:9/v1", extra=extra, mcp_port=port):
        async def session():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                tools = (await client.list_tools()).tools
                tables = await client.call_tool("analyst_list_tables", {})
                failed = await client.call_tool("analyst_run_python", {
                    "code": "raise ValueError('boom')", "thread": tables.structured_content["thread"]})
                sources = await client.call_tool("analyst_list_sources", {})
                chosen = await client.call_tool("analyst_list_tables", {"source": "joins"})
                unknown = await client.call_tool("analyst_list_tables", {"source": "/etc/passwd"})
                return tools, tables, failed, sources, chosen, unknown

        tools, tables, failed, sources, chosen, unknown = asyncio.run(session())
    names = {tool.name for tool in tools}
    assert {"analyst_run_sql", "analyst_run_python", "analyst_list_tables", "analyst_ask", "analyst_threads"} <= names
    for tool in tools:  # every parameter of the analyst's tools says what it is
        if tool.name.startswith("analyst_"):
            for name, schema in tool.input_schema["properties"].items():
                said = schema.get("description") or ""
                one_sentence = not re.search(r"\w\. [A-Z]", said)
                assert said and len(said) <= 120 and one_sentence, f"{tool.name}.{name}: {said}"
    # `thread` is optional only where leaving it out starts a new thread.
    optional = {t.name for t in tools if "thread" in t.input_schema["properties"]
                and "thread" not in t.input_schema.get("required", [])}
    assert optional == {"analyst_list_tables", "analyst_describe_table", "analyst_run_sql", "analyst_run_python",
                        "analyst_ask"}
    assert all("source" in t.input_schema["properties"] for t in tools if t.name in (
        "analyst_list_tables", "analyst_describe_table", "analyst_run_sql", "analyst_run_python", "analyst_ask"))
    assert not tables.is_error, tables.content
    thread = tables.structured_content["thread"]
    # The result's text once, as the analyst's own server gives it: not the text and the
    # facts JSON-encoded together into one string.
    text = tables.content[0].text
    assert text.startswith(f"[thread {thread}, source sales] list_tables ok") and '\\"' not in text
    assert not text.lstrip().startswith("{") and len(tables.content) == 1
    assert failed.is_error and "boom" in failed.content[0].text
    assert failed.structured_content["status"] == "error" and failed.structured_content["thread"] == thread
    assert {"orders", "regions", "products"} <= {t["name"] for t in tables.structured_content["result"]["tables"]}
    # A client chooses among the configured sources by name, and only among them.
    assert [s["name"] for s in sources.structured_content["sources"]] == ["sales", "joins"]
    assert chosen.structured_content["source"] == "joins" and tables.structured_content["source"] == "sales"
    assert not chosen.is_error and {t["name"] for t in chosen.structured_content["result"]["tables"]} == {"a", "b"}
    assert unknown.is_error and unknown.structured_content["error"]["reason"] == "unknown_source"
    assert "sales, joins" in unknown.content[0].text
    workspace = Workspace(tmp_path / "ws")
    try:  # a thread of the server's own workspace, its user's, on its configured source
        record = workspace.store.get_thread(thread, user="local")
    finally:
        workspace.close()
    assert record.source == str(sales_db)
