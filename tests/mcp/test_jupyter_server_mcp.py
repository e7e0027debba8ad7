"""The analyst's tools inside Jupyter's own MCP server: a real Jupyter server with the
jupyter-server-mcp extension lists them (from their entry point) on its MCP endpoint, and
one runs on the server's own analyst (its sources, its workspace) as its user. That server reads
no resources: a result names each artifact by the tool call that fetches it, and a chart comes
back as an image."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re

from mcp.client import Client
from mcp_types import EmbeddedResource, ImageContent, ResourceLink

from jupyter_analyst.testing import ScriptedModelServer, python_step, sql_step, text_step
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


REVENUE = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id ORDER BY region_id"
CHART = "import matplotlib.pyplot as plt\nrevenue.plot.bar(x='region_id', y='revenue')\nplt.show()"
#: The kernel process's start time (its pid is the same in every sandbox).
KERNEL_START = "print(open('/proc/self/stat').read().rsplit(')', 1)[1].split()[19])"


def _said(result) -> str:
    return " ".join(getattr(part, "text", "") for part in result.content)


def test_a_chart_turn_gives_an_image_its_artifacts_are_fetched_by_a_tool_and_a_thread_verifies_and_restarts(
        tmp_path, sales_db):
    port = free_port()
    script = {"turns": [{"match": "chart", "steps": [sql_step(REVENUE, "revenue"), python_step(CHART),
                                                     text_step("[scripted model] North leads.")]}]}
    with ScriptedModelServer(script) as model, JupyterServerProcess(
            tmp_path, sources={"sales": str(sales_db)}, model_url=model.base_url, mcp_port=port,
            extra=["--AnalystApp.jupyter_mcp_tools=True", "--AnalystApp.summarizer=False"]):
        async def session():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                asked = await client.call_tool("analyst_ask", {"prompt": "a chart of revenue by region"})
                thread = asked.structured_content["thread"]
                fetched = {view["type"]: await client.call_tool(view["fetch"]["tool"], view["fetch"]["arguments"])
                           for view in asked.structured_content["artifacts"]}
                listed = await client.call_tool("analyst_list_artifacts", {"thread": thread})
                unknown = await client.call_tool("analyst_get_artifact", {"fingerprint": "sha256:" + "0" * 64})
                verified = await client.call_tool("analyst_verify", {"thread": thread})
                before = await client.call_tool("analyst_run_python", {"code": KERNEL_START, "thread": thread})
                restarted = await client.call_tool("analyst_restart_kernel", {"thread": thread})
                after = await client.call_tool("analyst_run_python", {"code": KERNEL_START, "thread": thread,
                                                                       "rerun": True})
                again = await client.call_tool("analyst_run_python", {"code": "print(len(revenue))",
                                                                       "thread": thread})
                return names, asked, fetched, listed, unknown, verified, before, restarted, after, again

        names, asked, fetched, listed, unknown, verified, before, restarted, after, again = asyncio.run(session())
    assert {"analyst_get_artifact", "analyst_verify", "analyst_restart_kernel"} <= names
    assert not asked.is_error and asked.structured_content["status"] == "completed", _said(asked)
    views = {view["type"]: view for view in asked.structured_content["artifacts"]}
    assert set(views) == {"dataset", "image"}
    # The chart turn's chart is in its result as an image, the very PNG of the artifact.
    (image,) = [part for part in asked.content if isinstance(part, ImageContent)]
    png = base64.b64decode(image.data)
    assert image.mime_type == "image/png" and png.startswith(b"\x89PNG")
    assert "sha256:" + hashlib.sha256(png).hexdigest() == views["image"]["fingerprint"]
    # No link this host cannot follow: every artifact is named by the call that fetches it.
    for result in (asked, listed, verified):
        assert "analyst://" not in _said(result) + json.dumps(result.structured_content), _said(result)
        assert not any(isinstance(part, ResourceLink) for part in result.content)
    for view in views.values():
        call = {"tool": "analyst_get_artifact", "arguments": {"fingerprint": view["fingerprint"]}}
        assert view["fetch"] == call and f'analyst_get_artifact {{"fingerprint": "{view["fingerprint"]}"}}' in \
            _said(asked)
    assert [v["fetch"] for v in listed.structured_content["artifacts"]] == [v["fetch"] for v in views.values()]
    # The audit notebook by its path under the Jupyter server's root, where its file tools find it.
    thread = asked.structured_content["thread"]
    assert asked.structured_content["notebook"] == f"ws/threads/{thread}/notebook.ipynb"
    # Fetched: the chart as an image, the dataset as its Parquet bytes, each the artifact's own.
    chart = [part for part in fetched["image"].content if isinstance(part, ImageContent)]
    assert not fetched["image"].is_error and [base64.b64decode(c.data) for c in chart] == [png]
    (embedded,) = [part for part in fetched["dataset"].content if isinstance(part, EmbeddedResource)]
    parquet = base64.b64decode(embedded.resource.blob)
    assert parquet.startswith(b"PAR1") and embedded.resource.mime_type == "application/vnd.apache.parquet"
    assert "sha256:" + hashlib.sha256(parquet).hexdigest() == views["dataset"]["fingerprint"]
    assert fetched["dataset"].structured_content["name"] == "revenue"
    assert unknown.is_error and unknown.structured_content["error"]["reason"] == "artifact_not_found"
    # verify re-executes the thread's notebook there too; restart_kernel gives the next step a fresh kernel.
    assert not verified.is_error and verified.structured_content["verdict"] == "verified", _said(verified)
    assert not restarted.is_error and restarted.structured_content["stopped"] is True, _said(restarted)
    kernel = [r.structured_content["result"]["stdout"].strip() for r in (before, after)]
    assert not after.is_error and kernel[0] != kernel[1], kernel
    assert again.structured_content["result"]["stdout"].strip() == "5"  # its datasets restored in the new one
