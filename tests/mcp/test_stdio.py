"""The analyst's MCP server as a client agent sees it: a real `jupyter analyst mcp` process,
driven by the official SDK's own client over stdio, on a real DuckDB file and kernel."""

from __future__ import annotations

import asyncio
import hashlib
import re
import sys
import time
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from jupyter_analyst.workspace import Workspace

pytestmark = pytest.mark.process  # each test starts the server process

REVENUE = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id ORDER BY region_id"
CHART = "import matplotlib.pyplot as plt\nrevenue.plot.bar(x='region_id', y='revenue')\nplt.show()\nprint(len(revenue))"
SLOW = "import time\nfor i in range(4):\n    print(i, flush=True)\n    time.sleep(1)\nprint('done')"
ENDLESS = "import time\nwhile True:\n    time.sleep(0.2)"


def server(workspace: Path, source: Path | None, *extra: str) -> StdioServerParameters:
    args = ["-m", "jupyter_analyst.cli", "mcp", "--workspace", str(workspace), "--no-summarizer", *extra]
    return StdioServerParameters(command=sys.executable, args=args + (["--db", str(source)] if source else []))


def run(work) -> object:
    return asyncio.run(work)


def test_tools_are_listed_with_their_annotations(tmp_path, sales_db):
    async def listing():
        async with Client(server(tmp_path / "ws", sales_db)) as client:
            return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in run(listing())}
    assert set(tools) == {"list_sources", "threads", "list_tables", "describe_table", "run_sql", "run_python",
                          "restart_kernel", "list_artifacts", "get_artifact", "thread_state", "verify", "ask"}
    for tool in tools.values():
        assert tool.annotations.destructive_hint is False and tool.annotations.open_world_hint is False
    assert {n for n, t in tools.items() if t.annotations.read_only_hint} == {
        "list_sources", "threads", "list_tables", "describe_table", "list_artifacts", "get_artifact", "thread_state",
        "verify"}
    assert "thread" in tools["run_sql"].input_schema["properties"]
    # Each parameter in one sentence: the long form of `thread` and `source` is the instructions'
    # once, not a paragraph repeated in every tool's schema.
    for tool in tools.values():
        for name, schema in tool.input_schema["properties"].items():
            said = schema["description"]
            one_sentence = said.endswith(".") and not re.search(r"\w\. [A-Z]", said)
            assert len(said) <= 120 and one_sentence, (tool.name, name, said)
    # Each result's structured content has its schema, for a client to rely on.
    assert all(tool.output_schema and tool.output_schema["type"] == "object" for tool in tools.values())
    assert {"thread", "status", "reused", "result", "artifacts"} <= set(tools["run_sql"].output_schema["properties"])


def test_sql_then_python_chart_read_back_as_a_resource_and_reuse(tmp_path, sales_db):
    async def session():
        async with Client(server(tmp_path / "ws", sales_db)) as client:
            first = await client.call_tool("run_sql", {"sql": REVENUE, "name": "revenue"})
            thread = first.structured_content["thread"]
            python = await client.call_tool("run_python", {"code": CHART, "thread": thread})
            chart = next(a for a in python.structured_content["artifacts"] if a["type"] == "image")
            blob = await client.read_resource(chart["uri"])
            again = await client.call_tool("run_sql", {"sql": REVENUE, "name": "revenue", "thread": thread})
            where = await client.call_tool("get_artifact", {"fingerprint": chart["fingerprint"]})
            state = await client.call_tool("thread_state", {"thread": thread})
            verified = await client.call_tool("verify", {"thread": thread})
            return first, python, chart, blob, again, where, state, verified

    first, python, chart, blob, again, where, state, verified = run(session())
    assert not first.is_error and first.structured_content["result"]["rows"] == 5
    assert not python.is_error and python.structured_content["result"]["stdout"].strip() == "5"
    data = blob.contents[0]
    import base64

    raw = base64.b64decode(data.blob)
    assert "sha256:" + hashlib.sha256(raw).hexdigest() == chart["fingerprint"]
    assert chart["uri"] == "analyst://artifact/" + chart["fingerprint"]
    assert data.blob not in python.content[0].text  # the bytes are a resource, never inline
    assert again.structured_content["reused"] is True
    assert where.structured_content["uri"] == chart["uri"] and where.structured_content["size"] == len(raw)
    assert len(state.structured_content["turns"]) == 3
    assert not verified.is_error and verified.structured_content["verdict"] == "verified", verified.content[0].text
    assert again.structured_content["artifacts"][0]["fingerprint"] == first.structured_content["artifacts"][0]["fingerprint"]
    workspace = Workspace(tmp_path / "ws")
    try:  # an ordinary thread, in the store the panel's API reads
        assert [t.status for t in workspace.store.turns(first.structured_content["thread"])] == ["completed"] * 3
    finally:
        workspace.close()


def test_a_datasets_text_is_what_the_agents_model_is_sent_and_its_facts_are_whole(tmp_path, sales_db):
    """The text says each thing once (the intent's note, not its object too) and shows values as the
    agent's own results do (a float's sum noise rounded); the structured content keeps everything."""
    sql = "SELECT 150581.0899999998::DOUBLE AS revenue, 'north' AS region"

    async def session():
        async with Client(server(tmp_path / "ws", sales_db)) as client:
            return await client.call_tool("run_sql", {"sql": sql, "name": "total"})

    result = run(session())
    text = result.content[0].text
    assert not result.is_error, text
    facts = result.structured_content["result"]
    assert facts["intent"] and facts["intent_note"] and facts["sample"] == [{"revenue": 150581.0899999998,
                                                                             "region": "north"}]
    assert '"intent"' not in text and text.count(facts["intent_note"]) == 1
    assert "150581.09" in text and "150581.0899999998" not in text
    assert '"truncated"' not in text and '"data": [[150581.09, "north"]]' in text


