"""A new tool that makes a dataset is one spec and its hooks, in one place: registered from
this test alone, its result moves the agent state, its ``expect`` is checked, the next turn
and the summarizer name its calls, and a user-driven turn answers with it, though no module
of the package names it (tests/contracts/test_tool_names.py keeps them so)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import jupyter_analyst.agent.tools  # noqa: F401 - registers the built-in tools
from jupyter_analyst.agent import ThreadMemory
from jupyter_analyst.agent.context.previous import finished_steps
from jupyter_analyst.agent.memory.summarizer import call_line
from jupyter_analyst.agent.spec import Observed, StepOutcome, ToolSpec, entity, register, unregister
from jupyter_analyst.agent.turn_record import step_line
from jupyter_analyst.agent_state import ActiveValue
from jupyter_analyst.testing import call_step, text_step
from jupyter_analyst.workspace import Workspace


def count_words(env, args, ctx, plan) -> StepOutcome:
    counts = Counter(args["text"].split())
    return StepOutcome(status="ok", result={
        "dataset": args["name"], "rows": len(counts), "columns": [{"name": "word"}, {"name": "n"}],
    })


WORD_COUNTS = ToolSpec(
    name="word_counts",
    description="Count each word of a text into a dataset of (word, n).",
    properties={"text": {"type": "string", "description": "the text"},
                "name": {"type": "string", "description": "the dataset's name"},
                "expect": {"type": "object", "description": "checked against the result"}},
    required=("text", "name"),
    state="analyzing",
    payload="text",
    run=count_words,
    observed=lambda result, artifacts: Observed((), (), result["rows"], tuple(c["name"] for c in result["columns"])),
    remembers=lambda seen: (
        [entity("dataset", seen.result["dataset"], derived_from=[seen.source_id], rows=seen.result["rows"])],
        {"dataset": ActiveValue(value=seen.result["dataset"], last_used=seen.now)},
    ),
    summarized=lambda args: f"word_counts → {args.get('name')}",
    finished=lambda args, result: [f"word_counts `{result.get('dataset')}`"],
    answered=lambda outcome: f"`{outcome.result['dataset']}`: {outcome.result['rows']} words",
)


@pytest.fixture
def word_counts():
    register(WORD_COUNTS)
    yield WORD_COUNTS
    unregister(WORD_COUNTS.name)


def test_a_toy_tool_that_makes_a_dataset_means_what_its_spec_says(analyst, tmp_path, word_counts):
    runner = analyst({"turns": [
        {"match": "again", "steps": [text_step("[scripted] done")]},
        {"match": ".", "steps": [
            call_step("word_counts", text="a b a c", name="words", expect={"rows": 3, "columns": ["word"]}),
            text_step("[scripted] three words"),
        ]},
    ]})
    first = runner.run("count the words")
    assert first.status == "completed", first.error

    # Its expectation is checked against what its spec observed.
    result = json.loads(next(m["content"] for m in runner.server.requests[1]["messages"] if m["role"] == "tool"))
    assert result["expectation"]["status"] == "confirmed"
    # What it made is in the agent state, and is the active dataset.
    workspace = Workspace(tmp_path / "ws")
    try:
        state = ThreadMemory(workspace.store, first.thread_id).state()
    finally:
        workspace.close()
    assert state.entities["dataset:words"].detail["rows"] == 3
    assert state.active["dataset"].value == "words"
    # The next turn counts it among the steps the last one finished, in its spec's words.
    runner.run("again", thread=first.thread_id)
    assert "Previous turn (1): completed in 1 step." in runner.server.requests[-1]["messages"][0]["content"]
    call = {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "word_counts", "arguments": "{}"}}]}
    done = {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"dataset": "words", "rows": 3})}
    assert finished_steps([call, done]) == ["word_counts `words`"]
    # The summarizer's transcript names its call as its spec does, and a user-driven turn
    # with it as its one step answers in its words.
    assert call_line("word_counts", json.dumps({"text": "a b", "name": "words"})) == "[word_counts → words]"
    outcome = StepOutcome(status="ok", result={"dataset": "words", "rows": 3})
    assert step_line("word_counts", outcome) == "`words`: 3 words"
