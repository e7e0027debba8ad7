"""The server's warm pool: a new thread's first Python step runs in a prestarted kernel."""

from __future__ import annotations

import asyncio
import json

import pytest

from jupyter_analyst.testing.servers.jupyter import analyst_server_config
from jupyter_analyst.events import parse_events
from jupyter_analyst.testing import ScriptedModelServer

SCRIPT = {"turns": [{"steps": [
    {"tool_calls": [{"name": "run_python", "arguments": {"code": "open('outputs/hi.txt', 'w').write('hi'); print(6 * 7)"}}]},
    {"content": "[scripted model] done"},
]}]}


@pytest.fixture
def jp_server_config(tmp_path, sales_db):
    with ScriptedModelServer(SCRIPT) as model:
        yield analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, model.base_url, pool_size=1)


async def test_first_step_of_a_new_thread_uses_a_warm_kernel(jp_fetch, jp_serverapp):
    service = jp_serverapp.web_app.settings["jupyter_analyst"]
    for _ in range(1200):  # until the pool has filled (bounded)
        if service.pool.ready == 1:
            break
        await asyncio.sleep(0.05)
    assert service.pool.ready == 1
    thread = json.loads((await jp_fetch("analyst", "api", "threads", method="POST", body="{}")).body)
    body = (await jp_fetch("analyst", "api", "threads", thread["thread_id"], "turns", method="POST",
                           body=json.dumps({"prompt": "go"}))).body.decode()
    events = parse_events(body)
    result = next(e for e in events if e["type"] == "tool_result")
    assert result["status"] == "ok" and result["result"]["stdout"].strip() == "42"
    assert service.pool.hits == 1 and service.pool.misses == 0
    artifacts = json.loads((await jp_fetch("analyst", "api", "threads", thread["thread_id"], "artifacts")).body)
    assert [a["name"] for a in artifacts["artifacts"]] == ["outputs/hi.txt"]
