"""kill -9 a real Jupyter server in the middle of a turn, start it again: nothing completed
is lost, the cut turn is marked interrupted, and "continue" reuses what was done."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

from jupyter_analyst.testing import ScriptedModelServer

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
TOKEN = "crash-test-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, tmp_path, sales_db, model_url):
        self.port = free_port()
        self.tmp = tmp_path
        self.args = [
            sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root", f"--port={self.port}",
            "--ServerApp.ip=127.0.0.1",
            f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={tmp_path}",
            "--ServerApp.jpserver_extensions={'jupyter_analyst.server': True}",
            f"--AnalystApp.workspace={tmp_path / 'ws'}",
            "--AnalystApp.sources=" + json.dumps({"sales": str(sales_db)}),
            f"--AnalystApp.model_base_url={model_url}", "--AnalystApp.api_key=x",
            "--AnalystApp.model=jupyter-analyst-scripted",
        ]
        self.env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
                    "JUPYTER_DATA_DIR": str(tmp_path / "data")}
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until it answers (bounded)
            try:
                self.get("/api/status", raw=True)
                return
            except (urllib.error.URLError, ConnectionError):
                assert self.proc.poll() is None, "the server exited"
                time.sleep(0.1)
        raise AssertionError("the server did not start")

    def request(self, path, *, method="GET", body=None, raw=False, timeout=30):
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data = resp.read()
        return data if raw else json.loads(data)

    def get(self, path, **kw):
        return self.request(path, **kw)

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture
def model():
    with ScriptedModelServer(SCRIPT) as server:
        yield server


def test_kill_9_mid_turn_then_continue(tmp_path, sales_db, model):
    server = Server(tmp_path, sales_db, model.base_url)
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
            events = server.get(f"/analyst/api/threads/{tid}/events")["events"]
            if any(e["type"] == "tool_call" and e["tool"] == "run_python" for e in events):
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the turn did not reach its Python step")
        before = server.get(f"/analyst/api/threads/{tid}/events")["events"]
        server.kill9()

        server.start()
        after = server.get(f"/analyst/api/threads/{tid}/events")["events"]
        assert after[: len(before)] == before, "every persisted event survived"
        assert [e["seq"] for e in after] == list(range(1, len(after) + 1))
        turns = server.get(f"/analyst/api/threads/{tid}")["turns"]
        assert [t["status"] for t in turns] == ["interrupted"]
        assert any(a["type"] == "dataset" for a in server.get(f"/analyst/api/threads/{tid}/artifacts")["artifacts"])

        body = server.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "continue"},
                              raw=True, timeout=120).decode()
        from jupyter_analyst.server.sse import parse_events

        events = parse_events(body)
        assert events[-1]["type"] == "turn_ended" and events[-1]["status"] == "completed"
        sql_result = next(e for e in events if e["type"] == "tool_result")
        assert sql_result["reused"] is True
        assert [t["status"] for t in server.get(f"/analyst/api/threads/{tid}")["turns"]] == ["interrupted", "completed"]
    finally:
        server.stop()
