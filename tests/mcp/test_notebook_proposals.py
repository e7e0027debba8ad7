"""``ask`` beside a notebook of the MCP server's notebook folder (``--notebooks DIR``): the cells
the model proposed come back as structured diffs, described in the tool's output schema, and
``accept_proposal``, ``reject_proposal`` and ``revert_turn`` apply a decision to the file. A real
`jupyter analyst mcp` process, driven by the SDK's client, with the scripted model over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.process, pytest.mark.kernel]

PROPOSE = {"turns": [{"match": ".", "steps": [
    {"tool_calls": [{"name": "propose_cells", "arguments": {"changes": [
        {"op": "insert", "after": "c1", "source": "print('sum is', 40 + 2)", "reason": "add the sum"},
        {"op": "replace", "cell_id": "c2", "source": "y = 3", "reason": "y is 3"}]}}]},
    {"content": "[scripted model] proposed two changes"},
]}]}


def study() -> dict[str, Any]:
    cells = [{"id": "c1", "cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": "x = 1"},
             {"id": "c2", "cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": "y = 2"}]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def sources(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


def server(tmp_path: Path, source: Path, *extra: str) -> StdioServerParameters:
    args = ["-m", "jupyter_analyst.cli", "mcp", "--workspace", str(tmp_path / "ws"), "--no-summarizer",
            "--db", str(source), *extra]
    return StdioServerParameters(command=sys.executable, args=args, env={**os.environ, "OPENAI_API_KEY": "x"})


@pytest.fixture
def model():
    from jupyter_analyst.testing import ScriptedModelServer

    with ScriptedModelServer(PROPOSE) as scripted:
        yield scripted


def test_ask_beside_a_notebook_returns_structured_diffs_and_the_decisions_apply(tmp_path, sales_db, model):
    folder = tmp_path / "notebooks"
    (folder / "work").mkdir(parents=True)
    notebook = folder / "work" / "study.ipynb"
    notebook.write_text(json.dumps(study()))
    before = notebook.read_bytes()

    async def session():
        async with Client(server(tmp_path, sales_db, "--base-url", model.base_url, "--notebooks", str(folder))) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            asked = await client.call_tool("ask", {"prompt": "improve it", "notebook": "work/study.ipynb"})
            thread = asked.structured_content["thread"]
            (proposal,) = asked.structured_content["proposals"]
            pid = proposal["proposal_id"]
            out = {"tools": tools, "asked": asked, "untouched": notebook.read_bytes() == before}
            out["one"] = await client.call_tool("accept_proposal", {"thread": thread, "proposal": pid, "cells": ["c2"]})
            out["after_one"] = sources(notebook)
            out["rest"] = await client.call_tool("reject_proposal", {"thread": thread, "proposal": pid})
            out["revert"] = await client.call_tool("revert_turn", {"thread": thread, "turn": proposal["turn_id"]})
            out["unknown"] = await client.call_tool("accept_proposal", {"thread": thread, "proposal": "prop_nope"})
            out["missing"] = await client.call_tool("ask", {"prompt": "x", "notebook": "nope.ipynb", "thread": thread})
            out["outside"] = await client.call_tool("ask", {"prompt": "x", "notebook": "../secret.ipynb"})
            return out

    out = asyncio.run(session())
    tools, asked = out["tools"], out["asked"]
    # The output schema describes the structured diffs.
    schema = tools["ask"].output_schema
    assert "proposals" in schema["properties"] and "notebook" in tools["ask"].input_schema["properties"]
    change_schema = json.dumps(schema)
    assert all(k in change_schema for k in ("old_source", "new_source", "diff", "sandbox"))
    assert {"accept_proposal", "reject_proposal", "revert_turn"} <= set(tools)

    assert not asked.is_error, asked.content[0].text
    assert out["untouched"]
    (proposal,) = asked.structured_content["proposals"]
    assert proposal["notebook"] == "work/study.ipynb" and proposal["status"] == "pending" and not proposal["failed"]
    insert, replace = proposal["changes"]
    assert (insert["op"], insert["after"], insert["old_source"], insert["new_source"]) == (
        "insert", "c1", "", "print('sum is', 40 + 2)")
    assert insert["sandbox"]["status"] == "ok" and insert["sandbox"]["output"] == "sum is 42\n"
    assert (replace["op"], replace["cell_id"], replace["reason"], replace["old_source"], replace["new_source"]) == (
        "replace", "c2", "y is 3", "y = 2", "y = 3")
    assert replace["diff"].splitlines()[-2:] == ["-y = 2", "+y = 3"]
    assert replace["diff"].startswith("--- work/study.ipynb#c2\n+++ work/study.ipynb#c2 (proposed)")
    text = asked.content[0].text
    assert "proposal prop_" in text and "+y = 3" in text and "accept_proposal" in text
    assert str(tmp_path) not in text  # no path of this machine

    assert not out["one"].is_error, out["one"].content[0].text
    assert out["after_one"] == ["x = 1", "y = 3"]
    assert [c["status"] for c in out["one"].structured_content["proposals"][0]["changes"]] == ["pending", "accepted"]
    assert [c["status"] for c in out["rest"].structured_content["proposals"][0]["changes"]] == ["rejected", "accepted"]
    assert out["revert"].structured_content["reverted"] == ["c2"] and notebook.read_bytes() == before

    assert out["unknown"].is_error and "unknown proposal 'prop_nope'" in out["unknown"].content[0].text
    assert out["missing"].is_error and "there is no notebook 'nope.ipynb'" in out["missing"].content[0].text
    assert out["outside"].is_error and "is not a notebook of the notebook folder" in out["outside"].content[0].text


def test_a_server_without_a_notebook_folder_has_no_decisions_and_ask_takes_no_notebook(tmp_path, sales_db, model):
    async def session():
        async with Client(server(tmp_path, sales_db, "--base-url", model.base_url)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return tools

    tools = asyncio.run(session())
    assert "accept_proposal" not in tools and "notebook" not in tools["ask"].input_schema["properties"]
    from jupyter_analyst.errors import ConfigError
    from jupyter_analyst.mcp.notebook_desk import NotebookDesk

    with pytest.raises(ConfigError, match="is not a folder"):
        NotebookDesk(tmp_path / "nope")
    folder = tmp_path / "nb"
    folder.mkdir()
    (tmp_path / "real.ipynb").write_text(json.dumps(study()))
    os.symlink(tmp_path / "real.ipynb", folder / "link.ipynb")
    with pytest.raises(ConfigError, match="goes through a link"):
        NotebookDesk(folder).path("link.ipynb")
    with pytest.raises(ConfigError, match="not a notebook of the notebook folder"):
        NotebookDesk(folder).path(str(tmp_path / "real.ipynb"))


def test_in_jupyters_mcp_server_ask_proposes_into_a_notebook_of_its_root_and_the_panel_sees_the_decision(
        tmp_path, sales_db, model):
    from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess, free_port

    port = free_port()
    (tmp_path / "work").mkdir()
    notebook = tmp_path / "work" / "study.ipynb"
    notebook.write_text(json.dumps(study()))
    with JupyterServerProcess(tmp_path, sources={"sales": str(sales_db)}, model_url=model.base_url, mcp_port=port,
                              extra=["--AnalystApp.jupyter_mcp_tools=True", "--AnalystApp.summarizer=False"]) as jupyter:
        async def session():
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                asked = await client.call_tool("analyst_ask", {"prompt": "improve it", "notebook": "work/study.ipynb"})
                thread = asked.structured_content["thread"]
                (proposal,) = asked.structured_content["proposals"]
                accepted = await client.call_tool("analyst_accept_proposal", {
                    "thread": thread, "proposal": proposal["proposal_id"], "cells": ["c2"]})
                gone = await client.call_tool("analyst_ask", {"prompt": "x", "notebook": "work/none.ipynb"})
                return asked, accepted, gone

        asked, accepted, gone = asyncio.run(session())
        thread = asked.structured_content["thread"]
        listed = jupyter.request(f"/analyst/api/threads/{thread}/proposals")["proposals"]
    assert not asked.is_error, asked.content[0].text
    (proposal,) = asked.structured_content["proposals"]
    assert proposal["notebook"] == "work/study.ipynb"
    assert [c["diff"].splitlines()[-1] for c in proposal["changes"]] == ["+print('sum is', 40 + 2)", "+y = 3"]
    assert not accepted.is_error, accepted.content[0].text
    assert sources(notebook) == ["x = 1", "y = 3"]
    # The panel's API lists the same proposal with the decision taken over MCP.
    assert [c["status"] for c in listed[0]["changes"]] == ["pending", "accepted"]
    assert gone.is_error and "there is no notebook 'work/none.ipynb'" in gone.content[0].text
