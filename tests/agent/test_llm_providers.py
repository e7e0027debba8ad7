"""Real providers, as they really behave: each way a server streams, fails or misformats,
played by the scripted model server and met through the real ``openai`` SDK over HTTP.

Every mode ends in one of two ways the user can see: the turn goes on (the call is run, the
answer is shown whole, the request is asked again without what the server refused), or it
ends with one clear line that names the cause. Never a silent ``completed``, a traceback
or a hang.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from jupyter_analyst.agent import LLMClient
from jupyter_analyst.agent.llm.client import EMPTY_REPLY_NUDGE
from jupyter_analyst.agent.llm.reply import ModelReply
from jupyter_analyst.agent.tools import TOOLS
from jupyter_analyst.errors import ModelError
from jupyter_analyst.testing import ScriptedModelServer, text_step

pytestmark = pytest.mark.timeout(120)

CLI = [sys.executable, "-m", "jupyter_analyst.cli"]
USER = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "go"}]
LIST_TABLES = {"name": "list_tables", "arguments": {}}


def run_cli(server: ScriptedModelServer, sales_db, workspace, *extra: str, base_url: str | None = None,
            env: dict[str, str] | None = None, json_out: bool = True, timeout: float = 120, prompt: str = "go",
            summarizer: bool = False) -> subprocess.CompletedProcess:
    """One turn through ``jupyter-analyst run`` against ``server``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANALYST_"))}
    environ.update(OPENAI_BASE_URL=base_url or server.base_url, OPENAI_API_KEY="x", **(env or {}))
    return subprocess.run(
        [*CLI, "run", "--db", str(sales_db), "--prompt", prompt, *([] if summarizer else ["--no-summarizer"]),
         "--workspace", str(workspace),
         *(["--json"] if json_out else []), *extra],
        env=environ, capture_output=True, text=True, timeout=timeout,
    )


def summary_of(out: subprocess.CompletedProcess) -> dict:
    """The one JSON object ``--json`` prints; no traceback on the way."""
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, (out.stdout[-2000:], out.stderr[-2000:])
    return json.loads(lines[0])


