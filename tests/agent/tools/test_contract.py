"""A tool is one spec in one place: registered, it is offered to the model, its arguments are
read by its own aliases, the turn moves to the state it names, and it runs and is reported
through the same call pipeline as the built-in tools."""

from __future__ import annotations

import json

import pytest

import jupyter_analyst.agent.tools  # noqa: F401 - registers the built-in tools
from jupyter_analyst.agent.spec import (
    StepOutcome,
    ToolSpec,
    register,
    spec_of,
    unregister,
)
from jupyter_analyst.testing import call_step, text_step


def count_words(env, args, ctx, plan) -> StepOutcome:
    return StepOutcome(status="ok", result={"words": len(args["text"].split()), "thread": env.thread_id})


COUNT_WORDS = ToolSpec(
    name="count_words",
    description="Count the words of a text.",
    properties={"text": {"type": "string", "description": "the text whose words are counted"}},
    required=("text",),
    state="analyzing",
    payload="text",
    aliases={"words": "text"},
    run=count_words,
)


@pytest.fixture
def count_words_tool():
    register(COUNT_WORDS)
    yield COUNT_WORDS
    unregister(COUNT_WORDS.name)


def test_a_tool_registered_from_one_spec_runs_through_the_loop(analyst, count_words_tool):
    runner = analyst({"turns": [{"match": ".", "steps": [
        call_step("count_words", words="three little words"), text_step("[scripted] three words"),
    ]}]})
    summary = runner.run("how many words?")

    assert summary.status == "completed", summary.error
    assert summary.tool_calls == {"executed": 1, "reused": 0, "blocked": 0}
    # The state its spec names, entered and left as a built-in tool's is.
    assert summary.transitions == ["planning", "analyzing", "presenting", "completed"]
    # Its alias was read as the canonical argument, and the rescue counted.
    assert summary.counters["arguments_normalized"] == 1
    offered = [tool["function"]["name"] for tool in runner.server.requests[0]["tools"]]
    assert offered[-1] == "count_words" and "run_sql" in offered
    started = next(e for e in runner.of_type("tool_call") if e.tool == "count_words")
    assert started.arguments == {"text": "three little words"}
    result = next(e for e in runner.of_type("tool_result") if e.tool == "count_words")
    assert result.status == "ok" and result.result == {"words": 3, "thread": summary.thread_id}
    answered = [m for m in runner.server.requests[1]["messages"] if m["role"] == "tool"]
    assert json.loads(answered[0]["content"])["words"] == 3


def test_a_tool_withdrawn_is_an_unknown_tool_again(analyst, count_words_tool):
    unregister("count_words")
    assert spec_of("count_words") is None
    runner = analyst({"turns": [{"match": ".", "steps": [
        call_step("count_words", text="two words"), text_step("[scripted] could not count"),
    ]}]})
    summary = runner.run("how many words?")

    assert summary.tool_calls == {"executed": 0, "reused": 0, "blocked": 1}
    assert "count_words" not in [tool["function"]["name"] for tool in runner.server.requests[0]["tools"]]
    result = next(e for e in runner.of_type("tool_result") if e.tool == "count_words")
    assert result.status == "refused" and result.result["error"]["reason"] == "unknown_tool"


def test_a_spec_runs_or_drives_never_both_nor_neither():
    with pytest.raises(ValueError, match="exactly one of run and drive"):
        ToolSpec(name="nothing", description="does nothing")
    with pytest.raises(ValueError, match="registered already"):
        register(spec_of("run_sql"))


def test_the_built_in_tools_a_user_may_ask_for_and_those_that_only_look():
    """What the surfaces read from the specs: which tools a user or a client agent may run as a
    step (turns/requests.py) and which of those run beside a thread's step (mcp/queueing.py)."""
    from jupyter_analyst.agent.tools import BUILTIN

    assert [s.name for s in BUILTIN if s.user_step] == [
        "list_tables", "describe_table", "run_sql", "run_python", "list_artifacts"]
    assert {s.name for s in BUILTIN if s.looks_only} == {"list_tables", "describe_table", "list_artifacts", "find"}
