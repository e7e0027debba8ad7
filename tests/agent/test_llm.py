"""LLMClient: the real openai SDK, streaming over HTTP from the scripted model server."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from jupyter_analyst.agent.tools.arguments import normalize_arguments
from jupyter_analyst.agent import LLMClient
from jupyter_analyst.agent.llm.reply import ModelReply
from jupyter_analyst.agent.tools import TOOLS
from jupyter_analyst.errors import ConfigError, ModelError
from jupyter_analyst.testing import ScriptedModelServer

pytestmark = pytest.mark.timeout(60)

USER = [{"role": "user", "content": "go"}]
# Quotes, backslashes, a newline and non-ASCII: every escape the split quirk can cut through.
TRICKY_SQL = {"sql": 'SELECT \'a"b\' AS "q", \'C:\\\\dir\' AS p -- é\nFROM t', "name": "x"}


async def complete(server, messages=USER, *, tools=TOOLS, on_text=None, on_tool=None, **client_kw) -> ModelReply:
    client = LLMClient(model="jupyter-analyst-scripted", base_url=server.base_url, api_key="any", **client_kw)
    try:
        return await client.complete(messages, tools, on_text=on_text, on_tool=on_tool)
    finally:
        await client.aclose()


def one_step(**step) -> dict:
    return {"turns": [{"steps": [step]}]}


@pytest.fixture
def serve():
    """Start scripted model servers for a test and stop them after."""
    servers = []

    def start(script) -> ScriptedModelServer:
        server = ScriptedModelServer(script).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.mark.asyncio
@pytest.mark.parametrize("quirk", ["id_first_chunk_only", "id_every_chunk", "id_changes", "no_id", "split_arguments"])
async def test_every_stream_quirk_assembles_the_same_calls(serve, quirk):
    calls = [{"name": "run_sql", "arguments": TRICKY_SQL}, {"name": "run_python", "arguments": {"code": "print(1)"}}]
    server = serve(one_step(tool_calls=calls, quirk=quirk))
    reply = await complete(server)
    assert [c.name for c in reply.tool_calls] == ["run_sql", "run_python"]
    assert json.loads(reply.tool_calls[0].arguments) == TRICKY_SQL
    assert json.loads(reply.tool_calls[1].arguments) == {"code": "print(1)"}
    ids = [c.id for c in reply.tool_calls]
    assert len(set(ids)) == 2 and all(ids)
    if quirk == "no_id":
        assert ids == ["call_0", "call_1"]
    else:
        assert not any(i.startswith("call_changed") for i in ids)  # the first id wins
    assert reply.finish_reason == "tool_calls" and reply.text == ""
    request = server.requests[0]
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
    assert [t["function"]["name"] for t in request["tools"]] == [t["function"]["name"] for t in TOOLS]


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("{not json", None),
        ("", {}),
        (json.dumps(json.dumps({"code": "print(1)"})), {"code": "print(1)"}),
        (json.dumps({"arguments": {"script": "print(1)"}}), {"code": "print(1)"}),
    ],
)
async def test_raw_arguments_arrive_verbatim_and_normalise(serve, raw, expected):
    server = serve(one_step(tool_calls=[{"name": "run_python", "raw_arguments": raw}], quirk="split_arguments"))
    (call,) = (await complete(server)).tool_calls
    assert call.arguments == raw
    if expected is None:
        with pytest.raises(Exception, match="not valid JSON"):
            normalize_arguments(call.name, call.arguments)
    else:
        assert normalize_arguments(call.name, call.arguments) == expected


@pytest.mark.asyncio
async def test_text_streams_in_pieces_to_sync_and_async_sinks(serve):
    answer = "[scripted model] Revenue grew 12% in the North region."
    server = serve(one_step(content=answer))
    pieces: list[str] = []
    reply = await complete(server, on_text=pieces.append)
    assert len(pieces) >= 3 and "".join(pieces) == reply.text == answer
    assert reply.finish_reason == "stop" and reply.tool_calls == []
    assert reply.usage and reply.usage["total_tokens"] == reply.usage["prompt_tokens"] + reply.usage["completion_tokens"]

    received: list[str] = []

    async def sink(text: str) -> None:
        await asyncio.sleep(0)
        received.append(text)

    assert (await complete(server, on_text=sink)).text == "".join(received) == answer


@pytest.mark.asyncio
async def test_text_before_tool_calls(serve):
    server = serve(one_step(content="Looking at the tables.", tool_calls=[{"name": "list_tables"}]))
    reply = await complete(server, tools=[])
    assert reply.text == "Looking at the tables."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("list_tables", "{}")]
    assert "tools" not in server.requests[0]  # an empty tool list is not sent: some servers reject it


@pytest.mark.asyncio
async def test_http_500_becomes_model_error_naming_the_endpoint(serve):
    server = serve(one_step(error={"status": 500, "message": "the GPU caught fire"}))
    with pytest.raises(ModelError) as info:
        await complete(server, max_retries=1)
    message = info.value.message
    assert message.startswith(f"model endpoint {server.base_url}") and "answered 500: the GPU caught fire" in message
    assert info.value.reason == "model_error" and info.value.hint
    assert len(server.requests) == 2  # the SDK retried once, and the stateless script failed again


@pytest.mark.asyncio
async def test_http_401_is_not_retried(serve):
    server = serve(one_step(error={"status": 401, "message": "bad key"}))
    with pytest.raises(ModelError, match="answered 401: bad key"):
        await complete(server, max_retries=2)
    assert len(server.requests) == 1


@pytest.mark.asyncio
async def test_stopped_server_is_a_quick_model_error():
    server = ScriptedModelServer(one_step(content="never")).start()
    server.stop()
    started = time.perf_counter()
    with pytest.raises(ModelError) as info:
        await complete(server, max_retries=0)
    assert "cannot reach the model endpoint" in info.value.message and server.base_url in info.value.message
    assert time.perf_counter() - started < 10


@pytest.mark.asyncio
async def test_silent_server_times_out_as_model_error():
    """A server that accepts the connection and never answers: the timeout is the limit."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        client = LLMClient(model="m", base_url=f"http://127.0.0.1:{port}/v1", api_key="any", timeout=0.5, max_retries=0)
        try:
            with pytest.raises(ModelError, match="did not answer within 0.5 s"):
                await client.complete(USER, [])
        finally:
            await client.aclose()