def assistant_calls(request: dict) -> list[dict]:
    return [c for m in request["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]


def tool_results(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


async def complete(server, messages=USER, *, tools=TOOLS, **kw) -> ModelReply:
    client = LLMClient(model="jupyter-analyst-scripted", base_url=kw.pop("base_url", server.base_url),
                       api_key="any", max_retries=kw.pop("max_retries", 0), timeout=kw.pop("timeout", 30))
    try:
        return await client.complete(messages, tools, **kw)
    finally:
        await client.aclose()


@pytest.fixture
def serve():
    servers = []

    def start(script, **kw) -> ScriptedModelServer:
        server = ScriptedModelServer(script, **kw).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


def steps(*items: dict) -> dict:
    return {"turns": [{"steps": list(items)}]}


# ------------------------------------------------------------------ calls written as text

TEXT_CALLS = {
    # Qwen / Hermes templates, vLLM without a tool parser, llama.cpp without --jinja
    "hermes tool_call tags": 'Let me look.\n<tool_call>\n{"name": "list_tables", "arguments": {}}\n</tool_call>',
    # Llama 3.x: a bare object with "parameters", sometimes after <|python_tag|>
    "llama bare object": '{"name": "list_tables", "parameters": {}}',
    "llama python_tag": '<|python_tag|>{"name": "list_tables", "parameters": {}}',
}


@pytest.mark.parametrize("form", list(TEXT_CALLS))
def test_a_call_written_as_text_runs_as_a_call(form, serve, sales_db, tmp_path):
    server = serve(steps({"content": TEXT_CALLS[form]}, text_step("There are three tables.")))
    out = run_cli(server, sales_db, tmp_path / "ws", json_out=False)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "-> list_tables" in out.stderr and "<tool_call>" not in out.stderr + out.stdout
    assert "There are three tables." in out.stdout and '"parameters"' not in out.stdout
    # The model's next request holds the call as a call, answered with the tables.
    second = server.requests[1]
    assert [c["function"]["name"] for c in assistant_calls(second)] == ["list_tables"]
    assert all("<tool_call>" not in (m.get("content") or "") for m in second["messages"] if m["role"] == "assistant")
    (result,) = tool_results(second)
    assert "orders" in json.dumps(result)


@pytest.mark.asyncio
async def test_a_malformed_call_in_tags_reaches_the_model_as_invalid_json(serve):
    server = serve(steps({"content": '<tool_call>{"name": "run_sql", "arguments": {"sql": "SELE</tool_call>'}))
    reply = await complete(server)
    (call,) = reply.tool_calls
    assert call.name == "run_sql" and reply.calls_in_text and reply.text == ""
    with pytest.raises(ValueError):
        json.loads(call.arguments)


@pytest.mark.asyncio
async def test_json_that_names_no_tool_stays_an_answer(serve):
    answer = '{"name": "JFK", "parameters": {"delay": 12}}'
    reply = await complete(serve(steps({"content": answer})))
    assert reply.text == answer and reply.tool_calls == []


# ------------------------------------------------------------------ empty replies

def test_an_empty_reply_is_nudged_once_and_the_answer_follows(serve, sales_db, tmp_path):
    script = {"turns": [{"match": "last reply was empty", "steps": [text_step("Three tables.")]},
                        {"steps": [{}]}]}
    server = serve(script)
    summary = summary_of(run_cli(server, sales_db, tmp_path / "ws"))
    assert summary["status"] == "completed" and summary["answer"] == "Three tables."
    assert len(server.requests) == 2
    assert server.requests[1]["messages"][-1] == {"role": "user", "content": EMPTY_REPLY_NUDGE}


def test_an_empty_reply_twice_ends_the_turn_no_answer_with_one_line(serve, sales_db, tmp_path):
    server = serve(steps({}))
    out = run_cli(server, sales_db, tmp_path / "ws", json_out=False)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    (line,) = [line for line in out.stderr.splitlines() if line.startswith("turn no_answer")]
    assert "replied with nothing, also when asked again" in line and "--jinja" in line
    assert len(server.requests) == 2
    summary = summary_of(run_cli(server, sales_db, tmp_path / "ws2"))
    assert summary["status"] == "no_answer" and summary["answer"] == ""
    assert summary["message"].startswith("the model replied with nothing, also when asked again")


# ------------------------------------------------------------------ reasoning models

MONOLOGUE = "Hmm, the user wants the tables. I should list them first and then think about it at length."


@pytest.mark.parametrize("where", ["think tags", "reasoning_content", "reasoning", "template-opened think"])
def test_the_monologue_is_neither_the_answer_nor_history_and_thinking_is_shown(where, serve, sales_db, tmp_path):
    step: dict = {"content": "The answer is 42."}
    if where == "think tags":
        step["content"] = f"<think>{MONOLOGUE}</think>\n\nThe answer is 42."
    elif where == "template-opened think":
        step["content"] = f"{MONOLOGUE}</think>The answer is 42."
    else:
        step.update(reasoning=MONOLOGUE, reasoning_field=where)
    server = serve({"turns": [{"match": "^again", "steps": [text_step("Still 42.")]}, {"steps": [step]}]})
    out = run_cli(server, sales_db, tmp_path / "ws", json_out=False)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "model: thinking..." in out.stderr
    assert "The answer is 42." in out.stdout
    assert MONOLOGUE not in out.stdout + out.stderr
    if where != "template-opened think":  # that one's opening tag is in the template, not the stream
        assert "model: The answer is 42." in out.stderr  # the answer still streams
    thread = next(line.split()[-3] for line in out.stderr.splitlines() if line.startswith("turn "))
    again = run_cli(server, sales_db, tmp_path / "ws", "--thread", thread, prompt="again")
    assert summary_of(again)["answer"] == "Still 42."
    assert MONOLOGUE not in json.dumps(server.requests[-1]["messages"])


def test_thinking_is_an_event_of_the_turn(analyst):
    runner = analyst({"turns": [{"steps": [{"reasoning": MONOLOGUE, "content": "42."}]}]})
    summary = runner.run("go")
    assert summary.status == "completed" and summary.answer == "42."
    assert len(runner.of_type("thinking")) == 1
    assert MONOLOGUE not in "".join(e.text for e in runner.of_type("text_delta"))


# ------------------------------------------------------------------ Ollama's object arguments

def test_arguments_sent_as_an_object_run(serve, sales_db, tmp_path):
    call = {"name": "run_sql", "arguments": {"sql": "SELECT COUNT(*) AS n FROM orders", "name": "order_count"}}
    server = serve(steps({"tool_calls": [call, LIST_TABLES], "quirk": "arguments_object"}, text_step("Counted.")))
    summary = summary_of(run_cli(server, sales_db, tmp_path / "ws"))
    assert summary["status"] == "completed" and summary["answer"] == "Counted."
    calls = assistant_calls(server.requests[1])
    assert json.loads(calls[0]["function"]["arguments"]) == call["arguments"]
    assert all("error" not in r for r in tool_results(server.requests[1]))


# ------------------------------------------------------------------ finish reasons and refusals

@pytest.mark.parametrize(("finish", "cause"), [
    ("length", "the model reached its output token limit"),
    ("content_filter", "the provider's content filter stopped the reply"),
    ("none", "the reply ended without saying it was finished"),
])
def test_a_cut_answer_says_it_is_incomplete(finish, cause, serve, sales_db, tmp_path):
    server = serve(steps({"content": "Revenue grew in the North and", "finish": finish}))
    out = run_cli(server, sales_db, tmp_path / "ws", json_out=False)
    assert "Traceback" not in out.stderr
    assert f"guard answer_cut_short: {cause}" in out.stderr
    assert f"[incomplete: {cause}]" in out.stdout


def test_a_call_cut_at_the_token_limit_is_told_as_such(serve, sales_db, tmp_path):
    cut = {"tool_calls": [{"name": "run_sql", "raw_arguments": '{"sql": "SELECT region, SUM(amount'}],
           "finish": "length"}
    server = serve(steps(cut, text_step("Shorter now.")))
    summary = summary_of(run_cli(server, sales_db, tmp_path / "ws"))
    assert summary["answer"] == "Shorter now."
    (told,) = tool_results(server.requests[1])
    message = told["error"]["message"]
    assert "cut off" in message and "output token limit" in message and "not valid JSON" not in message
    assert "shorter" in told["error"]["hint"]


def test_a_refusal_is_said(serve, sales_db, tmp_path):
    server = serve(steps({"refusal": "I can't help with that."}))
    out = run_cli(server, sales_db, tmp_path / "ws", json_out=False)
    assert "guard model_refused: the model declined: I can't help with that." in out.stderr
    assert "The model declined to answer: I can't help with that." in out.stdout
    assert len(server.requests) == 1  # a refusal is an answer, not an empty reply


# ------------------------------------------------------------------ a proxy that ignores stream: true

@pytest.mark.asyncio
async def test_one_json_body_to_a_streamed_request_is_read_whole(serve):
    server = serve(steps({"content": "<think>hm</think>Whole.", "ignores_stream": True},))
    pieces: list[str] = []
    thinking: list[bool] = []
    reply = await complete(server, on_text=pieces.append, on_thinking=lambda: thinking.append(True))
    assert reply.text == "Whole." and "".join(pieces) == "Whole." and thinking == [True]
    assert reply.finish_reason == "stop" and reply.usage and reply.usage["prompt_tokens"] > 0
    assert server.requests[0]["stream"] is True


def test_a_proxy_that_ignores_streaming_still_runs_calls(serve, sales_db, tmp_path):
    server = serve(steps({"tool_calls": [LIST_TABLES], "ignores_stream": True},
                         {"content": "Three tables.", "ignores_stream": True}))
    summary = summary_of(run_cli(server, sales_db, tmp_path / "ws"))
    assert summary["status"] == "completed" and summary["answer"] == "Three tables."
    assert [c["function"]["name"] for c in assistant_calls(server.requests[1])] == ["list_tables"]


# ------------------------------------------------------------------ hints that match the cause, and fallbacks

def test_a_base_url_without_v1_gets_its_own_hint(serve, sales_db, tmp_path):
    server = serve(steps(text_step("never")), strict_routes=True)
    bare = server.base_url.removesuffix("/v1")
    out = run_cli(server, sales_db, tmp_path / "ws", base_url=bare, json_out=False)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    (line,) = [line for line in out.stderr.splitlines() if line.startswith("turn error")]
    assert "answered 404" in line and f"OPENAI_BASE_URL usually ends in /v1: try {bare}/v1" in line


@pytest.mark.asyncio
async def test_a_pasted_chat_completions_url_is_trimmed(serve, monkeypatch):
    server = serve(steps(text_step("fine")), strict_routes=True)
    assert (await complete(server, base_url=server.base_url + "/chat/completions/")).text == "fine"
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url + "/chat/completions")
    client = LLMClient(model="m", api_key="x", max_retries=0)
    try:
        assert (await client.complete(USER, [])).text == "fine"
    finally:
        await client.aclose()


@pytest.mark.asyncio
async def test_vllm_without_auto_tool_choice_names_the_flags(serve):
    server = serve(steps(text_step("never")), rejects=["auto_tool_choice"])
    with pytest.raises(ModelError) as info:
        await complete(server)
    assert "answered 400" in info.value.message
    assert "--enable-auto-tool-choice" in info.value.hint and "--tool-call-parser" in info.value.hint
    assert len(server.received) == 1


@pytest.mark.asyncio
async def test_a_template_without_a_system_role_gets_it_folded_into_the_user_message(serve):
    server = serve(steps(text_step("folded")), rejects=["system_role"])
    client = LLMClient(model="m", base_url=server.base_url, api_key="x", max_retries=0)
    try:
        assert (await client.complete(USER, TOOLS)).text == "folded"
        assert (await client.complete(USER, TOOLS)).text == "folded"  # asked without at once from then on
    finally:
        await client.aclose()
    first, retried, later = server.received
    assert first["messages"][0]["role"] == "system"
    for body in (retried, later):
        assert [m["role"] for m in body["messages"]] == ["user"]
        assert body["messages"][0]["content"] == "You are terse.\n\ngo"


@pytest.mark.asyncio
async def test_a_gateway_that_refuses_stream_options_is_asked_without(serve):
    server = serve(steps(text_step("streamed")), rejects=["stream_options"])
    reply = await complete(server)
    assert reply.text == "streamed" and reply.usage is None
    assert ["stream_options" in body for body in server.received] == [True, False]


@pytest.mark.asyncio
@pytest.mark.parametrize(("status", "expected"), [
    (502, "a proxy in front of the model server answered 502"),
    (401, "the API key was refused"),
    (404, "the server has no model 'jupyter-analyst-scripted'"),
])
async def test_status_errors_say_their_cause(serve, status, expected):
    message = "model 'jupyter-analyst-scripted' not found" if status == 404 else "no"
    server = serve(steps({"error": {"status": status, "message": message}}))
    with pytest.raises(ModelError) as info:
        await complete(server)
    assert info.value.hint.startswith(expected)


@pytest.mark.asyncio
async def test_a_silent_server_names_a_timeout_setting_that_exists(monkeypatch):
    import socket

    monkeypatch.setenv("ANALYST_MODEL_TIMEOUT", "0.5")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client = LLMClient(model="m", base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1", api_key="x",
                           max_retries=0)
        try:
            assert client.timeout == 0.5
            with pytest.raises(ModelError) as info:
                await client.complete(USER, [])
        finally:
            await client.aclose()
    assert "did not answer within 0.5 s" in info.value.message
    assert "ANALYST_MODEL_TIMEOUT=" in info.value.hint


# ------------------------------------------------------------------ dropped connections

@pytest.mark.asyncio
async def test_a_stream_dropped_midway_is_asked_again_and_shown_once(serve):
    answer = "Revenue grew 12% in the North region, the most of any region this year."
    server = serve(steps({"content": answer}))
    server.drop_streams(1)
    pieces: list[str] = []
    reply = await complete(server, on_text=pieces.append)
    assert reply.text == answer and "".join(pieces) == answer  # nothing shown twice
    assert len(server.requests) == 2


@pytest.mark.asyncio
async def test_a_stream_dropped_twice_is_one_clear_error(serve):
    server = serve(steps({"tool_calls": [LIST_TABLES, LIST_TABLES]}))
    server.drop_streams(2)
    with pytest.raises(ModelError) as info:
        await complete(server)
    assert info.value.reason == "model_connection_dropped" and "broke twice mid-reply" in info.value.message


# ------------------------------------------------------------------ the summarizer

def test_a_hung_summarizer_does_not_keep_the_command_alive(serve, sales_db, tmp_path):
    server = serve(steps(text_step("Done.")))
    server.hold_summarizer()  # it never answers
    started = time.monotonic()
    out = run_cli(server, sales_db, tmp_path / "ws", json_out=False, summarizer=True,
                  env={"ANALYST_SUMMARIZER_WAIT": "1"}, timeout=60)
    assert out.returncode == 0 and "Done." in out.stdout
    assert "agent state not updated: the summarizer did not answer within 1 s" in out.stderr
    assert time.monotonic() - started < 30
    assert len(server.summarizer_requests) == 1
    # The thread's record says it too: the next turn's reader is not left to guess.
    from jupyter_analyst.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    try:
        (thread,) = ws.store.list_threads()
        (memory,) = [e for e in ws.store.events(thread.thread_id) if e.type == "memory"]
    finally:
        ws.close()
    assert memory.status == "failed" and "stopped before its reply was applied" in memory.message


def test_a_summarizer_that_thinks_first_is_read(serve, sales_db, tmp_path):
    script = {**steps(text_step("Done.")), "summarizer": [{"steps": [{
        "content": '<think>Which facts matter? {"add": "not this"}</think>{"add": [{"section": "hypotheses", '
                   '"value": {"id": "h1", "text": "the North region grew most"}}]}'}]}]}
    server = serve(script)
    out = run_cli(server, sales_db, tmp_path / "ws", json_out=False, summarizer=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "agent state updated (1 added)" in out.stderr, out.stderr[-2000:]
