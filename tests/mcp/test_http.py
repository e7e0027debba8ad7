"""`jupyter analyst mcp --http`: streamable HTTP behind a bearer token, driven by the SDK's own
client against a real server process."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import urllib.error
import urllib.request

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from jupyter_analyst.testing.servers.jupyter import free_port, stop_process

pytestmark = pytest.mark.process  # each test starts the server process

TOKEN = "mcp-test-token"


def command(workspace, source, *extra: str) -> list[str]:
    return [sys.executable, "-m", "jupyter_analyst.cli", "mcp", "--http", "--workspace", str(workspace),
            "--db", str(source), "--no-summarizer", *extra]


def status_of(url: str, headers: dict[str, str] | None = None) -> int:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.fixture
def http_server(tmp_path, sales_db):
    port = free_port()
    log = open(tmp_path / "mcp.log", "wb")
    proc = subprocess.Popen(command(tmp_path / "ws", sales_db, "--port", str(port), "--token", TOKEN),
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while True:  # until it answers (a bare GET without a token: 401)
        try:
            status_of(url)
            break
        except (urllib.error.URLError, ConnectionError):
            assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "mcp.log").read_text()
            time.sleep(0.1)
    yield url
    stop_process(proc)
    log.close()


def test_a_request_without_the_token_gets_401(http_server):
    assert status_of(http_server) == 401
    assert status_of(http_server, {"Authorization": "Bearer wrong"}) == 401


def test_tools_are_called_over_http_with_the_token(http_server):
    async def session():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
        async with http, Client(streamable_http_client(http_server, http_client=http)) as client:
            tools = (await client.list_tools()).tools
            made = await client.call_tool("run_sql", {"sql": "SELECT COUNT(*) AS n FROM orders", "name": "n"})
            blob = await client.read_resource(made.structured_content["artifacts"][0]["uri"])
            return tools, made, blob

    tools, made, blob = asyncio.run(session())
    assert "run_sql" in {tool.name for tool in tools}
    assert not made.is_error and made.structured_content["result"]["rows"] == 1
    assert blob.contents[0].blob  # the dataset's Parquet bytes


def test_oauth_discovery_gets_404_so_a_host_does_not_try_to_log_in(http_server):
    base = http_server.removesuffix("/mcp")
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource",
                 "/.well-known/oauth-authorization-server"):
        assert status_of(base + path) == 404, path
    assert status_of(http_server) == 401  # the endpoint itself still asks for the token


def test_the_bearer_scheme_is_read_in_any_case_and_the_server_names_its_version(http_server):
    from jupyter_analyst import __version__

    async def session(scheme: str):
        http = httpx2.AsyncClient(headers={"Authorization": f"{scheme} {TOKEN}"}, timeout=60)
        async with http, Client(streamable_http_client(http_server, http_client=http)) as client:
            return client.server_info, (await client.list_tools()).tools

    info, tools = asyncio.run(session("bearer"))
    assert asyncio.run(session("BEARER"))[0] == info
    assert info.name == "jupyter-analyst" and info.version == __version__
    assert all(tool.title for tool in tools), [t.name for t in tools if not t.title]
    for tool in tools:  # every parameter says what it is
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description"), f"{tool.name}.{name}"
