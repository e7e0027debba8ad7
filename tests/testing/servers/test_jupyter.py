"""A Jupyter server the tests start in a process of its own: on a port of its own even when the
one it was given is taken by the time it listens (two test processes asked for a free port
together), answering only its own token, and stopped without waiting out its grace when its
stop failed."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time

from jupyter_analyst.testing import ScriptedModelServer, text_step
from jupyter_analyst.testing.servers.jupyter import STOP_FAILED, STOP_GRACE_S, JupyterServerProcess

SCRIPT = {"turns": [{"match": ".", "steps": [text_step("[scripted model] hello")]}]}


def test_a_server_whose_port_was_taken_meanwhile_starts_on_another(tmp_path, sales_db):
    # Taken, and answering nothing: the server's own readiness probe would hang on it.
    with socket.socket() as taken, ScriptedModelServer(SCRIPT) as model:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with JupyterServerProcess(tmp_path / "srv", sources={"sales": str(sales_db)}, model_url=model.base_url,
                                  port=port) as server:
            assert server.port != port
            assert server.request("/analyst/api/sources")["sources"] == [{"name": "sales", "kind": "path"}]
            assert f"port {port} is not available" in (tmp_path / "srv" / "server.log").read_text()


def test_a_server_given_another_servers_port_is_not_taken_for_it(tmp_path, sales_db):
    with ScriptedModelServer(SCRIPT) as model, \
            JupyterServerProcess(tmp_path / "a", sources={"sales": str(sales_db)}, model_url=model.base_url) as one, \
            JupyterServerProcess(tmp_path / "b", sources={}, model_url=model.base_url, port=one.port) as other:
        # The first server refused the second's readiness probe (another token); the second
        # started on a port of its own.
        assert other.port != one.port and other.proc.poll() is None
        assert other.request("/analyst/api/sources")["sources"] == []
        assert one.request("/analyst/api/sources")["sources"] == [{"name": "sales", "kind": "path"}]


#: A process that takes SIGTERM as a Jupyter server whose stop failed: it says so in its log
#: and runs on.
STUCK = f"""
import signal, sys, time
def failed(*_):
    with open(sys.argv[1], "ab") as log:
        log.write(b"[E ServerApp] Exception in callback <Task finished coro=<{STOP_FAILED.decode()} done>\\n")
signal.signal(signal.SIGTERM, failed)
print("ready", flush=True)
while True:
    time.sleep(1)
"""


def test_a_server_whose_stop_failed_is_killed_without_waiting_out_the_grace(tmp_path):
    server = JupyterServerProcess(tmp_path, sources={}, model_url="http://127.0.0.1:9/v1")
    server.proc = subprocess.Popen([sys.executable, "-c", STUCK, str(tmp_path / "server.log")],
                                   stdout=subprocess.PIPE)
    assert server.proc.stdout.readline() == b"ready\n"  # its SIGTERM handler is in place
    started = time.monotonic()
    server.stop()
    assert server.proc.returncode == -signal.SIGKILL
    assert time.monotonic() - started < STOP_GRACE_S / 2
