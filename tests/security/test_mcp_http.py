"""Attacks on `jupyter analyst mcp --http` from elsewhere on the machine: another account
calling the tools of a server started without a token, and a web page reaching a loopback
server through a name it rebinds there (DNS rebinding), on 127.0.0.1 and on another loopback
address, where the SDK's own check of the Host header is off unless asked for."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from jupyter_analyst.testing.servers.jupyter import free_port, stop_process

pytestmark = pytest.mark.process  # each test starts the server process

TOKEN = "mcp-attack-test-token"
INITIALIZE = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "page", "version": "1"}}}).encode()


def status_of(url: str, headers: dict[str, str] | None = None, body: bytes | None = None) -> int:
    request = urllib.request.Request(url, headers=headers or {}, data=body)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@contextmanager
def mcp_http(tmp_path: Path, source: Path, host: str, *extra: str) -> Iterator[tuple[str, list[str]]]:
    """A real `mcp --http` process on ``host``, once it answers: its URL, and the first lines
    of its stderr (where the server prints the URL and the header to use)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "ANALYST_MCP_TOKEN"}
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_analyst.cli", "mcp", "--http", "--host", host,
                             "--port", str(port), "--workspace", str(tmp_path / "ws"), "--db", str(source),
                             "--no-summarizer", *extra], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            env=env, text=True)
    assert proc.stderr is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)  # type: ignore[arg-type]
    reader.start()
    url = f"http://{host}:{port}/mcp"
    deadline = time.monotonic() + 60
    try:
        while True:  # until it answers, and has printed its two lines (before it listened)
            try:
                status_of(url)
                if len(lines) >= 2 or time.monotonic() > deadline:
                    break
            except (urllib.error.URLError, ConnectionError):
                assert proc.poll() is None and time.monotonic() < deadline, lines
            time.sleep(0.1)
        yield url, lines
    finally:
        stop_process(proc)
        reader.join(10)


def tool_names(url: str, token: str) -> set[str]:
    async def listing() -> set[str]:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    return asyncio.run(listing())


def test_a_server_started_without_a_token_makes_one_and_refuses_everyone_else(tmp_path, sales_db):
    with mcp_http(tmp_path, sales_db, "127.0.0.1") as (url, lines):
        assert len(lines) >= 2 and lines[0].strip().endswith(url), lines
        header = lines[1].strip().partition("Authorization: Bearer ")[2]
        assert len(header) >= 40  # secrets.token_urlsafe(32)
        assert status_of(url) == 401
        assert status_of(url, {"Authorization": "Bearer "}) == 401
        run_sql = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "run_sql", "arguments": {"sql": "SELECT * FROM orders", "name": "stolen"}}}).encode()
        assert status_of(url, {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
                         run_sql) == 401
        assert "run_sql" in tool_names(url, header)  # the owner, with the printed token, gets in


def test_past_loopback_without_a_token_it_serves_only_with_a_made_one(tmp_path, sales_db):
    with mcp_http(tmp_path, sales_db, "0.0.0.0") as (url, lines):
        assert status_of(url.replace("0.0.0.0", "127.0.0.1")) == 401
        assert any("Authorization: Bearer " in line for line in lines), lines


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2"])
def test_a_rebound_name_is_refused_even_with_the_token(tmp_path, sales_db, host):
    with mcp_http(tmp_path, sales_db, host, "--token", TOKEN) as (url, _lines):
        port = url.rsplit(":", 1)[1].split("/")[0]
        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        rebound = status_of(url, {**headers, "Host": f"evil.example:{port}"}, INITIALIZE)
        foreign = status_of(url, {**headers, "Origin": f"http://evil.example:{port}"}, INITIALIZE)
        assert rebound in (400, 403, 421), rebound
        assert foreign in (400, 403), foreign
        assert "run_sql" in tool_names(url, TOKEN)  # the address served is allowed
