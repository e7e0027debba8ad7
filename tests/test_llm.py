"""Tool-call assembly, argument normalisation, and the real openai SDK against the scripted model."""

from __future__ import annotations

import asyncio
import json
import time

import openai
import pytest

from jupyter_analyst.agent.arguments import normalize_arguments, normalize_arguments_verbose
from jupyter_analyst.agent.llm import LLMClient, ToolCallAssembler
from jupyter_analyst.errors import InvalidArguments, ModelError
from jupyter_analyst.testing import ScriptedModelServer


def d(index=None, id=None, name=None, args=None):
    item = {}
    if index is not None:
        item["index"] = index
    if id is not None:
        item["id"] = id
    fn = {}
    if name is not None:
        fn["name"] = name
    if args is not None:
        fn["arguments"] = args
    if fn:
        item["function"] = fn
    return item


ASSEMBLY = {
    "id only in the first chunk": ([[d(0, "a", "run_sql", "")], [d(0, args='{"sql":')], [d(0, args=' "S"}')]],
                                   [("a", "run_sql", '{"sql": "S"}')]),
    "id repeated": ([[d(0, "a", "run_sql", '{"x"')], [d(0, "a", args=": 1}")]], [("a", "run_sql", '{"x": 1}')]),
    "id changed mid-stream": ([[d(0, "a", "run_sql", '{"x"')], [d(0, "b", args=": 1}")]], [("a", "run_sql", '{"x": 1}')]),
    "no ids at all": ([[d(0, name="run_sql", args="{}")], [d(1, name="run_python", args="{}")]],
                      [("call_0", "run_sql", "{}"), ("call_1", "run_python", "{}")]),
    "two calls interleaved": (
        [[d(0, "a", "run_sql", '{"s'), d(1, "b", "run_python", '{"c')], [d(1, args='": 2}')], [d(0, args='": 1}')]],
        [("a", "run_sql", '{"s": 1}'), ("b", "run_python", '{"c": 2}')]),
    "no index, known id": ([[d(id="a", name="run_sql", args="{")], [d(id="a", args="}")]], [("a", "run_sql", "{}")]),
    "no index, no id continues the last": ([[d(id="a", name="run_sql", args="{")], [d(args="}")]], [("a", "run_sql", "{}")]),
    "nameless entry dropped": ([[d(0, "a", None, "{}")]], []),
}


@pytest.mark.parametrize("case", sorted(ASSEMBLY))
def test_assembly(case):
    chunks, expected = ASSEMBLY[case]
    assembler = ToolCallAssembler()
    for chunk in chunks:
        assembler.feed(chunk)
    assert [(c.id, c.name, c.arguments) for c in assembler.calls()] == expected


NORMALISATION = [
    ("run_sql", '{"sql": "SELECT 1", "name": "x"}', {"sql": "SELECT 1", "name": "x"}),
    ("run_sql", {"query": "SELECT 1", "name": "x"}, {"sql": "SELECT 1", "name": "x"}),
    ("run_sql", {"arguments": {"sql": "SELECT 1", "name": "x"}}, {"sql": "SELECT 1", "name": "x"}),
    ("run_sql", {"args": '{"sql": "SELECT 1", "name": "x"}'}, {"sql": "SELECT 1", "name": "x"}),
    ("run_sql", json.dumps(json.dumps({"sql": "SELECT 1", "name": "x"})), {"sql": "SELECT 1", "name": "x"}),
    ("run_sql", {"input": {"arguments": {"query": "SELECT 1", "name": "x"}}}, {"sql": "SELECT 1", "name": "x"}),
    ("run_sql", {"sql": "```sql\nSELECT 1\n```", "name": " x "}, {"sql": "SELECT 1", "name": "x"}),
    ("run_python", {"source": "print(1)"}, {"code": "print(1)"}),
    ("run_python", {"script": "```python\nprint(1)\n```"}, {"code": "print(1)"}),
    ("run_python", {"code": "x = 1", "unexpected": 5}, {"code": "x = 1"}),
    ("run_python", "", {}),
    ("run_python", None, {}),
    ("run_python", "   ", {}),
    ("run_python", {"code": None}, {"code": ""}),
    ("describe_table", {"table_name": "orders"}, {"table": "orders"}),
    ("list_tables", {"anything": 1}, {}),
]


