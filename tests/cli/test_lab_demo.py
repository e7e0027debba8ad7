"""``jupyter-analyst demo --lab``: JupyterLab on the sample data with the scripted model.

A real ``jupyter lab`` started by the command, asked through the API the panel uses: the
sample source is served, and the lab script's slow step (the one the browser tests stop)
runs until it is cancelled, then the turn ends interrupted with what it printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_analyst.testing.servers.jupyter import free_port

#: The tests ask a real ``jupyter lab`` the command starts.
pytestmark = pytest.mark.process

TOKEN = "lab-demo-token"


class Lab:
    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"

    def open(self, path: str, *, method: str = "GET", body: Any = None, stream: bool = False, timeout: float = 30):
        req = urllib.request.Request(
            f"{self.url}/analyst/api/{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json",
                     **({"Accept": "text/event-stream"} if stream else {})},
        )
        return urllib.request.urlopen(req, timeout=timeout)

    def json(self, path: str, **kwargs: Any) -> Any:
        with self.open(path, **kwargs) as resp:
            return json.loads(resp.read())


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    out = tmp_path_factory.mktemp("lab")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter_analyst.cli", "demo", "--lab", "--out", str(out), "--port", str(port),
         "--no-browser", "--", f"--IdentityProvider.token={TOKEN}", "--ServerApp.ip=127.0.0.1", "--AnalystApp.pool_size=0", "--AnalystApp.summarizer=False"],
        env={**os.environ, "JUPYTER_CONFIG_DIR": str(out / "cfg"), "JUPYTER_RUNTIME_DIR": str(out / "rt")},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    lab = Lab(port)
    deadline = time.monotonic() + 90
    while True:
        try:
            lab.json("sources", timeout=5)
            break
        except (urllib.error.URLError, ConnectionError):
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"jupyter-analyst demo --lab did not serve: {proc.stderr.read()[-3000:]}")
            time.sleep(0.2)
    try:
        yield lab
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        banner = proc.stderr.read()
        assert "SCRIPTED model" in banner


def test_serves_the_sample_source(lab: Lab) -> None:
    assert lab.json("sources") == {"sources": [{"name": "sales", "kind": "path"}]}


def test_the_slow_step_runs_until_it_is_stopped(lab: Lab) -> None:
    thread = lab.json("threads", method="POST", body={"source": "sales"})
    seen: list[dict[str, Any]] = []
    with lab.open(f"threads/{thread['thread_id']}/turns", method="POST", body={"prompt": "count slowly"},
                  stream=True, timeout=120) as stream:
        cancelled = False
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if not line.startswith("data: "):
                continue
            event = json.loads(line[6:])
            seen.append(event)
            if event["type"] == "tool_call" and not cancelled:
                assert event["tool"] == "run_python" and "time.sleep(1)" in event["arguments"]["code"]
                # The step has started and has 90 seconds to go: stop it.
                assert lab.json(f"threads/{thread['thread_id']}/cancel", method="POST", body={}) == {"cancelled": True}
                cancelled = True
            if event["type"] == "turn_ended":
                break
    assert seen[-1]["type"] == "turn_ended" and seen[-1]["status"] == "interrupted", seen[-1]
    # Stopped in the middle of the step: it has no result, and the turn no answer.
    assert not [e for e in seen if e["type"] in ("tool_result", "answer")], seen
