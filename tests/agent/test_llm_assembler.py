"""ToolCallAssembler: streamed tool-call deltas in every shape servers send, as a fixture table."""

from __future__ import annotations

import json

import pytest
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

from jupyter_analyst.agent.llm.reply import ToolCallAssembler


def d(index=None, id=None, name=None, args=None) -> dict:
    """One ``delta.tool_calls`` item; absent fields are left out, as servers do."""
    item: dict = {}
    if index is not None:
        item["index"] = index
    if id is not None:
        item["id"] = id
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    if function:
        item["function"] = function
    return item


SQL = '{"sql": "SELECT 1", "name": "x"}'

# case -> (chunks, each a list of delta items; expected calls as (id, name, arguments))
CASES: dict[str, tuple[list[list[dict]], list[tuple[str, str, str]]]] = {
    "id only in the first chunk": (
        [[d(0, "call_a", "run_sql", "")], [d(0, args='{"sql": "SEL')], [d(0, args='ECT 1", "name": "x"}')]],
        [("call_a", "run_sql", SQL)],
    ),
    "id repeated in every chunk": (
        [[d(0, "call_a", "run_sql", '{"sql": "SELECT 1"')], [d(0, "call_a", args=', "name": "x"}')]],
        [("call_a", "run_sql", SQL)],
    ),
    "id changed mid-stream: the first wins": (
        [[d(0, "call_a", "run_sql", '{"sql": "SELECT 1"')], [d(0, "call_b", args=', "name": "x"}')]],
        [("call_a", "run_sql", SQL)],
    ),
    "changed id, then a delta with only that id": (
        [[d(0, "call_a", "run_sql", '{"sql": ')], [d(0, "call_b", args='"SELECT 1"')], [d(id="call_b", args=', "name": "x"}')]],
        [("call_a", "run_sql", SQL)],
    ),
    "no ids at all: deterministic ids by index": (
        [[d(0, name="run_sql", args="{}")], [d(1, name="run_python", args='{"code": "1"}')]],
        [("call_0", "run_sql", "{}"), ("call_1", "run_python", '{"code": "1"}')],
    ),
    "generated id never collides with a real one": (
        [[d(0, name="list_tables", args="{}")], [d(1, "call_0", "list_artifacts", "{}")]],
        [("call_0_", "list_tables", "{}"), ("call_0", "list_artifacts", "{}")],
    ),
    "two parallel calls interleaved by index": (
        [[d(0, "call_a", "run_sql", '{"sql": "SELECT 1"'), d(1, "call_b", "run_python", '{"code"')],
         [d(1, args=': "print(1)"}')],
         [d(0, args=', "name": "x"}')]],
        [("call_a", "run_sql", SQL), ("call_b", "run_python", '{"code": "print(1)"}')],
    ),
    "indexes arrive out of order: result in index order": (
        [[d(1, "call_b", "run_python", "{}")], [d(0, "call_a", "list_tables", "{}")]],
        [("call_a", "list_tables", "{}"), ("call_b", "run_python", "{}")],
    ),
    "arguments split into single characters, mid-escape": (
        [[d(0, "call_a", "run_python", "")], *[[d(0, args=ch)] for ch in '{"code": "print(\\"hi\\")"}']],
        [("call_a", "run_python", '{"code": "print(\\"hi\\")"}')],
    ),
    "name in parts": (
        [[d(0, "call_a", "run_", "")], [d(0, name="sql", args="{}")]],
        [("call_a", "run_sql", "{}")],
    ),
    "name repeated whole in every chunk": (
        [[d(0, "call_a", "run_sql", "{")], [d(0, name="run_sql", args="}")]],
        [("call_a", "run_sql", "{}")],
    ),
    "no index, known id goes to that call": (
        [[d(id="call_a", name="run_sql", args="{")], [d(id="call_b", name="run_python", args="{")],
         [d(id="call_a", args="}")], [d(id="call_b", args="}")]],
        [("call_a", "run_sql", "{}"), ("call_b", "run_python", "{}")],
    ),
    "no index and no id continues the last call": (
        [[d(id="call_a", name="run_sql", args="{")], [d(args="}")]],
        [("call_a", "run_sql", "{}")],
    ),
    # A call without a name is kept, so that the loop tells the model; it never ends the turn.
    "entry that never got a name is kept, nameless": (
        [[d(0, "call_a", None, "{}")], [d(1, "call_b", "list_tables", "{}")]],
        [("call_a", "", "{}"), ("call_b", "list_tables", "{}")],
    ),
    "blank name is kept, nameless": ([[d(0, "call_a", "  ", "{}")]], [("call_a", "", "{}")]),
    "an entry that carried nothing is dropped": ([[d(0)], [d(1, "call_b", "list_tables", "{}")]],
                                                 [("call_b", "list_tables", "{}")]),
    "a repeated id is made unique": (
        [[d(0, "call_a", "list_tables", "{}")], [d(1, "call_a", "list_artifacts", "{}")]],
        [("call_a", "list_tables", "{}"), ("call_a_", "list_artifacts", "{}")],
    ),
    "names and ids are made valid unicode; arguments are left to the normaliser": (
        [[d(0, "call_\ud800", "run_\udc80", '{"code": "\ud800"}')]],
        [("call_\ufffd", "run_\ufffd", '{"code": "\ud800"}')],
    ),
    "nothing fed": ([], []),
    "empty and None delta lists are harmless": ([[], [d(0, "call_a", "list_tables", "")]], [("call_a", "list_tables", "")]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_assembly(case):
    chunks, expected = CASES[case]
    assembler = ToolCallAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    assembler.feed(None)
    assert [(c.id, c.name, c.arguments) for c in assembler.calls()] == expected


def test_sdk_delta_objects_are_accepted():
    """The SDK's own ChoiceDeltaToolCall models assemble like plain dicts."""
    raw = [
        {"index": 0, "id": "call_a", "type": "function", "function": {"name": "run_sql", "arguments": '{"sql": '}},
        {"index": 0, "function": {"arguments": '"SELECT 1"}'}},
    ]
    assembler = ToolCallAssembler()
    for item in raw:
        assembler.feed([ChoiceDeltaToolCall.model_validate(item)])
    (call,) = assembler.calls()
    assert call.id == "call_a" and call.name == "run_sql"
    assert json.loads(call.arguments) == {"sql": "SELECT 1"}


def test_calls_can_be_read_while_streaming():
    """calls() is a snapshot: reading it does not disturb later deltas."""
    assembler = ToolCallAssembler()
    assembler.feed([d(0, None, "run_sql", "{")])
    assert assembler.calls()[0].id == "call_0"
    assembler.feed([d(0, "call_late", args="}")])
    assert [(c.id, c.arguments) for c in assembler.calls()] == [("call_late", "{}")]
