"""The scripted OpenAI-compatible model server: stateless replay, wire format, errors, bad input."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import openai
import pytest

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.testing import MODEL_NAME, Script, ScriptedModelServer, load_script

pytestmark = pytest.mark.timeout(60)

SCRIPT = {
    "turns": [
        {"match": "^continue", "steps": [{"content": "C0"}]},
        {"match": "revenue", "steps": [
            {"tool_calls": [{"name": "run_sql", "arguments": {"sql": "SELECT 1", "name": "revenue"}}]},
            {"content": "let me chart it", "tool_calls": [{"name": "run_python", "arguments": {"code": "print(1)"}}]},
            {"content": "R2 final"},
        ]},
        {"steps": [{"content": "fallback"}]},
    ]
}


def user(text):
    return {"role": "user", "content": text}


def assistant(text="..."):
    return {"role": "assistant", "content": text}


def tool(text="{}"):
    return {"role": "tool", "tool_call_id": "call_0", "content": text}


@pytest.fixture
def server():
    with ScriptedModelServer(SCRIPT) as srv:
        yield srv


@pytest.fixture
def sdk(server):
    client = openai.OpenAI(base_url=server.base_url, api_key="ignored", max_retries=0)
    yield client
    client.close()


def ask(sdk, messages):
    """One non-streamed completion: the reply message."""
    return sdk.chat.completions.create(model="anything", messages=messages).choices[0]


def test_step_is_the_number_of_assistant_messages_after_the_last_user_message(sdk):
    history = [user("show revenue"), assistant(), tool(), assistant(), tool(), assistant("R2 final")]
    base = [*history, user("Revenue by region please")]  # an earlier exchange does not count
    zero = ask(sdk, base)
    assert zero.finish_reason == "tool_calls"
    assert zero.message.tool_calls[0].function.name == "run_sql"
    assert json.loads(zero.message.tool_calls[0].function.arguments) == {"sql": "SELECT 1", "name": "revenue"}
    one = ask(sdk, [*base, assistant(), tool()])
    assert one.message.content == "let me chart it" and one.message.tool_calls[0].function.name == "run_python"
    two = ask(sdk, [*base, assistant(), tool(), assistant(), tool()])
    assert two.finish_reason == "stop" and two.message.content == "R2 final" and not two.message.tool_calls
    past = ask(sdk, [*base, assistant(), assistant(), assistant()])
    assert past.message.content == "[scripted model] script exhausted"


def test_turn_is_the_first_whose_match_finds_the_last_user_message(sdk):
    assert ask(sdk, [user("CONTINUE please")]).message.content == "C0"  # case-insensitive
    assert ask(sdk, [user("please continue")]).message.content == "fallback"  # ^ anchors the search
    assert ask(sdk, [user("revenue"), assistant(), user("hello")]).message.content == "fallback"
    parts = [{"role": "user", "content": [{"type": "text", "text": "monthly"}, {"type": "text", "text": "revenue"}]}]
    assert ask(sdk, parts).message.tool_calls[0].function.name == "run_sql"


def test_no_matching_turn_says_so():
    with ScriptedModelServer({"turns": [{"match": "revenue", "steps": [{"content": "x"}]}]}) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        assert ask(client, [user("weather?")]).message.content == "[scripted model] no scripted reply for: weather?"
        client.close()


def test_replay_is_stateless_across_servers(tmp_path):
    """A fresh server (a restart, another process) answers the same conversation the same way."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    conversation = [user("revenue"), assistant(), tool()]
    answers = []
    for _ in range(2):
        with ScriptedModelServer(path) as srv:
            client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
            answers.append(ask(client, conversation).message.content)
            answers.append(ask(client, conversation).message.content)
            client.close()
    assert answers == ["let me chart it"] * 4


def test_requests_are_recorded_in_order(server, sdk):
    system = {"role": "system", "content": "inventory: a1 revenue dataset"}
    ask(sdk, [system, user("revenue")])
    ask(sdk, [system, user("continue")])
    assert [r["messages"][-1]["content"] for r in server.requests] == ["revenue", "continue"]
    assert server.requests[0]["messages"][0] == system
    server.requests.clear()  # a copy: the record itself is not touched
    assert len(server.requests) == 2


