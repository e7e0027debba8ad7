"""The tool block the model is sent on every request: small, each shared schema written once,
and only the tools that can be used on that request; arguments read as before."""

from __future__ import annotations

import json

import duckdb

import jupyter_analyst.agent.tools  # noqa: F401 - registers the built-in tools
from jupyter_analyst.agent.spec import tool_schemas
from jupyter_analyst.agent.tools.arguments import normalize_arguments
from jupyter_analyst.notebooks.outline import AttachedNotebook
from jupyter_analyst.sql import OUTLINE_TABLES
from jupyter_analyst.testing import ScriptedModelServer, TurnRunner, call_step, text_step

#: The most characters the tool block may take with every tool offered (``propose_cells`` is
#: offered only beside an attached notebook, with ``read_cells``; its fields are described, and
#: it can withdraw a proposal).
TOOL_BLOCK_CHARS = 5_800


def offered(request: dict) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools") or []]


def test_the_tool_block_with_every_tool_stays_under_its_budget():
    schemas = tool_schemas()
    assert {"read_cells", "list_tables", "list_artifacts", "run_sql", "plan"} <= {t["function"]["name"] for t in schemas}
    assert len(json.dumps(schemas)) <= TOOL_BLOCK_CHARS
    # `expect` offers what each tool's result can be checked against, and nothing else.
    expect = {t["function"]["name"]: t["function"]["parameters"]["properties"].get("expect") for t in schemas}
    assert set(expect["run_sql"]["properties"]) == {"rows", "columns"}
    assert set(expect["run_python"]["properties"]) == {"count", "artifact_type", "artifact_ids"}


def test_each_turn_offers_only_the_tools_that_can_be_used_and_keeps_them_for_its_calls(analyst):
    a = analyst({"turns": [
        {"match": "^orders", "steps": [
            call_step("run_sql", sql="SELECT region_id, COUNT(*) AS n FROM orders GROUP BY region_id", name="by_region"),
            text_step("[scripted] done"),
        ]},
        {"match": "^and", "steps": [text_step("[scripted] again")]},
    ]})
    summary = a.run("orders by region")
    assert summary.status == "completed", summary.error
    a.run("and now?", thread=summary.thread_id)
    first, second, next_turn = a.server.requests
    # No notebook: no read_cells; every table is in the system message: no list_tables; no
    # artifact yet: no list_artifacts.
    assert offered(first) == ["describe_table", "run_sql", "run_python", "plan", "find", "clarify"]
    # The query made the thread's first artifact, yet the turn's second call is offered the
    # same tools, byte for byte: a provider's prompt cache holds across a turn's calls.
    assert second["tools"] == first["tools"]
    # From the next turn on, the artifact can be listed.
    assert "list_artifacts" in offered(next_turn) and "read_cells" not in offered(next_turn)
    assert len(json.dumps(first["tools"])) < len(json.dumps(tool_schemas()))


def test_a_readable_notebook_brings_read_cells_and_an_unreadable_one_does_not(analyst):
    a = analyst({"turns": [{"steps": [text_step("[scripted] one")]}, {"steps": [text_step("[scripted] two")]}]})
    notebook = {"cells": [{"id": "c1", "cell_type": "code", "source": "x = 1", "outputs": []}], "metadata": {},
                "nbformat": 4, "nbformat_minor": 5}
    a.run("what does my notebook do?", attached=AttachedNotebook(path="a.ipynb", content=notebook))
    a.run("and this one?", attached=AttachedNotebook(path="b.ipynb", problem="it could not be read"))
    assert {"read_cells", "propose_cells"} <= set(offered(a.server.requests[0]))
    assert not {"read_cells", "propose_cells"} & set(offered(a.server.requests[1]))


def test_list_tables_is_offered_when_the_system_message_cannot_list_every_table(tmp_path):
    db = tmp_path / "wide.duckdb"
    with duckdb.connect(str(db)) as conn:
        for n in range(OUTLINE_TABLES + 1):
            conn.execute(f"CREATE TABLE t{n:02d} AS SELECT {n} AS x")
    with ScriptedModelServer({"turns": [{"steps": [call_step("list_tables"), text_step("[scripted] ok")]}]}) as server:
        a = TurnRunner(tmp_path / "ws", server, db)
        assert a.run("which tables are there?").status == "completed"
        assert "list_tables" in offered(server.requests[0])
    (result,) = [e for e in a.events if e.type == "tool_result"]
    assert result.status == "ok" and len(result.result["tables"]) == OUTLINE_TABLES + 1


def test_a_tool_not_offered_still_answers_when_called(analyst):
    a = analyst({"turns": [{"steps": [call_step("list_tables"), text_step("[scripted] ok")]}]})
    assert a.run("which tables?").status == "completed"
    assert "list_tables" not in offered(a.server.requests[0])
    (result,) = [e for e in a.events if e.type == "tool_result"]
    assert result.status == "ok" and {t["name"] for t in result.result["tables"]} >= {"orders", "regions"}


def test_arguments_outside_the_leaner_schemas_are_still_read():
    # `count` is no longer offered to run_sql (rows are its count), but a model that sends it
    # is read as before; so are the repairs (a string number, a single column).
    args = normalize_arguments("run_sql", {"query": "SELECT 1", "name": "x",
                                           "expect": {"count": "1", "columns": "a", "artifact_type": "dataset"}})
    assert args == {"sql": "SELECT 1", "name": "x",
                    "expect": {"count": 1, "columns": ["a"], "artifact_type": "dataset"}}
    assert normalize_arguments("run_python", {"code": "x = 1", "expect": {"rows": 3, "columns": ["a"]}})["expect"] == {
        "rows": 3, "columns": ["a"]}
    # Keys the schema does not name are dropped, as before (no additionalProperties needed).
    assert normalize_arguments("find", {"query": "sales", "limit": 3}) == {"query": "sales"}
