"""Kernels on Jupyter Enterprise Gateway: a whole turn through a real gateway on 127.0.0.1.

Such a kernel shares no disk with the server: datasets reach it as comm messages, checked
against their fingerprint in the kernel; files it makes come back as display data of a
hidden cell (kernel/handoff.py, whose own tests are tests/kernel/test_handoff.py). The
gateway turns skip loudly when the gateway's own venv (`make gateway-venv`) is not built.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest

from jupyter_analyst.testing import ScriptedModelServer, python_step, sql_step, text_step
from jupyter_analyst.testing.servers.gateway import EnterpriseGateway, gateway_command
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess, free_port


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


GATEWAY = gateway_command()
needs_gateway = pytest.mark.skipif(
    GATEWAY is None,
    reason="Jupyter Enterprise Gateway's venv is not built: run `make gateway-venv` (it installs "
           "jupyter_enterprise_gateway from PyPI into .venv-gateway; ANALYST_GATEWAY_VENV names another)",
)

SQL = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r USING (region_id) "
       "GROUP BY r.region ORDER BY r.region")
CODE = """\
import os
total = float(by_region['revenue'].sum())
top = by_region.sort_values('revenue').iloc[-1]['region']
print(f'TOTAL {total:.2f} TOP {top}')
print('CWD', os.getcwd())
open('outputs/total.txt', 'w').write(f'{total:.2f}\\n')
by_region.plot.bar(x='region', y='revenue')
plt.show()
"""
COUNT_SQL = "SELECT COUNT(*) AS n FROM orders"
SCRIPT = {"turns": [
    # The thread's kernel is running: the dataset is sent to it in the background, after its query.
    {"match": "^and how many orders", "steps": [
        sql_step(COUNT_SQL, "counted"), python_step("print('ORDERS', int(counted['n'][0]), len(by_region))"),
        text_step("[scripted model] counted")]},
    {"steps": [sql_step(SQL, "by_region"), python_step(CODE), text_step("[scripted model] done")]},
]}


def _events(server: JupyterServerProcess, tid: str) -> list[dict]:
    return server.request(f"/analyst/api/threads/{tid}/events")["events"]


def _turn(server: JupyterServerProcess, tid: str, prompt: str = "revenue by region") -> None:
    server.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": prompt},
                   raw=True, timeout=240)


def _server(root: Path, sales_db: Path, model: ScriptedModelServer, gateway_url: str) -> JupyterServerProcess:
    return JupyterServerProcess(
        root, sources={"sales": str(sales_db)}, model_url=model.base_url,
        extra=[f"--GatewayClient.url={gateway_url}", "--AnalystApp.pool_size=0", "--AnalystApp.summarizer=False"],
        ready_path="/analyst/api/sources",
    )


@needs_gateway
def test_a_whole_turn_on_gateway_kernels(tmp_path, sales_db):
    with duckdb.connect(str(sales_db), read_only=True) as con:
        expected = con.execute(SQL).df()
    total = float(expected["revenue"].sum())
    top = expected.sort_values("revenue").iloc[-1]["region"]
    with EnterpriseGateway(GATEWAY) as gateway, ScriptedModelServer(SCRIPT) as model, \
            _server(tmp_path / "server", sales_db, model, gateway.url) as server:
        tid = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
        _turn(server, tid)
        events = _events(server, tid)
        ended = [e for e in events if e["type"] == "turn_ended"]
        assert [e["status"] for e in ended] == ["completed"], (ended, gateway.log_tail())
        results = {e["tool"]: e for e in events if e["type"] == "tool_result"}
        assert results["run_sql"]["status"] == "ok"
        python = results["run_python"]
        assert python["status"] == "ok", python["result"]
        # The dataset reached the kernel (no shared disk) and the figure computed from it is right.
        figure, cwd = python["result"]["stdout"].splitlines()
        assert figure == f"TOTAL {total:.2f} TOP {top}"
        kernel_folder = Path(cwd.removeprefix("CWD "))
        assert kernel_folder.name.startswith("analyst-") and kernel_folder.is_dir()
        # The kernel ran on the gateway, which keeps it for the thread's next turn.
        assert len(gateway.kernels()) == 1
        artifacts = server.request(f"/analyst/api/threads/{tid}/artifacts")["artifacts"]
        by_type = {}
        for a in artifacts:
            by_type.setdefault(a["type"], []).append(a)
        (text,) = [a for a in by_type["text"] if a["name"].endswith("total.txt")]
        assert text["fingerprint"] == sha256(f"{total:.2f}\n".encode())
        assert text["artifact_id"] in python["artifact_ids"]
        (chart,) = by_type["image"]
        content = server.request(f"/analyst/api/artifacts/{chart['artifact_id']}/content", raw=True)
        assert content.startswith(b"\x89PNG") and sha256(content) == chart["fingerprint"]
        (dataset,) = by_type["dataset"]
        assert dataset["artifact_id"] in results["run_sql"]["artifact_ids"]

        # The next turn finds the kernel on the gateway running, with what the first put there.
        _turn(server, tid, "and how many orders?")
        events = _events(server, tid)
        assert [e["status"] for e in events if e["type"] == "turn_ended"] == ["completed", "completed"]
        last = [e for e in events if e["type"] == "tool_result" and e["tool"] == "run_python"][-1]
        with duckdb.connect(str(sales_db), read_only=True) as con:
            orders = con.execute(COUNT_SQL).fetchone()[0]
        assert last["result"]["stdout"] == f"ORDERS {orders} {len(expected)}\n", last["result"]
        assert len(gateway.kernels()) == 1
    assert not kernel_folder.exists(), "the kernel's folder on the gateway's machine goes with the kernel"


@needs_gateway
def test_a_gateway_that_is_down_fails_the_turn_clearly_and_loses_nothing(tmp_path, sales_db):
    nobody = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with ScriptedModelServer(SCRIPT) as model, _server(tmp_path / "server", sales_db, model, nobody) as server:
        tid = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
        _turn(server, tid)
        events = _events(server, tid)
        (ended,) = [e for e in events if e["type"] == "turn_ended"]
        assert ended["status"] == "error"
        assert "kernel" in ended["message"] and "could not start" in ended["message"], ended["message"]
        assert ended["counters"].get("kernel_start_failed") == 1, ended["counters"]
        results = {e["tool"]: e for e in events if e["type"] == "tool_result"}
        assert results["run_python"]["status"] == "error"
        assert results["run_python"]["result"]["error"]["reason"] == "kernel_start_failed"
        # What ran before is kept: the query's dataset is in the inventory, the turn is recorded.
        assert results["run_sql"]["status"] == "ok"
        datasets = server.request(f"/analyst/api/threads/{tid}/artifacts?type=dataset")["artifacts"]
        assert [d["artifact_id"] for d in datasets] == results["run_sql"]["artifact_ids"]
        assert [t["status"] for t in server.request(f"/analyst/api/threads/{tid}")["turns"]] == ["error"]


DEATH_SCRIPT = {"turns": [{"steps": [
    python_step("x = 41"), python_step("import os; os._exit(1)"), python_step("print(x + 1)"),
    text_step("[scripted model] recovered"),
]}]}


@needs_gateway
def test_a_gateway_kernel_that_dies_is_replaced_and_restored(tmp_path, sales_db):
    # The gateway restarts a dead kernel itself, so its process still answers: the restart
    # it announces is what tells the death (else the step would run to its timeout).
    with EnterpriseGateway(GATEWAY) as gateway, ScriptedModelServer(DEATH_SCRIPT) as model, \
            _server(tmp_path / "server", sales_db, model, gateway.url) as server:
        tid = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
        _turn(server, tid, "die")
        events = _events(server, tid)
        first, died, after = [e for e in events if e["type"] == "tool_result"]
        assert first["status"] == "ok"
        assert died["status"] == "error" and died["result"]["error"]["reason"] == "kernel_died", died["result"]
        assert after["status"] == "ok" and after["result"]["stdout"] == "42\n", after["result"]
        assert [e["status"] for e in events if e["type"] == "turn_ended"] == ["completed"]
        assert len(gateway.kernels()) == 1, "the dead kernel was stopped on the gateway, its successor runs"