def test_models_endpoint(server, sdk):
    assert [m.id for m in sdk.models.list().data] == [MODEL_NAME]
    assert sdk.models.retrieve(MODEL_NAME).id == MODEL_NAME


def test_stream_wire_format(server):
    """Raw SSE: envelope fields, role first, [DONE] last, usage only when asked for."""
    def stream(**extra):
        body = {"model": "m", "stream": True, "messages": [user("revenue")], **extra}
        request = urllib.request.Request(f"{server.base_url}/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.headers["Content-Type"].startswith("text/event-stream")
            lines = [line for line in response.read().decode().split("\n\n") if line]
        assert lines[-1] == "data: [DONE]"
        return [json.loads(line.removeprefix("data: ")) for line in lines[:-1]]

    chunks = stream()
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1 and all(c["model"] == MODEL_NAME and c["created"] for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert all("usage" not in c for c in chunks)
    with_usage = stream(stream_options={"include_usage": True})
    assert with_usage[-1]["choices"] == [] and with_usage[-1]["usage"]["prompt_tokens"] > 0


def test_split_arguments_cut_through_escapes():
    script = {"turns": [{"steps": [{"quirk": "split_arguments",
                                    "tool_calls": [{"name": "run_python", "arguments": {"code": 'print("a\\\\b")'}}]}]}]}
    with ScriptedModelServer(script) as srv:
        body = {"model": "m", "stream": True, "messages": [user("x")]}
        request = urllib.request.Request(f"{srv.base_url}/chat/completions", data=json.dumps(body).encode())
        with urllib.request.urlopen(request, timeout=10) as response:
            events = [json.loads(e.removeprefix("data: ")) for e in response.read().decode().split("\n\n")
                      if e.startswith("data: {")]
    pieces = [tc["function"].get("arguments", "") for e in events for c in e["choices"]
              for tc in c["delta"].get("tool_calls") or ()]
    assert len(pieces) > 8 and any(p.endswith("\\") for p in pieces)
    assert json.loads("".join(pieces)) == {"code": 'print("a\\\\b")'}


def test_a_paced_reasoning_streams_a_line_at_a_time_that_far_apart():
    """A model thinking at length: each line of its reasoning comes ``reasoning_pace_s`` after
    the last, and only then its text (what a client shows as thinking for that long)."""
    thought = "Which region?\nBy month.\nThen chart it."
    script = {"turns": [{"steps": [{"reasoning": thought, "reasoning_pace_s": 0.3, "content": "Done."}]}]}
    with ScriptedModelServer(script) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        seen: list[tuple[float, str, str]] = []
        asked = time.monotonic()
        stream = client.chat.completions.create(model="m", messages=[user("x")], stream=True)
        for chunk in stream:
            delta = chunk.choices[0].delta.model_dump() if chunk.choices else {}
            for field in ("reasoning_content", "content"):
                if delta.get(field):
                    seen.append((time.monotonic(), field, delta[field]))
        client.close()
    assert [text for _, field, text in seen if field == "reasoning_content"] == [
        "Which region?\n", "By month.\n", "Then chart it."]
    assert [field for _, field, _ in seen][3:] == ["content"] * (len(seen) - 3)
    assert "".join(text for _, field, text in seen if field == "content") == "Done."
    # A line can reach the client late and the next one on time, so the gaps between arrivals
    # say little; that the k-th line cannot arrive before k paces have passed says it all.
    since = [round(t - asked, 3) for t, _, _ in seen[:3]]
    assert since[1] >= 0.3 and since[2] >= 0.6, since


def test_scripted_http_error():
    with ScriptedModelServer({"turns": [{"steps": [{"error": {"status": 503, "message": "busy"}}]}]}) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.APIStatusError) as info:
            ask(client, [user("x")])
        client.close()
    assert info.value.status_code == 503 and info.value.body["message"] == "busy"


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/chat/completions", b"{not json", 400),
        ("/chat/completions", b"[1, 2]", 400),
        ("/chat/completions", b'{"messages": "hi"}', 400),
        ("/embeddings", b'{"messages": []}', 404),
    ],
)
def test_bad_requests_get_json_errors(server, path, body, status):
    request = urllib.request.Request(server.base_url + path, data=body)
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(request, timeout=10)
    assert info.value.code == status
    assert json.loads(info.value.read())["error"]["message"]
    assert server.requests == []


