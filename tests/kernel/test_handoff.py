"""Kernels on Jupyter Enterprise Gateway: a whole turn through a real gateway on 127.0.0.1.

Such a kernel shares no disk with the server: datasets reach it as comm messages, checked
against their fingerprint in the kernel; files it makes come back as display data of a
hidden cell (kernel/handoff.py). The hand-off itself is tested first on a local kernel
told it is remote (no gateway needed); then the gateway turns, which skip loudly when the
gateway's own venv (`make gateway-venv`) is not built.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import pytest_asyncio

from jupyter_analyst.kernel import KernelSession, LocalKernelLauncher
from jupyter_analyst.kernel import handoff
from jupyter_analyst.testing import ScriptedModelServer, python_step, sql_step, text_step
from jupyter_analyst.testing.servers.gateway import EnterpriseGateway, gateway_command
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess, free_port


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def parquet_bytes(frame: pd.DataFrame, path: Path) -> bytes:
    frame.to_parquet(path)
    return path.read_bytes()


# ---------------------------------------------------------------------------- the kernel side


def test_kernel_side_refuses_bytes_that_do_not_match_their_fingerprint(tmp_path):
    good = parquet_bytes(pd.DataFrame({"a": [1, 2, 3]}), tmp_path / "good.parquet")
    tampered = good[:-12] + bytes(12)  # same size, other bytes
    fingerprint = sha256(good)
    handoff._parts[fingerprint] = [tampered[:10], tampered[10:]]
    with pytest.raises(ValueError, match="refused: .* hash to sha256:"):
        handoff.take(fingerprint)
    assert fingerprint not in handoff._parts, "refused bytes are not kept"
    with pytest.raises(ValueError, match="no bytes were received"):
        handoff.take(fingerprint)
    handoff._parts[fingerprint] = [good[:7], good[7:]]
    assert handoff.take(fingerprint)["a"].tolist() == [1, 2, 3]
    handoff._parts.clear()


def test_returned_files_with_hostile_names_or_sizes_are_refused(tmp_path):
    def item(path, data=b"x", **more):
        return {"path": path, "data": base64.b64encode(data).decode(), **more}

    kept = handoff.keep_returned(tmp_path, [
        item("outputs/ok.csv", b"a,b\n1,2\n"),
        item("outputs/../escaped.txt"), item("/etc/passwd"), item("elsewhere.txt"), item("outputs/.hidden"),
        item("outputs/a\nb.txt"), {"path": "outputs/bad64.txt", "data": "%%%"},
        item("outputs/link", problem="not a plain file (links are never followed)"),
        item("outputs/big.bin", b"y" * 100), "not a dict",
    ], limit=50)
    assert [str(p) for p in kept.files] == ["outputs/ok.csv"]
    assert (tmp_path / "outputs" / "ok.csv").read_bytes() == b"a,b\n1,2\n"
    reasons = dict(kept.refused)
    assert reasons["outputs/big.bin"] == "over the 50 bytes a step may return"
    assert reasons["outputs/link"].startswith("not a plain file")
    assert reasons["outputs/bad64.txt"] == "its bytes were not valid base64"
    assert reasons["outputs/a\\nb.txt"] == "not a plain name under outputs/"
    assert len(kept.refused) == 8
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["ok.csv", "outputs"], "nothing else was written"


def test_returned_files_are_never_written_through_a_link_in_the_threads_folder(tmp_path):
    host, elsewhere = tmp_path / "host", tmp_path / "elsewhere"
    (host / "outputs" / "sub").mkdir(parents=True)
    elsewhere.mkdir()
    # What a local kernel may have left in the thread's folder before the server used a gateway.
    (host / "outputs" / "up").symlink_to(elsewhere)
    (host / "outputs" / "sub" / "victim.txt").symlink_to(elsewhere / "victim.txt")
    (host / "outputs" / "dir.txt").mkdir()

    def item(path):
        return {"path": path, "data": base64.b64encode(b"data").decode()}

    kept = handoff.keep_returned(host, [item("outputs/up/x.txt"), item("outputs/sub/victim.txt"),
                                        item("outputs/dir.txt")], limit=100)
    assert [str(p) for p in kept.files] == ["outputs/sub/victim.txt"]
    assert (host / "outputs" / "sub" / "victim.txt").read_bytes() == b"data"
    assert not (host / "outputs" / "sub" / "victim.txt").is_symlink(), "the link was replaced, not followed"
    assert [p for p, _ in kept.refused] == ["outputs/up/x.txt", "outputs/dir.txt"]
    assert all(why.startswith("cannot be written in the thread's folder") for _, why in kept.refused)
    assert list(elsewhere.iterdir()) == [], "nothing was written through a link"
    assert sorted(p.name for p in (host / "outputs").iterdir()) == ["dir.txt", "sub", "up"], "no temporary left"


class _RemoteLocal(LocalKernelLauncher):
    """A local kernel treated as one that shares no disk with us (as a gateway's)."""

    remote_kernel = "python3"


@pytest_asyncio.fixture
async def remote_kernel(tmp_path):
    async with KernelSession(tmp_path / "host", launcher=_RemoteLocal(), datasets_root=tmp_path / "ds") as session:
        yield session


@pytest.mark.asyncio
async def test_a_remote_kernel_gets_datasets_over_the_protocol_and_refuses_tampered_ones(
        remote_kernel, tmp_path, monkeypatch):
    assert remote_kernel.remote and remote_kernel.datasets_dir is None
    cwd = (await remote_kernel.execute("import os; print(os.getcwd())")).stdout.strip()
    assert Path(cwd) != remote_kernel.workdir and Path(cwd).name.startswith("analyst-"), "a folder of its own"
    frame = pd.DataFrame({"n": range(5000), "label": [f"row {i}" for i in range(5000)]})
    good = tmp_path / "good.parquet"
    data = parquet_bytes(frame, good)
    monkeypatch.setattr(handoff, "CHUNK_BYTES", 4096)  # many comm messages, reassembled in order
    loaded = await remote_kernel.load_dataset("sales", good, fingerprint=sha256(data))
    assert loaded.status == "ok", loaded.error
    assert (await remote_kernel.execute("print(sales['n'].sum(), len(sales))")).stdout.split() == [
        str(sum(range(5000))), "5000"]

    # Bytes changed on the way (here: another file sent under the first one's fingerprint).
    other = tmp_path / "other.parquet"
    parquet_bytes(frame.head(10), other)
    refused = await remote_kernel.load_dataset("tampered", other, fingerprint=sha256(data))
    assert refused.status == "error" and refused.error.ename == "ValueError"
    assert refused.error.evalue.startswith("refused:")
    assert (await remote_kernel.execute("tampered")).error.ename == "NameError", "nothing was loaded"
    assert (await remote_kernel.execute("print(len(sales))")).stdout == "5000\n", "what was loaded stays"

    # The model's code removing the receiving module does not stop the hand-off.
    gone = await remote_kernel.execute("import sys; del sys.modules['_jupyter_analyst_handoff']")
    assert gone.status == "ok" and not gone.refused_files, gone.refused_files
    again = await remote_kernel.load_dataset("again", good, fingerprint=sha256(data))
    assert again.status == "ok", again.error
    assert (await remote_kernel.execute("print(len(again))")).stdout == "5000\n"


@pytest.mark.asyncio
async def test_a_remote_kernels_files_come_back_over_the_protocol(remote_kernel):
    made = await remote_kernel.execute(
        "import os\nopen('outputs/t.csv', 'w').write('x\\n1\\n')\n"
        "os.makedirs('outputs/sub')\nopen('outputs/sub/u.txt', 'wb').write(b'\\xff' * 10)\n"
        "os.symlink('/etc/passwd', 'outputs/link')"
    )
    assert made.status == "ok", made.error
    assert [str(p) for p in made.new_files] == ["outputs/sub/u.txt", "outputs/t.csv"]
    assert (remote_kernel.workdir / "outputs" / "t.csv").read_bytes() == b"x\n1\n"
    assert (remote_kernel.workdir / "outputs" / "sub" / "u.txt").read_bytes() == b"\xff" * 10
    assert made.refused_files == [("outputs/link", "not a plain file (links are never followed)")]
    assert not made.outputs, "the hidden cell's displays are not the step's outputs"
    again = await remote_kernel.execute("open('outputs/t.csv', 'a').write('2\\n')")
    assert [str(p) for p in again.new_files] == ["outputs/t.csv"], "a changed file comes back again"
    assert (remote_kernel.workdir / "outputs" / "t.csv").read_bytes() == b"x\n1\n2\n"
    assert (await remote_kernel.execute("y = 1")).new_files == []
    # The model's code changing directory does not hide the kernel's outputs/ from the host.
    assert (await remote_kernel.execute("home = os.getcwd(); os.chdir('/')")).status == "ok"
    moved = await remote_kernel.execute("open(home + '/outputs/after.txt', 'w').write('z')")
    assert [str(p) for p in moved.new_files] == ["outputs/after.txt"]
    # A step that runs past its time keeps its files: the next step does not report them as its own.
    slow = await remote_kernel.execute("open(home + '/outputs/slow.txt', 'w').write('s')\nwhile True: pass",
                                       timeout=2)
    assert slow.status == "timeout" and [str(p) for p in slow.new_files] == ["outputs/slow.txt"]
    assert (await remote_kernel.execute("z = 1")).new_files == []


# ---------------------------------------------------------------------------- through a gateway

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
