"""kill -9 a real Jupyter server in the middle of a turn, start it again: nothing completed
is lost, the cut turn is marked interrupted, and "continue" reuses what was done."""

from __future__ import annotations

import threading
import time

import pytest

from jupyter_analyst.events import parse_events
from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess

SQL = "SELECT region, COUNT(*) AS n FROM regions GROUP BY region ORDER BY region"
SCRIPT = {"turns": [
    {"match": "^continue", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": SQL, "name": "counts"}}]},
        {"content": "[scripted model] picked up where the last turn stopped"},
    ]},
    {"match": ".", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": SQL, "name": "counts"}}]},
        {"tool_calls": [{"name": "run_python", "arguments": {"code": "import time\ntime.sleep(120)"}}]},
        {"content": "[scripted model] never reached"},
    ]},
]}
@pytest.fixture
def model():
    with ScriptedModelServer(SCRIPT) as server:
        yield server


def test_kill_9_mid_turn_then_continue(tmp_path, sales_db, model):
    server = JupyterServerProcess(tmp_path, sources={"sales": str(sales_db)}, model_url=model.base_url)
    server.start()
    try:
        thread = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})
        tid = thread["thread_id"]

        def start_turn():
            try:
                server.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "count"},
                               raw=True, timeout=300)
            except Exception:
                pass  # the server is killed under this request

        threading.Thread(target=start_turn, daemon=True).start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the SQL step is done and the Python step runs
            events = server.request(f"/analyst/api/threads/{tid}/events")["events"]
            if any(e["type"] == "tool_call" and e["tool"] == "run_python" for e in events):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the turn did not reach its Python step")
        before = server.request(f"/analyst/api/threads/{tid}/events")["events"]
        server.kill9()

        server.start()
        after = server.request(f"/analyst/api/threads/{tid}/events")["events"]
        assert after[: len(before)] == before, "every persisted event survived"
        assert [e["seq"] for e in after] == list(range(1, len(after) + 1))
        turns = server.request(f"/analyst/api/threads/{tid}")["turns"]
        assert [t["status"] for t in turns] == ["interrupted"]
        assert any(a["type"] == "dataset" for a in server.request(f"/analyst/api/threads/{tid}/artifacts")["artifacts"])

        body = server.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "continue"},
                              raw=True, timeout=120).decode()
        events = parse_events(body)
        assert events[-1]["type"] == "turn_ended" and events[-1]["status"] == "completed"
        sql_result = next(e for e in events if e["type"] == "tool_result")
        assert sql_result["reused"] is True
        assert [t["status"] for t in server.request(f"/analyst/api/threads/{tid}")["turns"]] == ["interrupted", "completed"]
    finally:
        server.stop()