@pytest.mark.parametrize(("tool", "raw", "expected"), NORMALISATION)
def test_normalisation(tool, raw, expected):
    assert normalize_arguments(tool, raw) == expected


@pytest.mark.parametrize("raw", ["{not json", '["a list"]', "42", '{"code": ["print(1)"]}'])
def test_unusable_arguments(raw):
    with pytest.raises(InvalidArguments) as info:
        normalize_arguments("run_python", raw)
    assert info.value.reason == "invalid_arguments" and info.value.hint


def test_rescues_are_reported():
    _, rescues = normalize_arguments_verbose("run_sql", {"arguments": {"query": "SELECT 1", "name": "x"}})
    assert rescues == ["nested:arguments", "alias:query"]


# ------------------------------------------------------------------ over HTTP


def complete(server, messages, **kw):
    async def go():
        client = LLMClient(model="m", base_url=server.base_url, api_key="x", **kw)
        pieces = []
        try:
            reply = await client.complete(messages, [], on_text=pieces.append)
        finally:
            await client.aclose()
        return reply, pieces

    return asyncio.run(go())


@pytest.mark.parametrize("quirk", ["id_first_chunk_only", "id_every_chunk", "id_changes", "no_id", "split_arguments"])
def test_sdk_assembles_every_quirk(quirk):
    args = {"sql": "SELECT \"quoted\" -- and \\\\ escapes", "name": "x"}
    script = {"turns": [{"steps": [{"tool_calls": [{"name": "run_sql", "arguments": args},
                                                   {"name": "run_python", "arguments": {"code": "print(1)"}}],
                                    "quirk": quirk}]}]}
    with ScriptedModelServer(script) as server:
        reply, _ = complete(server, [{"role": "user", "content": "go"}])
    assert [c.name for c in reply.tool_calls] == ["run_sql", "run_python"]
    assert json.loads(reply.tool_calls[0].arguments) == args
    assert len({c.id for c in reply.tool_calls}) == 2
    assert reply.finish_reason == "tool_calls"


def test_text_is_streamed_in_pieces():
    with ScriptedModelServer({"turns": [{"steps": [{"content": "[scripted model] a fairly long answer"}]}]}) as server:
        reply, pieces = complete(server, [{"role": "user", "content": "hi"}])
    assert len(pieces) >= 3 and "".join(pieces) == reply.text == "[scripted model] a fairly long answer"


def test_step_is_chosen_from_the_conversation():
    script = {"turns": [{"match": "^b", "steps": [{"content": "B0"}]},
                        {"steps": [{"content": "A0"}, {"content": "A1"}, {"content": "A2"}]}]}
    with ScriptedModelServer(script) as server:
        base = [{"role": "user", "content": "a"}]
        assert complete(server, base)[0].text == "A0"
        one = [*base, {"role": "assistant", "content": "x"}, {"role": "user", "content": "a"},
               {"role": "assistant", "content": "y"}]
        assert complete(server, one)[0].text == "A1"
        assert complete(server, [*one, {"role": "assistant", "content": "z"}])[0].text == "A2"
        assert complete(server, [{"role": "user", "content": "b?"}])[0].text == "B0"
        assert "exhausted" in complete(server, [*one, {"role": "assistant"}, {"role": "assistant"}])[0].text


def test_non_streamed_request_with_the_raw_sdk():
    script = {"turns": [{"steps": [{"tool_calls": [{"name": "list_tables", "arguments": {}}]}]}]}
    with ScriptedModelServer(script) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="x")
        out = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert out.choices[0].message.tool_calls[0].function.name == "list_tables"
        assert client.models.list().data[0].id == "jupyter-analyst-scripted"
        assert server.requests[0]["messages"][0]["content"] == "hi"


def test_http_error_becomes_model_error():
    script = {"turns": [{"steps": [{"error": {"status": 500, "message": "overloaded"}}]}]}
    with ScriptedModelServer(script) as server:
        with pytest.raises(ModelError) as info:
            complete(server, [{"role": "user", "content": "hi"}], max_retries=0)
    assert "500" in info.value.message and "overloaded" in info.value.message


def test_stopped_server_fails_fast_with_model_error():
    server = ScriptedModelServer({"turns": []}).start()
    server.stop()
    started = time.perf_counter()
    with pytest.raises(ModelError) as info:
        complete(server, [{"role": "user", "content": "hi"}], max_retries=0)
    assert "cannot reach" in info.value.message and time.perf_counter() - started < 30
