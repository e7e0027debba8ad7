"""Every tool's result is what its model says: real turns (the demo's script, then a turn that
calls every built-in tool, its refusals and failures too) and each ``tool_result`` event's
result validated against its tool's model (agent/tools/result_models.py)."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from pydantic import BaseModel, ValidationError

from jupyter_analyst.agent.tools import BUILTIN, TOOL_NAMES
from jupyter_analyst.agent.tools.result_models import ToolError, result_model_for, result_models_by_tool
from jupyter_analyst.notebooks.outline import AttachedNotebook
from jupyter_analyst.testing import call_step, text_step

_NOTEBOOK = {"cells": [{"id": "c1", "cell_type": "code", "source": "x = 1", "outputs": []}], "metadata": {},
             "nbformat": 4, "nbformat_minor": 5}

#: A turn that calls every built-in tool, with what each refuses and how each fails.
_EVERY_TOOL = {"match": "^explore", "steps": [
    {"tool_calls": [{"name": "list_tables", "arguments": {}},
                    {"name": "describe_table", "arguments": {"table": "orders"}}]},
    # A verdict on the expectation: the query makes 4 rows, not 99.
    call_step("run_sql", sql="SELECT region_id, COUNT(*) AS n FROM orders GROUP BY region_id ORDER BY 1",
              name="by_region", expect={"rows": 99}),
    call_step("run_python", code="import matplotlib.pyplot as plt\nby_region.plot(x='region_id', y='n')\n"
                                 "plt.show()\nby_region.to_csv('outputs/by_region.csv')\nprint(len(by_region))\n"
                                 "by_region.n.sum()"),
    {"tool_calls": [
        {"name": "run_sql", "arguments": {"sql": "", "name": "nothing"}},  # refused: empty
        {"name": "run_sql", "arguments": {"sql": "DELETE FROM orders", "name": "gone"}},  # refused as it is planned
        {"name": "frobnicate", "arguments": {}},  # no such tool
    ]},
    call_step("run_python", code="print('before')\n1 / 0"),  # ran, and failed: its output and its error
    call_step("plan", goal="counts", stages=[
        {"mode": "parallel", "steps": [
            {"id": "q1", "tool": "run_sql", "arguments": {"sql": "SELECT region FROM regions", "name": "names"}}]},
        {"mode": "sequence", "steps": [
            {"id": "p1", "tool": "run_python", "arguments": {"code": "print(len(names))\nraise ValueError('no')"},
             "inputs": ["q1"]},
            {"id": "p2", "tool": "run_python", "arguments": {"code": "print('after')"}, "inputs": ["p1"]}]}]),
    {"tool_calls": [
        {"name": "list_artifacts", "arguments": {"with_code": True}},
        {"name": "find", "arguments": {"query": "region", "with_code": True}},
        {"name": "find", "arguments": {"query": "zzqqxx widgets"}},
        {"name": "read_cells", "arguments": {"cell_ids": ["c1", "ghost"]}},
    ]},
    # A proposal whose code cell ran in the kernel, one whose cell failed, one that names no cell.
    {"tool_calls": [
        {"name": "propose_cells", "arguments": {"changes": [
            {"op": "insert", "after": "c1", "source": "print(x + 1)", "reason": "show x + 1"},
            {"op": "replace", "cell_id": "c1", "cell_type": "markdown", "source": "# x", "reason": "title"}]}},
        {"name": "propose_cells", "arguments": {"changes": [
            {"op": "delete", "cell_id": "c1", "reason": "unused"},
            {"op": "insert", "after": "", "source": "1 / 0", "reason": "fails"}]}},
        {"name": "propose_cells", "arguments": {"changes": [{"op": "delete", "cell_id": "ghost", "reason": "r"}]}},
    ]},
    call_step("clarify", question="Which year?", candidates=["2024", "2025"]),
]}


def _script() -> dict:
    """The demo's turns (a first turn, then ``continue``, which reuses its steps) and the one above."""
    demo = json.loads((resources.files("jupyter_analyst") / "data" / "demo_script.json").read_text())
    return {**demo, "turns": [*demo["turns"], _EVERY_TOOL]}


def test_every_builtin_tool_has_a_result_model():
    assert set(result_models_by_tool()) >= set(TOOL_NAMES)
    assert all(issubclass(spec.result_model, BaseModel) for spec in BUILTIN)


def test_every_result_of_real_turns_is_an_instance_of_its_tools_model(analyst):
    a = analyst(_script())
    first = a.run("Show revenue by region per month")
    assert first.status == "completed", first.error
    again = a.run("continue", thread=first.thread_id)
    assert again.status == "completed", again.error
    a.run("explore everything", thread=first.thread_id, max_steps=30,
          attached=AttachedNotebook(path="a.ipynb", content=_NOTEBOOK))
    results = a.of_type("tool_result")
    seen: dict[tuple[str, str, str], int] = {}
    for event in results:
        model = result_model_for(event.tool, event.status, event.result)
        assert model is not None, event.tool
        try:
            model.model_validate(event.result)
        except ValidationError as exc:  # the model drifted from the code that builds the result
            pytest.fail(f"{event.tool} ({event.status}) result is not a {model.__name__}: {exc}\n{event.result}")
        key = (event.tool, event.status, model.__name__)
        seen[key] = seen.get(key, 0) + 1
    # What the turns were written to reach: every tool's ok result, reuse, refusals and failures.
    ok = {tool for tool, status, _ in seen if status == "ok"}
    assert ok == set(TOOL_NAMES) - {"plan"}, seen
    assert ("plan", "error", "PlanResult") in seen and ("run_python", "error", "RunPythonResult") in seen
    assert {("run_sql", "refused", "ToolError"), ("run_sql", "error", "ToolError"),
            ("frobnicate", "refused", "ToolError")} <= set(seen)
    assert any(e.reused and e.tool == "run_sql" for e in results)
    assert any("expectation" in e.result for e in results if e.tool == "run_sql")
    assert any(e.result.get("artifacts") and "made_by" in e.result["artifacts"][-1]
               for e in results if e.tool == "list_artifacts")


def test_a_result_with_a_key_its_model_does_not_name_fails():
    ok = {"asked": "Which?", "candidates": ["a"], "question_for_user": "Which?\n\n1. a"}
    result_model_for("clarify", "ok", ok).model_validate(ok)
    with pytest.raises(ValidationError):
        result_model_for("clarify", "ok", ok).model_validate({**ok, "new_key": 1})
    with pytest.raises(ValidationError):
        ToolError.model_validate({"error": {"message": "no reason"}})