def test_a_tables_long_sample_values_are_cut_in_the_text_as_the_agents_model_is_sent_them(tmp_path):
    import duckdb

    document = "{" + ", ".join(f'"field_{i}": "{"v" * 30}"' for i in range(100)) + "}"  # about 4 KB of JSON
    path = tmp_path / "docs.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE docs AS SELECT ?::VARCHAR AS body, 'short' AS tag", [document])

    async def session():
        async with Client(server(tmp_path / "ws", path)) as client:
            return await client.call_tool("describe_table", {"table": "docs"})

    result = run(session())
    text = result.content[0].text
    assert not result.is_error, text
    assert f"... (cut here: {len(document):,} characters in all)" in text and document[:400] not in text
    assert len(text) < 1_500
    assert result.structured_content["result"]["sample"][0]["body"] == document  # the facts stay whole


def test_a_hostile_query_is_refused_with_the_guards_message(tmp_path, sales_db):
    async def session():
        async with Client(server(tmp_path / "ws", sales_db)) as client:
            return await client.call_tool("run_sql", {"sql": "SELECT * FROM read_csv('/etc/passwd')", "name": "x"})

    result = run(session())
    assert result.is_error
    assert "read_csv" in result.content[0].text and "root:" not in result.content[0].text
    assert result.structured_content["artifacts"] == []


def test_progress_arrives_during_a_slow_step(tmp_path, sales_db):
    async def session():
        seen: list[tuple[float, str | None]] = []

        async def progress(value, total, message):
            seen.append((value, message))

        async with Client(server(tmp_path / "ws", sales_db)) as client:
            result = await client.call_tool("run_python", {"code": SLOW}, progress_callback=progress)
        return result, seen

    result, seen = run(session())
    assert not result.is_error and "done" in result.structured_content["result"]["stdout"]
    assert any("run_python running" in (message or "") for _, message in seen)  # beats while the step ran
    values = [value for value, _ in seen]
    assert values == sorted(values) and len(values) >= 3


def test_cancelling_a_call_stops_the_step(tmp_path, sales_db):
    async def session():
        started = asyncio.Event()
        called: list[str] = []

        async def progress(value, total, message):
            # A beat once the call has started (its thread made): a loaded machine can beat
            # before the source has opened.
            if (message or "").startswith("tool_call"):
                called.append(message)
            if called and "running" in (message or ""):
                started.set()

        async with Client(server(tmp_path / "ws", sales_db)) as client:
            call = asyncio.create_task(client.call_tool("run_python", {"code": ENDLESS}, progress_callback=progress))
            await asyncio.wait_for(started.wait(), 60)
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            # The server goes on answering while the stopped step ends its turn (the kernel
            # interrupted, turn_ended told): asked until the turn is no longer running.
            thread = (await client.call_tool("list_sources", {})).structured_content["threads"][0]["thread"]
            deadline = time.monotonic() + 60
            while True:
                state = await client.call_tool("thread_state", {"thread": thread})
                turns = state.structured_content["turns"]
                if turns[-1]["status"] != "running" or time.monotonic() > deadline:
                    return turns
                await asyncio.sleep(0.1)

    turns = run(session())
    assert [t["status"] for t in turns] == ["interrupted"]


def test_ask_runs_a_whole_turn_of_the_analyst_and_gives_its_answers_receipts(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer
    from jupyter_analyst.testing import sql_step, text_step

    answer = "The first region earned 150,581.09, up 12%."
    script = {"turns": [{"match": ".", "steps": [sql_step(REVENUE, "revenue"), text_step(answer)]}]}
    model = ScriptedModelServer(script).start()
    try:
        async def session():
            async with Client(server(tmp_path / "ws", sales_db, "--base-url", model.base_url)) as client:
                return await client.call_tool("ask", {"prompt": "Revenue by region"})

        result = run(session())
    finally:
        model.stop()
    assert not result.is_error, result.content[0].text
    assert result.structured_content["status"] == "completed"
    assert [a["type"] for a in result.structured_content["artifacts"]] == ["dataset"]
    (cited,) = result.structured_content["citations"]
    assert (cited["text"], cited["row"], cited["column"]) == ("150,581.09", 0, "revenue")
    assert cited["artifact_id"] == result.structured_content["artifacts"][0]["id"]
    assert [u["text"] for u in result.structured_content["unsupported"]] == ["12%"]
    assert "no result holds these numbers of the answer: 12%" in result.content[0].text


def test_ask_is_held_to_the_budget_given(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer, text_step

    model = ScriptedModelServer({"turns": [{"match": ".", "steps": [text_step()]}]}).start()
    try:
        async def session():
            async with Client(server(tmp_path / "ws", sales_db, "--base-url", model.base_url,
                                     "--budget", "user/day=1 tokens")) as client:
                first = await client.call_tool("ask", {"prompt": "Revenue by region"})
                return first, await client.call_tool("ask", {"prompt": "Revenue by region, again"})

        first, second = run(session())
    finally:
        model.stop()
    assert first.structured_content["status"] == "completed"
    assert second.structured_content["status"] == "budget_exhausted"
    assert "the daily budget of user 'local' is spent:" in second.content[0].text
    assert len(model.requests) == 1