@pytest.mark.parametrize(
    ("script", "problem"),
    [
        ({"turns": [{"steps": [{"contnet": "typo"}]}]}, "contnet"),
        ({"turns": [{"match": "(unclosed", "steps": []}]}, "not a regular expression"),
        ({"turns": [{"steps": [{"quirk": "sometimes"}]}]}, "quirk"),
        ({"turns": [{"steps": [{"tool_calls": [{"name": "x", "arguments": {}, "raw_arguments": "{}"}]}]}]}, "not both"),
        ({"turns": [{"steps": [{"content": "x", "error": {"status": 500}}]}]}, "answers nothing else"),
        ({"turns": [{"steps": [{"reasoning": "x", "reasoning_pace_s": 60}]}]}, "reasoning_pace_s"),
    ],
)
def test_malformed_scripts_are_refused(script, problem):
    with pytest.raises(ConfigError, match="malformed") as info:
        ScriptedModelServer(script)
    assert problem in info.value.message


def test_missing_script_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot be read"):
        load_script(tmp_path / "nope.json")


def test_bundled_demo_script_loads():
    from importlib.resources import files

    script = load_script(str(files("jupyter_analyst") / "data" / "demo_script.json"))
    assert isinstance(script, Script) and len(script.turns) >= 2


def test_the_lab_demo_says_which_questions_it_answers_and_each_one_is_answered():
    """Under `make lab` a question the script does not know is answered with the ones it
    does, and each of those really has its scripted turn (not the fallback)."""
    from jupyter_analyst.cli.lab import LAB_SCRIPT
    from jupyter_analyst.testing.script import Script

    script = Script.model_validate_json(LAB_SCRIPT.read_text(encoding="utf-8"))
    help_text = script.reply_for([{"role": "user", "content": "What is the churn rate?"}]).content
    assert 'not "What is the churn rate?"' in help_text and "OPENAI_API_KEY" in help_text
    suggested = [line[2:].split(" (")[0] for line in help_text.splitlines() if line.startswith("- ")]
    assert len(suggested) >= 4
    for prompt in suggested:
        reply = script.reply_for([{"role": "user", "content": prompt}])
        assert reply.content != help_text and "no scripted reply" not in (reply.content or ""), prompt


@pytest.mark.parametrize("name", ["demo_script.json", "lab_script.json"])
def test_the_shipped_scripts_resolve_the_next_step_only_after_the_user_said_continue(name):
    """Their unmatched answer lists "continue" among the questions to try: a thread whose first
    question was unmatched adds the next step (its summary once failed: 'no items entry
    next-step to update'); only a turn the user began with "continue" resolves it."""
    from importlib import resources

    from jupyter_analyst.agent import SUMMARIZER_MARKER

    script = load_script(json.loads((resources.files("jupyter_analyst") / "data" / name).read_text()))
    system = {"role": "system", "content": SUMMARIZER_MARKER + " ..."}
    unmatched = (script.unmatched or "Try: continue, or another question").format(prompt="how are sales?")
    first = {"role": "user", "content": f"--- turn 1\nuser: how are sales?\nassistant: {unmatched}"}
    then = {"role": "user", "content": f"--- turn 1\nuser: Revenue by region\nassistant: done\n--- turn 2\nuser: continue\n"
                                       "assistant: the same steps, reused"}
    assert '"id": "next-step"' in script.summarizer_reply([system, first]).content
    assert '"add"' in script.summarizer_reply([system, first]).content
    assert '"update"' in script.summarizer_reply([system, then]).content