def test_missing_api_key_is_a_config_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_ADMIN_KEY", raising=False)
    with pytest.raises(ConfigError) as info:
        LLMClient(model="m", base_url="http://127.0.0.1:9/v1")
    assert "OPENAI_API_KEY" in info.value.hint


@pytest.mark.asyncio
async def test_base_url_and_key_come_from_the_environment(serve, monkeypatch):
    server = serve(one_step(content="from env"))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    client = LLMClient(model="m")
    try:
        assert (await client.complete(USER, [])).text == "from env"
    finally:
        await client.aclose()


def test_model_clients_share_one_tls_context_that_still_verifies_certificates():
    import ssl

    from jupyter_analyst.agent.llm.client import _tls

    # Made once per process and endpoint (loading the CA bundle is the costly part), never relaxed.
    secure = _tls("https://api.example.com/v1")
    assert secure is _tls("https://api.example.com/v1") and _tls(None) is _tls(None)
    for context in (secure, _tls(None)):
        assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
        assert context.get_ca_certs() or context.cert_store_stats()["x509_ca"] > 0
    # A plain-HTTP endpoint loads no bundle; were it ever sent to HTTPS, it would trust nobody.
    plain = _tls("http://127.0.0.1:8000/v1")
    assert plain.verify_mode == ssl.CERT_REQUIRED and plain.check_hostname
    assert plain.cert_store_stats()["x509_ca"] == 0 and not plain.get_ca_certs()


@pytest.mark.asyncio
async def test_each_tool_is_named_as_its_call_starts(serve):
    calls = [{"name": "run_sql", "arguments": TRICKY_SQL}, {"name": "run_python", "arguments": {"code": "print(1)"}}]
    server = serve(one_step(tool_calls=calls, quirk="split_arguments"))
    named: list[str] = []
    reply = await complete(server, on_tool=named.append)
    assert named == ["run_sql", "run_python"]
    assert [c.name for c in reply.tool_calls] == named
