"""The server's CPU while a step on a gateway's kernel runs silently, against a local kernel's.

A Jupyter server's gateway client waits for kernel messages by spinning its event loop; the
session looks at a remote kernel's messages in short pauses instead (kernel/session.py).
The figure is the server process's CPU seconds over a turn whose Python step sleeps, with
the kernel on Jupyter Enterprise Gateway (``make gateway-venv``) and with a local one.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from jupyter_analyst.cli.demo import build_sample_database
from jupyter_analyst.testing import ScriptedModelServer, python_step, text_step
from jupyter_analyst.testing.servers.gateway import EnterpriseGateway, gateway_command
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess

from .common import Report

SLEEP_S = 5
SCRIPT = {"turns": [{"steps": [python_step("x = 1"), python_step(f"import time; time.sleep({SLEEP_S})"),
                               text_step("[scripted model] done")]}]}


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks (USER_HZ 100)


def _turn_cpu(root: Path, db: Path, model: ScriptedModelServer, extra: list[str]) -> float:
    server = JupyterServerProcess(root, sources={"sales": str(db)}, model_url=model.base_url,
                                  ready_path="/analyst/api/sources",
                                  extra=["--AnalystApp.pool_size=0", "--AnalystApp.summarizer=False",
                                         "--AnalystApp.sandbox=False", *extra])
    with server:
        assert server.proc is not None
        tid = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
        before = _cpu_s(server.proc.pid)
        server.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "sleep"},
                       raw=True, timeout=300)
        return _cpu_s(server.proc.pid) - before


def bench_gateway(report: Report, *, rows: int, repeat: int) -> None:
    command = gateway_command()
    if command is None:
        report.note("Jupyter Enterprise Gateway's venv is not built (make gateway-venv): not measured")
        return
    with tempfile.TemporaryDirectory(prefix="bench-gateway-") as tmp:
        folder = Path(tmp)
        db = build_sample_database(folder / "sales.duckdb")
        with ScriptedModelServer(SCRIPT) as model:
            local = _turn_cpu(folder / "local", db, model, [])
            with EnterpriseGateway(command) as gateway:
                remote = _turn_cpu(folder / "gateway", db, model, [f"--GatewayClient.url={gateway.url}"])
        report.add(f"server CPU over a turn whose step sleeps {SLEEP_S} s, kernel on a gateway", remote, local,
                   "the same turn with a local kernel (no sandbox)")
        report.note("CPU seconds of the Jupyter server process (utime + stime); the gateway runs its kernels as "
                    "local processes (its default process proxy)")
