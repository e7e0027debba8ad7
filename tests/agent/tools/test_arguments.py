"""Tool-argument normalisation, from the fixture table tests/fixtures/agent/tools/arguments.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_analyst.agent.tools.arguments import (
    normalize_arguments,
    normalize_arguments_verbose,
    strip_fence,
)
from jupyter_analyst.agent.tools import TOOL_NAMES, TOOLS
from jupyter_analyst.errors import InvalidArguments, ToolRetry

FIXTURE = Path(__file__).parents[2] / "fixtures" / "agent" / "tools" / "arguments.json"
FIXTURES = json.loads(FIXTURE.read_text(encoding="utf-8"))
CASES = {case["id"]: case for case in FIXTURES["cases"]}
INVALID = {case["id"]: case for case in FIXTURES["invalid"]}


@pytest.mark.parametrize("case_id", list(CASES))
def test_normalisation(case_id):
    case = CASES[case_id]
    args, rescues = normalize_arguments_verbose(case["tool"], case["raw"])
    assert args == case["expected"]
    assert rescues == case["rescues"]
    assert normalize_arguments(case["tool"], case["raw"]) == case["expected"]


@pytest.mark.parametrize("case_id", list(INVALID))
def test_unusable_arguments_ask_for_a_retry(case_id):
    case = INVALID[case_id]
    with pytest.raises(InvalidArguments) as info:
        normalize_arguments(case["tool"], case["raw"])
    error = info.value
    assert isinstance(error, ToolRetry)  # a signal to the model, not a failure of the turn
    assert error.reason == "invalid_arguments" and error.hint
    assert case["message"] in error.message
    assert len(error.message) < 400  # what was received is shown, but truncated


def test_input_mapping_is_not_modified():
    raw = {"arguments": {"query": "SELECT 1", "name": "x"}}
    snapshot = json.dumps(raw)
    normalize_arguments("run_sql", raw)
    assert json.dumps(raw) == snapshot


def test_normalising_twice_changes_nothing():
    for case in CASES.values():
        once = normalize_arguments(case["tool"], case["raw"])
        assert normalize_arguments_verbose(case["tool"], once) == (once, []), case["id"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("```sql\nSELECT 1\n```", "SELECT 1"),
        ("```python\nx = 1\ny = 2\n```", "x = 1\ny = 2"),
        ("```\nSELECT 1\n```", "SELECT 1"),
        ("  ```py  \nx\n  ```  ", "x"),
        ("```SELECT 1```", "SELECT 1"),
        ("print('```')", "print('```')"),
        ("SELECT 1", "SELECT 1"),
    ],
)
def test_strip_fence(text, expected):
    assert strip_fence(text) == expected


def test_tool_schema_matches_the_normaliser():
    """Every property the model is offered survives normalisation, and nothing else does."""
    assert [tool["function"]["name"] for tool in TOOLS] == list(TOOL_NAMES)
    samples = {"sql": "SELECT 1", "name": "x", "code": "x = 1", "table": "orders", "type": "image",
               "query": "sales", "kind": "table", "with_code": True, "question": "Which year?", "candidates": ["2024", "2025"], "cell_ids": ["a1"],
               "changes": [{"op": "delete", "cell_id": "a1", "reason": "unused"}], "withdraw": "prop_1",
               "goal": "two datasets", "stages": [{"mode": "parallel", "steps": [
                   {"id": "q1", "tool": "run_sql", "arguments": {"sql": "SELECT 1", "name": "x"}}]}],
               "expect": {"rows": 1, "count": 2, "columns": ["a"], "artifact_type": "dataset", "artifact_ids": ["a1"]}}
    for tool in TOOLS:
        function = tool["function"]
        params = function["parameters"]
        assert function["description"] and params["type"] == "object"
        assert set(params.get("required", [])) <= set(params["properties"])
        offered = {key: samples[key] for key in params["properties"]}
        assert normalize_arguments(function["name"], {**offered, "stray": 1}) == offered
        for key, schema in params["properties"].items():
            assert schema.get("description"), f"{function['name']}.{key} has no description"
