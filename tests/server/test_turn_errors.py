"""A turn that fails after its stream began: the stream ends with an ``error`` event saying
why, through a real Jupyter server (pytest-jupyter's jp_fetch).

Before the fix the handler called a frame writer the server's SSE module did not have: the
``AttributeError`` cut the stream off with no word of the failure.
"""

from __future__ import annotations

import json
import shutil

import pytest

from jupyter_analyst.events import parse_events
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

SCRIPT = {"turns": [{"match": ".", "steps": [{"content": "[scripted model] hello"}]}]}


@pytest.fixture
def gone_db(tmp_path, sales_db):
    path = tmp_path / "gone.duckdb"
    shutil.copyfile(sales_db, path)
    return path


@pytest.fixture
def jp_server_config(tmp_path, sales_db, gone_db, scripted):
    return analyst_server_config(tmp_path / "ws", {"sales": str(sales_db), "gone": str(gone_db)}, scripted.base_url)


async def test_a_turn_failing_after_its_stream_began_ends_the_stream_with_an_error_event(jp_fetch, gone_db):
    thread = json.loads((await jp_fetch("analyst", "api", "threads", method="POST",
                                        body=json.dumps({"source": "gone", "title": "t"}))).body)
    gone_db.unlink()  # the turn starts, and streams, then cannot open its source
    response = await jp_fetch("analyst", "api", "threads", thread["thread_id"], "turns", method="POST",
                              body=json.dumps({"prompt": "anything"}), request_timeout=120)
    assert response.code == 200 and response.headers["Content-Type"].startswith("text/event-stream")
    body = response.body.decode()
    frames = [f for f in body.split("\n\n") if f.strip()]
    events = parse_events(body)
    assert events[0]["type"] == "turn_started"
    assert events[-2]["type"] == "turn_ended" and events[-2]["status"] == "error"
    # The last frame: the error, as a client reads it (an `event: error` frame without an id).
    assert frames[-1].startswith("event: error\n")
    error = events[-1]
    assert error["reason"] == "source_not_found" and "gone.duckdb" in error["message"]
    # The server goes on: a turn on another source completes.
    other = json.loads((await jp_fetch("analyst", "api", "threads", method="POST",
                                       body=json.dumps({"source": "sales", "title": "t2"}))).body)
    response = await jp_fetch("analyst", "api", "threads", other["thread_id"], "turns", method="POST",
                              body=json.dumps({"prompt": "hello"}), request_timeout=120)
    assert parse_events(response.body.decode())[-1]["status"] == "completed"
