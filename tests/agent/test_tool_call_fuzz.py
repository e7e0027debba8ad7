"""Fuzzing the model's tool calls: nothing the model sends may escape as an exception.

Two targets, both with hypothesis:

* the argument normaliser: any tool name and any argument text (deeply nested JSON, lone
  surrogates, huge integers, fences, Python literals, non-objects...) either normalises to
  JSON-safe, UTF-8-encodable arguments or raises :class:`InvalidArguments` with a known
  reason code;
* the dispatcher: whole turns of the real loop (real store, DuckDB file, kernel, SQL
  workers, the openai SDK against the scripted model server) in which the model sends such
  calls. Each call is answered with a tool message under its own id, every event persists,
  and the turn completes.

``FUZZ_EXAMPLES`` scales the number of examples (default: a quick run).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_analyst.agent.tools.arguments import normalize_arguments_verbose, strip_fence
from jupyter_analyst.agent.tools import TOOL_NAMES
from jupyter_analyst.errors import InvalidArguments

SCALE = float(os.environ.get("FUZZ_EXAMPLES", "1"))
QUICK = settings(
    max_examples=int(300 * SCALE), deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
TURNS = settings(
    max_examples=int(25 * SCALE), deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

#: Every reason an argument refusal may carry.
ARGUMENT_REASONS = {
    "invalid_arguments", "arguments_too_deep", "arguments_too_large", "argument_too_long", "invalid_unicode",
}

# ---------------------------------------------------------------- strategies

surrogates = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
any_char = st.one_of(st.characters(), surrogates, st.sampled_from(list("{}[]\"\\`:,\n\t ")))
any_text = st.text(any_char, max_size=60)
keys = st.sampled_from([
    "sql", "query", "name", "code", "script", "source", "table", "expect", "arguments", "args", "input",
    "kind", "type", "question", "candidates", "rows", "columns", "artifact_ids", "artifact_type",
]) | any_text
scalars = (
    st.none() | st.booleans() | st.integers() | st.floats() | any_text
    | st.sampled_from(["SELECT 1 AS x", "print(1)", "regions", "```sql\nSELECT 1\n```", "٣", "²", "  "])
)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
                           max_leaves=20)


def _dumps(value, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


def _nested(depth: int, kind: str) -> str:
    opener, closer = ("[", "]") if kind == "list" else ('{"a": ', "}")
    return '{"sql": ' + opener * depth + "1" + closer * depth + "}"


raw_arguments = st.one_of(
    any_text,
    st.builds(_dumps, st.dictionaries(keys, json_values, max_size=6), st.booleans()),
    st.builds(_dumps, json_values, st.booleans()),
    st.builds(_nested, st.integers(1, 120_000), st.sampled_from(["list", "dict"])),
    st.integers(4_300, 20_000).map(lambda n: '{"sql": "SELECT 1", "name": "x", "expect": {"rows": ' + "9" * n + "}}"),
    st.builds(lambda body, tag: f"```{tag}\n{body}\n```", any_text, st.sampled_from(["", "json", "py"])),
    st.builds(lambda d: repr(d), st.dictionaries(keys, scalars, max_size=4)),  # Python literals
    st.builds(lambda text, cut: text[:cut], st.builds(_dumps, st.dictionaries(keys, json_values), st.booleans()),
              st.integers(0, 200)),
    st.builds(lambda s: json.dumps(json.dumps(s)), st.dictionaries(keys, json_values, max_size=3)),
    st.just('{"code": "x = ' + "-" * 100_000 + '1"}'),
    st.just('{"sql": "SELECT ' + "(" * 300 + "1" + ")" * 300 + '", "name": "x"}'),
    st.just("```" + " " * 200_000 + "x"),
)
tool_names = st.sampled_from([*TOOL_NAMES, "", " ", "run_sql ", "RUN_SQL", "no_such_tool", "x" * 300, "\ud800"])


# ---------------------------------------------------------------- the normaliser


def assert_clean(value) -> None:
    """JSON can carry it and UTF-8 can encode it: it can be stored, streamed and sent back."""
    json.dumps(value, ensure_ascii=False, allow_nan=True).encode("utf-8")


@QUICK
@given(tool=tool_names, raw=raw_arguments)
def test_normaliser_returns_clean_arguments_or_a_tool_retry(tool, raw):
    try:
        args, rescues = normalize_arguments_verbose(tool, raw)
    except InvalidArguments as exc:
        assert exc.reason in ARGUMENT_REASONS, exc.reason
        assert exc.hint
        assert_clean(exc.to_dict())
        assert len(exc.message) < 1_000
        return
    assert isinstance(args, dict) and all(isinstance(r, str) for r in rescues)
    assert_clean(args)
    assert_clean(rescues)
    # What comes out is acceptable input again.
    normalize_arguments_verbose(tool, args)


@QUICK
@given(tool=tool_names, raw=st.dictionaries(keys, json_values, max_size=6))
def test_normaliser_accepts_any_mapping(tool, raw):
    try:
        args, _ = normalize_arguments_verbose(tool, raw)
    except InvalidArguments as exc:
        assert exc.reason in ARGUMENT_REASONS
        assert_clean(exc.to_dict())
    else:
        assert_clean(args)


# The fence pattern strip_fence used to apply; it backtracked quadratically on long input.
_OLD_FENCE = re.compile(r"^\s*```(?:[\w+.-]*[ \t]*\n)?(.*?)\n?[ \t]*```\s*$", re.DOTALL)


@QUICK
@given(st.text(st.sampled_from(list("`\n \t\r\x0babcSQL.+-_é")) | st.characters(), max_size=40))
def test_strip_fence_means_what_the_fence_pattern_meant(text):
    match = _OLD_FENCE.match(text)
    assert strip_fence(text) == (match.group(1) if match else text)


@pytest.mark.serial  # a bound in seconds: on a machine not shared with another test
def test_strip_fence_is_linear_on_long_input():
    import time

    started = time.perf_counter()
    for text in ("```" + " " * 300_000 + "x", "```" + "\t" * 300_000 + "```y", " " * 300_000 + "```"):
        strip_fence(text)
    assert time.perf_counter() - started < 1.0


# ---------------------------------------------------------------- the dispatcher


@pytest.fixture(scope="module")
def dispatcher(tmp_path_factory, sales_db):
    """One thread of a real workspace, runtime and event loop, shared by the fuzzed turns."""
    from jupyter_analyst.agent.environment import ThreadEnvironment
    from jupyter_analyst.sql import open_source
    from jupyter_analyst.workspace import Workspace

    workspace = Workspace(tmp_path_factory.mktemp("fuzz") / "ws")
    thread = workspace.store.create_thread(source=str(sales_db))
    source = open_source(str(sales_db))
    runtime = ThreadEnvironment(
        thread_id=thread.thread_id, source=source, artifacts=workspace.artifacts,
        workdir=workspace.thread_dir(thread.thread_id), python_timeout_s=10.0,
    )
    loop = asyncio.new_event_loop()
    yield workspace, runtime, loop
    loop.run_until_complete(runtime.close())
    loop.close()
    source.close()
    workspace.close()


def _call(name: str, raw: str) -> dict:
    return {"name": name, "raw_arguments": raw}


# Mostly real tools with plausible-to-hostile arguments, sometimes anything at all.
plausible = st.one_of(
    st.builds(lambda sql, name: _call("run_sql", json.dumps({"sql": sql, "name": name})),
              st.sampled_from(["SELECT region FROM regions", "SELECT " + "(" * 300 + "1" + ")" * 300,
                               "PIVOT orders ON region_id USING SUM(revenue)", "DELETE FROM orders", "SELEC"]) | any_text,
              st.sampled_from(["r", "__builtins__", "pd", "sum", "class", "_", "In", "ok_name", ""]) | any_text),
    st.builds(lambda code: _call("run_python", json.dumps({"code": code})),
              st.sampled_from(["print(1)", "x = " + "-" * 5_000 + "1", "print('\ud800')", "a\x00b", "undefined_name"])
              | any_text),
    st.builds(_call, tool_names, raw_arguments),
)


@TURNS
@given(calls=st.lists(plausible, min_size=1, max_size=3))
def test_dispatcher_answers_every_call_and_the_turn_completes(dispatcher, calls):
    from jupyter_analyst.agent import LLMClient
    from jupyter_analyst.agent import AgentLoop
    from jupyter_analyst.testing import ScriptedModelServer
    from jupyter_analyst.turns import TurnLife

    workspace, runtime, loop = dispatcher
    script = {"turns": [{"steps": [{"tool_calls": calls}, {"content": "fuzzed"}]}]}
    with ScriptedModelServer(script) as server:
        llm = LLMClient(model="scripted", base_url=server.base_url, api_key="x", max_retries=0)
        agent = AgentLoop(store=workspace.store, environment=runtime, llm=llm, model="scripted", max_steps=3,
                          ending=TurnLife("scripted").ended)
        turn = workspace.store.start_turn(runtime.thread_id, "fuzz")
        try:
            summary, _ = loop.run_until_complete(agent.run(turn))
        finally:
            loop.run_until_complete(llm.aclose())
        requests = list(server.requests)
    assert summary.status == "completed", summary.error
    assert summary.answer == "fuzzed"
    assert len(requests) == 2
    messages = requests[1]["messages"]
    # This turn's part of the conversation (earlier turns of the thread come before it).
    messages = messages[max(i for i, m in enumerate(messages) if m["role"] == "user") :]
    asked = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert len(asked) == len(calls) and asked == answered
    for message in messages:
        assert_clean(message)
    # Every event of the turn was persisted and reads back.
    events = workspace.store.events(runtime.thread_id, turn_id=turn.turn_id)
    results = [e for e in events if e.type == "tool_result"]
    assert sorted(e.call_id for e in results) == sorted(asked)
    for event in results:
        if event.status != "ok":
            reason = event.result["error"]["reason"]
            assert re.fullmatch(r"[a-z_]+", reason), reason
            assert set(reason) <= set(string.ascii_lowercase + "_")


# ---------------------------------------------------------------- the summarizer's reply


@QUICK
@given(raw=raw_arguments | st.builds(
    lambda item: json.dumps({"add": [{"section": "items", "value": item}]}), json_values))
def test_summarizer_reply_is_a_delta_or_a_summarizer_error(raw):
    """The end-of-turn summarizer is the model too: its reply is read as carefully."""
    from jupyter_analyst.agent.memory.summarizer import parse_reply
    from jupyter_analyst.errors import AnalystError

    try:
        delta = parse_reply(raw, fold_through=1, summary_chars=100)
    except AnalystError as exc:
        assert exc.reason in {"summarizer_reply", "state_delta_invalid"}, exc.reason
    else:
        delta.model_dump_json()  # it can be stored
