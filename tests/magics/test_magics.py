"""The IPython extension in real kernels: ``%load_ext jupyter_analyst``, then ``%analyst_sql``,
``%%ask`` (against the scripted model) and ``%analyst``, run over the kernel's messaging
protocol as a notebook runs them; the workspace is then read back from this side."""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

#: A bound on each cell (a limit, not a wait: each call returns when the kernel replies).
CELL_LIMIT_S = 180

REVENUE = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r "
           "ON o.region_id = r.region_id GROUP BY r.region ORDER BY r.region")


class Cell:
    """One executed cell: its reply and its outputs."""

    def __init__(self, reply: dict[str, Any], outputs: list[dict[str, Any]]) -> None:
        self.reply = reply["content"]
        self.outputs = outputs

    @property
    def ok(self) -> bool:
        return self.reply["status"] == "ok"

    @property
    def error(self) -> str:
        return f"{self.reply.get('ename')}: {self.reply.get('evalue')}"

    def text(self) -> str:
        parts = []
        for o in self.outputs:
            if o["msg_type"] == "stream":
                parts.append(o["content"]["text"])
            elif o["msg_type"] in ("display_data", "execute_result", "update_display_data"):
                parts.append(o["content"]["data"].get("text/plain", ""))
        return "\n".join(parts)

    def mimes(self) -> set[str]:
        return {m for o in self.outputs if "data" in o["content"] for m in o["content"]["data"]}

    def value(self, name: str) -> Any:
        """A user expression's value (evaluated as JSON text in the kernel)."""
        found = self.reply["user_expressions"][name]
        assert found["status"] == "ok", found
        return json.loads(ast.literal_eval(found["data"]["text/plain"]))


def connected(client: Any) -> None:
    """Wait until a kernel started elsewhere answers on its shell *and* its IOPub reaches
    this client: a subscription made while the kernel starts may miss its first messages, and
    a cell whose idle status is missed waits out its limit. Not its heartbeat: a slow start
    reads as a dead kernel there."""
    from queue import Empty

    deadline = time.monotonic() + CELL_LIMIT_S
    while True:
        client.kernel_info()
        client.get_shell_msg(timeout=CELL_LIMIT_S)
        try:
            client.get_iopub_msg(timeout=1)
        except Empty:
            assert time.monotonic() < deadline, "the kernel's IOPub never reached this client"
            continue
        break
    while True:  # what is left of the kernel_info's statuses
        try:
            client.get_iopub_msg(timeout=0.2)
        except Empty:
            return


async def connected_async(client: Any) -> None:
    """:func:`connected` for an asynchronous client."""
    from queue import Empty

    deadline = time.monotonic() + CELL_LIMIT_S
    while True:
        client.kernel_info()
        await client.get_shell_msg(timeout=CELL_LIMIT_S)
        try:
            await client.get_iopub_msg(timeout=1)
        except Empty:
            assert time.monotonic() < deadline, "the kernel's IOPub never reached this client"
            continue
        break
    while True:
        try:
            await client.get_iopub_msg(timeout=0.2)
        except Empty:
            return


class Kernel:
    """A client of a running kernel that executes cells one at a time."""

    def __init__(self, client: Any, manager: Any = None) -> None:
        self.client = client
        self.manager = manager

    def run(self, code: str, watch: Callable[[dict[str, Any]], None] | None = None, **expressions: str) -> Cell:
        """Execute ``code``; ``watch`` sees each output as it arrives."""
        outputs: list[dict[str, Any]] = []

        def hook(msg: dict[str, Any]) -> None:
            if msg["msg_type"] in ("stream", "display_data", "execute_result", "update_display_data", "error"):
                outputs.append(msg)
                if watch is not None:
                    watch(msg)

        reply = self.client.execute_interactive(
            code, output_hook=hook, timeout=CELL_LIMIT_S,
            user_expressions={k: f"__import__('json').dumps({v})" for k, v in expressions.items()},
        )
        return Cell(reply, outputs)


@contextmanager
def started_kernel(cwd: Path, **env: str) -> Iterator[Kernel]:
    """A real ipykernel in its own process, started in ``cwd`` with ``env`` added, the
    extension loaded."""
    from jupyter_client import KernelManager

    # Nothing of this process's own workspace, key or notebook leaks into the kernel.
    inherited = {k: v for k, v in os.environ.items()
                 if k not in ("JUPYTER_ANALYST_WORKSPACE", "OPENAI_API_KEY", "JPY_SESSION_NAME")}
    env = {**inherited, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[2]),
                                                                    os.environ.get("PYTHONPATH")])), **env}
    manager = KernelManager(kernel_name="python3")
    manager.kernel_spec.argv[0] = sys.executable
    manager.start_kernel(cwd=str(cwd), env=env)
    client = manager.blocking_client()
    client.start_channels()
    client.wait_for_ready(timeout=CELL_LIMIT_S)
    try:
        k = Kernel(client, manager)
        loaded = k.run("%load_ext jupyter_analyst")
        assert loaded.ok, loaded.error
        yield k
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


@pytest.fixture
def kernel(tmp_path):
    """A kernel started in ``tmp_path`` (its ``.analyst`` is the workspace), for no notebook."""
    with started_kernel(tmp_path) as k:
        yield k


def workspace_of(path: Path):
    from jupyter_analyst.workspace import Workspace

    return Workspace(path)


def artifact_frame(ws_path: Path, artifact_id: str):
    """The artifact's content, read here from its blob (not through the magics)."""
    import pandas as pd

    ws = workspace_of(ws_path)
    try:
        return pd.read_parquet(ws.artifacts.blob_path(ws.artifacts.get(artifact_id)))
    finally:
        ws.close()


# ---------------------------------------------------------------------- %analyst_sql


def test_analyst_sql_binds_the_artifact_as_a_dataframe_and_records_the_step(kernel, tmp_path, sales_db):
    first = kernel.run(f"%analyst_sql --source {sales_db} revenue << {REVENUE}",
                       shape="list(revenue.shape)", frame="revenue.to_json(orient='split')")
    assert first.ok, first.error
    assert first.value("shape") == [5, 2]
    assert "revenue: 5 rows" in first.text() and "executed" in first.text()

    ws = workspace_of(tmp_path / ".analyst")
    try:
        (thread,) = ws.store.list_threads()
        (dataset,) = ws.artifacts.list(thread.thread_id, type="dataset")
        (step,) = ws.artifacts.steps(thread.thread_id)
        events = ws.store.events(thread.thread_id)
        notebook = json.loads(ws.notebook_path(thread.thread_id).read_text())
    finally:
        ws.close()
    # The bound DataFrame is the artifact's content, byte for byte as pandas reads it here.
    assert first.value("frame") == artifact_frame(tmp_path / ".analyst", dataset.artifact_id).to_json(orient="split")
    assert dataset.name == "revenue" and dataset.fingerprint[:19] in first.text()
    # Recorded as a model's step is: the inventory's step, the events, the thread's notebook.
    assert step.tool == "run_sql" and step.arguments["name"] == "revenue"
    kinds = [e.type for e in events]
    assert kinds[0] == "turn_started" and "tool_call" in kinds and "artifact" in kinds and kinds[-1] == "turn_ended"
    assert any("revenue = analyst.sql(" in "".join(c["source"]) for c in notebook["cells"])

    # The same query again, as a cell: reused, not executed, and the same data bound.
    again = kernel.run(f"%%analyst_sql revenue\n{REVENUE}", frame="revenue.to_json(orient='split')")
    assert again.ok, again.error
    assert "reused" in again.text() and again.value("frame") == first.value("frame")
    ws = workspace_of(tmp_path / ".analyst")
    try:
        assert len(ws.store.list_threads()) == 1  # the current thread went on
        assert len(ws.artifacts.steps(thread.thread_id)) == 1
        assert ws.store.turns(thread.thread_id)[-1].status == "completed"
    finally:
        ws.close()


def test_analyst_sql_refuses_a_write_and_suggests_a_real_table(kernel, sales_db):
    write = kernel.run(f"%analyst_sql --source {sales_db} gone << DELETE FROM orders")
    assert not write.ok
    assert write.reply["ename"] == "UsageError" and "DELETE is not allowed" in write.reply["evalue"]
    typo = kernel.run("%analyst_sql recent << SELECT * FROM ordrs LIMIT 5")
    assert not typo.ok
    assert "Did you mean: orders" in typo.reply["evalue"]
    # (A failed cell evaluates no user expression: the namespace is read by the next one.)
    assert kernel.run("pass", bound="'recent' in globals() or 'gone' in globals()").value("bound") is False


def test_a_damaged_blob_is_refused_when_loaded(kernel, tmp_path, sales_db):
    first = kernel.run(f"%analyst_sql --source {sales_db} revenue << {REVENUE}")
    assert first.ok, first.error
    ws = workspace_of(tmp_path / ".analyst")
    try:
        (thread,) = ws.store.list_threads()
        (dataset,) = ws.artifacts.list(thread.thread_id, type="dataset")
        blob = ws.artifacts.blob_path(dataset)
    finally:
        ws.close()
    blob.chmod(0o644)
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0xFF
    blob.write_bytes(bytes(data))
    # The step is reused (its key is recorded) and its dataset re-hashed as it is read.
    again = kernel.run("del revenue\n%analyst_sql revenue << " + REVENUE)
    assert not again.ok
    assert again.reply["ename"] == "UsageError" and dataset.artifact_id in again.reply["evalue"]
    assert kernel.run("pass", bound="'revenue' in globals()").value("bound") is False


# ---------------------------------------------------------------------- %%ask

CHART = "import matplotlib.pyplot as plt\nrevenue.plot.bar(x='region', y='revenue')\nplt.show()\nprint(len(revenue))"
SCRIPT = {"turns": [{"match": ".", "steps": [
    {"tool_calls": [{"name": "run_sql", "arguments": {"sql": REVENUE, "name": "revenue"}}]},
    {"tool_calls": [{"name": "run_python", "arguments": {"code": CHART}}]},
    {"content": "[scripted model] revenue by region is charted"},
]}]}


@pytest.fixture
def scripted():
    from jupyter_analyst.testing import ScriptedModelServer

    with ScriptedModelServer(SCRIPT) as server:
        yield server


def ask_cell(scripted: Any, options: str = "") -> str:
    from jupyter_analyst.testing.model_server import MODEL_NAME

    return f"%%ask --base-url {scripted.base_url} --model {MODEL_NAME} --no-summarizer {options}\nrevenue by region"


def test_ask_binds_the_turns_datasets_and_an_identical_ask_reuses(kernel, tmp_path, sales_db, scripted):
    first = kernel.run(ask_cell(scripted, f"--source {sales_db}"), frame="revenue.to_json(orient='split')")
    assert first.ok, first.error
    # Progress was shown as it went (one display, updated), then the answer, the data, the chart.
    assert any(o["msg_type"] == "update_display_data" for o in first.outputs)
    assert "text/markdown" not in first.mimes()  # the answer is the model's: shown as inert HTML
    answers = [o["content"]["data"]["text/html"] for o in first.outputs
               if "revenue by region is charted" in o["content"].get("data", {}).get("text/html", "")]
    assert answers == ["<p>[scripted model] revenue by region is charted</p>\n"]
    assert "image/png" in first.mimes()
    assert "revenue: 5 rows" in first.text() and "steps: 2 executed, 0 reused" in first.text()

    ws = workspace_of(tmp_path / ".analyst")
    try:
        (thread,) = ws.store.list_threads()
        (dataset,) = ws.artifacts.list(thread.thread_id, type="dataset")
        images = ws.artifacts.list(thread.thread_id, type="image")
    finally:
        ws.close()
    assert first.value("frame") == artifact_frame(tmp_path / ".analyst", dataset.artifact_id).to_json(orient="split")
    assert dataset.fingerprint[:19] in first.text() and images and images[0].fingerprint[:19] in first.text()

    # Asked again on the kernel's current thread: nothing executes, the same data is bound.
    assert kernel.run("del revenue").ok
    second = kernel.run(ask_cell(scripted), frame="revenue.to_json(orient='split')")
    assert second.ok, second.error
    assert "steps: 0 executed, 2 reused" in second.text()
    assert second.value("frame") == first.value("frame")
    ws = workspace_of(tmp_path / ".analyst")
    try:
        assert [t.thread_id for t in ws.store.list_threads()] == [thread.thread_id]
        assert len(ws.store.turns(thread.thread_id)) == 2
    finally:
        ws.close()


def test_ask_and_analyst_sql_share_the_current_thread(kernel, tmp_path, sales_db, scripted):
    # A dataset the user fetched is the thread's: the model's identical query reuses it.
    mine = kernel.run(f"%analyst_sql --source {sales_db} revenue << {REVENUE}")
    assert mine.ok, mine.error
    asked = kernel.run(ask_cell(scripted))
    assert asked.ok, asked.error
    assert "steps: 1 executed, 1 reused" in asked.text()


def review_notebook(*extra: str) -> dict[str, Any]:
    """A user's notebook: a heading and a code cell whose second line is not in any outline."""
    cells = [
        {"id": "intro", "cell_type": "markdown", "metadata": {}, "source": "# Revenue review"},
        {"id": "load", "cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [],
         "source": "sales = revenue.copy()\nnote = 'kept-out-of-the-outline'"},
        *({"id": f"x{i}", "cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": code}
          for i, code in enumerate(extra)),
    ]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def system_prompts(scripted: Any, start: int = 0) -> list[str]:
    """The system prompt of each model call from the ``start``-th on."""
    return [next(m["content"] for m in r["messages"] if m["role"] == "system") for r in scripted.requests[start:]]


def test_ask_attaches_the_notebook_its_kernel_runs_for(tmp_path, sales_db, scripted):
    # As JupyterLab starts a notebook's kernel: in its folder, told its path by the server.
    notebook = tmp_path / "review.ipynb"
    notebook.write_text(json.dumps(review_notebook()))
    other = tmp_path / "other.ipynb"
    other.write_text(json.dumps(review_notebook("by_month = sales.groupby('month').sum()")))
    with started_kernel(tmp_path, JPY_SESSION_NAME=str(notebook)) as kernel:
        asked = kernel.run(ask_cell(scripted, f"--source {sales_db}"))
        assert asked.ok, asked.error
        prompts = system_prompts(scripted)
        assert prompts and all(f"Notebook {notebook}: 2 cells" in p for p in prompts)
        assert "[0] markdown intro: # Revenue review" in prompts[0] and "(defines sales, note)" in prompts[0]
        assert "kept-out-of-the-outline" not in prompts[0]  # an outline, not the cells' contents

        # Saved again with a cell more: the next turn sees the notebook as it is now.
        notebook.write_text(json.dumps(review_notebook("total = sales.revenue.sum()")))
        seen = len(scripted.requests)
        assert kernel.run(ask_cell(scripted)).ok
        assert f"Notebook {notebook}: 3 cells" in system_prompts(scripted, seen)[0]

        # Another notebook by name, or none.
        seen = len(scripted.requests)
        assert kernel.run(ask_cell(scripted, f"--rerun --notebook {other}")).ok
        assert f"Notebook {other}: 3 cells" in system_prompts(scripted, seen)[0]
        seen = len(scripted.requests)
        assert kernel.run(ask_cell(scripted, "--no-attach")).ok
        assert all("Notebook " not in p for p in system_prompts(scripted, seen))
        both = kernel.run(ask_cell(scripted, f"--no-attach --notebook {other}"))
        assert not both.ok and "not allowed with argument" in both.reply["evalue"]


def test_ask_names_a_notebook_it_cannot_read_and_the_turn_runs(tmp_path, sales_db, scripted):
    (tmp_path / "broken.ipynb").write_text("{ not json")
    with started_kernel(tmp_path, JPY_SESSION_NAME="work/broken.ipynb") as kernel:
        # A relative name is the server's (relative to its root): the kernel's folder has the file.
        asked = kernel.run(ask_cell(scripted, f"--source {sales_db}"))
        assert asked.ok, asked.error
        assert "steps: 2 executed" in asked.text()
        (first, *_) = system_prompts(scripted)
        assert "The user's notebook work/broken.ipynb is attached, but it could not be read (JSONDecodeError)" in first


# ---------------------------------------------------------------------- %analyst


def test_analyst_reports_threads_artifacts_state_and_verifies_the_thread(kernel, tmp_path, sales_db):
    assert not kernel.run("%analyst artifacts").ok  # no current thread yet: said so
    made = kernel.run(f"%analyst_sql --source {sales_db} revenue << {REVENUE}")
    assert made.ok, made.error
    ws = workspace_of(tmp_path / ".analyst")
    try:
        (thread,) = ws.store.list_threads()
        (dataset,) = ws.artifacts.list(thread.thread_id, type="dataset")
    finally:
        ws.close()

    threads = kernel.run("%analyst threads")
    assert threads.ok, threads.error
    assert thread.thread_id in threads.text() and "sales.duckdb" in threads.text()
    artifacts = kernel.run("%analyst artifacts")
    assert artifacts.ok, artifacts.error
    assert dataset.artifact_id in artifacts.text() and dataset.fingerprint[:19] in artifacts.text()
    state = kernel.run("%analyst state")
    assert state.ok, state.error
    assert f"agent state of {thread.thread_id}" in state.text() and "revenue" in state.text()

    verified = kernel.run("%analyst verify")
    assert verified.ok, verified.error
    assert "1 matched, 0 changed, 0 missing" in verified.text()
    assert "verified: the notebook reproduces every artifact" in verified.text()


# ---------------------------------------------------------------------- under a Jupyter server


async def test_magics_work_in_a_kernel_the_jupyter_server_started(jp_fetch, jp_serverapp, jp_root_dir, sales_db):
    # The kernel a notebook in JupyterLab gets: started through the server's REST API.
    # It runs in its notebook's folder, as JupyterLab starts it.
    (Path(jp_root_dir) / "work").mkdir()
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3", "path": "work"}))
    kernel_id = json.loads(response.body)["id"]
    from jupyter_client import AsyncKernelClient

    # A client of the server's own kernel, on the server's event loop (as the server's
    # websocket bridge is), over the kernel's messaging protocol.
    client = AsyncKernelClient()
    client.load_connection_info(jp_serverapp.kernel_manager.get_kernel(kernel_id).get_connection_info())
    client.start_channels()

    async def run(code: str, **expressions: str) -> Cell:
        outputs: list[dict[str, Any]] = []
        reply = await client.execute_interactive(
            code, output_hook=outputs.append, timeout=CELL_LIMIT_S,
            user_expressions={k: f"__import__('json').dumps({v})" for k, v in expressions.items()},
        )
        return Cell(reply, outputs)

    try:
        # Ready when it answers kernel_info on its shell (the request waits in ZMQ while it
        # starts) and its IOPub reaches this client (see connected()), not when its heartbeat
        # beats: a slow start reads as a dead kernel there.
        await connected_async(client)
        loaded = await run("%load_ext jupyter_analyst", cwd="__import__('os').getcwd()")
        cell = await run(f"%analyst_sql --source {sales_db} revenue << {REVENUE}", shape="list(revenue.shape)")
        refused = await run("%analyst_sql gone << DROP TABLE orders")
    finally:
        client.stop_channels()
        await jp_fetch("api", "kernels", kernel_id, method="DELETE")
    assert loaded.ok, loaded.error
    assert cell.ok, cell.error
    assert cell.value("shape") == [5, 2]
    assert not refused.ok and "DROP" in refused.reply["evalue"]
    assert Path(loaded.value("cwd")) == Path(jp_root_dir) / "work"
    # The workspace is the kernel's folder's .analyst, as for the CLI run there.
    ws = workspace_of(Path(loaded.value("cwd")) / ".analyst")
    try:
        (thread,) = ws.store.list_threads()
        assert [a.name for a in ws.artifacts.list(thread.thread_id)] == ["revenue"]
    finally:
        ws.close()


# ---------------------------------------------------------------------- %%ask on a Jupyter server's API

WAIT = "import time\ntime.sleep(300)"
SERVER_SCRIPT = {"turns": [
    {"match": "^hold", "steps": [{"tool_calls": [{"name": "run_python", "arguments": {"code": WAIT}}]},
                                 {"content": "[scripted model] never reached"}]},
    *SCRIPT["turns"],
]}


@pytest.fixture
def served(tmp_path, sales_db):
    """A real Jupyter server with the extension (its own process, a token), and the scripted
    model it calls; one configured source ``sales``."""
    from jupyter_analyst.testing import ScriptedModelServer
    from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess

    (tmp_path / "server").mkdir()
    with ScriptedModelServer(SERVER_SCRIPT) as model, \
            JupyterServerProcess(tmp_path / "server", sources={"sales": str(sales_db)}, model_url=model.base_url) as server:
        yield server, model


@pytest.fixture
def jupyter(served):
    return served[0]


def parquet_of(server: Any, artifact_id: str):
    """An artifact's content as the server serves it, read here."""
    import io

    import pandas as pd

    return pd.read_parquet(io.BytesIO(server.request(f"/analyst/api/artifacts/{artifact_id}/content", raw=True)))


def test_ask_on_a_jupyter_server_runs_there_binds_its_artifacts_and_reuses(kernel, tmp_path, jupyter):
    first = kernel.run(f"%%ask --server {jupyter.url} --token {jupyter.token} --source sales\nrevenue by region",
                       frame="revenue.to_json(orient='split')")
    assert first.ok, first.error
    # The same cell output as the local engine's: live progress, the answer, the data, the chart.
    assert any(o["msg_type"] == "update_display_data" for o in first.outputs)
    assert "text/markdown" not in first.mimes()  # the answer is the model's: shown as inert HTML
    answers = [o["content"]["data"]["text/html"] for o in first.outputs
               if "revenue by region is charted" in o["content"].get("data", {}).get("text/html", "")]
    assert answers == ["<p>[scripted model] revenue by region is charted</p>\n"]
    assert "image/png" in first.mimes()
    assert "revenue: 5 rows" in first.text() and "steps: 2 executed, 0 reused" in first.text()

    # The turn ran on the server: its thread is listed there, the kernel's folder has no workspace.
    (thread,) = jupyter.request("/analyst/api/threads")["threads"]
    assert thread["source"] == "sales" and thread["thread_id"] in first.text()
    assert not (tmp_path / ".analyst").exists()
    tid = thread["thread_id"]
    (dataset,) = jupyter.request(f"/analyst/api/threads/{tid}/artifacts?type=dataset")["artifacts"]
    images = jupyter.request(f"/analyst/api/threads/{tid}/artifacts?type=image")["artifacts"]
    assert first.value("frame") == parquet_of(jupyter, dataset["artifact_id"]).to_json(orient="split")
    assert dataset["fingerprint"][:19] in first.text() and images and images[0]["fingerprint"][:19] in first.text()
    # Downloaded bytes are bound only when they hash to the artifact's fingerprint.
    from jupyter_analyst.errors import StorageError
    from jupyter_analyst.magics.remote import AnalystServer

    client = AnalystServer(jupyter.url, jupyter.token)
    artifact = client.artifact(dataset["artifact_id"])
    assert client.dataset(artifact).to_json(orient="split") == first.value("frame")
    with pytest.raises(StorageError, match=f"{artifact.artifact_id} .* hash to sha256:[0-9a-f]{{64}}, not its"):
        client.dataset(artifact.model_copy(update={"fingerprint": images[0]["fingerprint"]}))

    # Named by the environment instead (as a kernelspec's env sets it): the current thread goes on,
    # every step is reused, the same data is bound.
    assert kernel.run(f"%env JUPYTER_ANALYST_SERVER_URL={jupyter.url}/\n"
                      f"%env JUPYTER_ANALYST_TOKEN={jupyter.token}\ndel revenue").ok
    second = kernel.run("%%ask\nrevenue by region", frame="revenue.to_json(orient='split')")
    assert second.ok, second.error
    assert "steps: 0 executed, 2 reused" in second.text()
    assert second.value("frame") == first.value("frame")
    assert [t["thread_id"] for t in jupyter.request("/analyst/api/threads")["threads"]] == [tid]
    assert [t["status"] for t in jupyter.request(f"/analyst/api/threads/{tid}")["turns"]] == ["completed"] * 2


def test_ask_on_a_jupyter_server_says_why_it_cannot(kernel, tmp_path, jupyter, sales_db):
    import urllib.request

    from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess, free_port

    def refused(options: str, prompt: str = "revenue by region") -> str:
        cell = kernel.run(f"%%ask {options}\n{prompt}")
        assert not cell.ok and cell.reply["ename"] == "UsageError", cell.error
        return cell.reply["evalue"]

    server = f"--server {jupyter.url}"
    assert "refused the request (401): the token is not accepted" in refused(f"{server} --token wrong --source sales")
    assert "JUPYTER_ANALYST_TOKEN" in refused(f"{server} --token wrong --source sales")
    assert "no token was given" in refused(f"{server} --source sales")
    gone = refused(f"--server http://127.0.0.1:{free_port()} --token t")
    assert "cannot reach the Jupyter server at http://127.0.0.1:" in gone
    unknown = refused(f"{server} --token {jupyter.token} --source nope")
    assert "unknown source 'nope'" in unknown and "configured sources: sales" in unknown
    assert "--model: not with a server" in refused(f"{server} --token {jupyter.token} --model m")
    assert jupyter.request("/analyst/api/threads")["threads"] == []  # nothing was made

    # A turn holds the thread (its stream read up to its running step): another is refused 409.
    tid = jupyter.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
    hold = urllib.request.Request(
        f"{jupyter.url}/analyst/api/threads/{tid}/turns", method="POST", data=json.dumps({"prompt": "hold"}).encode(),
        headers={"Authorization": f"token {jupyter.token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(hold, timeout=CELL_LIMIT_S) as stream:
        for line in stream:
            if line.startswith(b"data: ") and json.loads(line[6:]).get("type") == "tool_call":
                break
        busy = refused(f"{server} --token {jupyter.token} --thread {tid}")
        jupyter.request(f"/analyst/api/threads/{tid}/cancel", method="POST", body={})
    assert "a turn is already running on this thread" in busy and "wait for it, or cancel it" in busy

    # A server without a model says so before making anything.
    (tmp_path / "bare").mkdir()
    with JupyterServerProcess(tmp_path / "bare", sources={"sales": str(sales_db)}, model_url="http://127.0.0.1:9/v1",
                              extra=["--AnalystApp.api_key=", "--AnalystApp.model_base_url="]) as bare:
        no_model = refused(f"--server {bare.url} --token {bare.token}")
        assert "has no model configured" in no_model and "OPENAI_API_KEY" in no_model
        assert bare.request("/analyst/api/threads")["threads"] == []


def test_interrupting_an_ask_on_a_jupyter_server_cancels_its_turn(kernel, jupyter):
    tid = jupyter.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]

    pressed: list[bool] = []

    def interrupt_once_running(msg: dict[str, Any]) -> None:
        # The cell's progress shows the turn's Python step started: the user presses stop, once.
        if not pressed and "-> run_python" in msg["content"].get("data", {}).get("text/plain", ""):
            pressed.append(True)
            kernel.manager.interrupt_kernel()

    cell = kernel.run(f"%%ask --server {jupyter.url} --token {jupyter.token} --thread {tid}\nhold",
                      watch=interrupt_once_running)
    assert not cell.ok and cell.reply["ename"] == "KeyboardInterrupt", cell.error
    thread = jupyter.request(f"/analyst/api/threads/{tid}")
    assert [t["status"] for t in thread["turns"]] == ["interrupted"] and thread["active"] is False


def test_ask_on_a_jupyter_server_attaches_the_notebook_whose_kernel_runs_it(served):
    from jupyter_client import BlockingKernelClient

    jupyter, model = served
    (jupyter.root / "work").mkdir()
    (jupyter.root / "work" / "review.ipynb").write_text(json.dumps(review_notebook()))
    # The notebook's kernel as JupyterLab gets it: a session the server starts for the notebook.
    session = jupyter.request("/api/sessions", method="POST", body={
        "path": "work/review.ipynb", "name": "review.ipynb", "type": "notebook", "kernel": {"name": "python3"}})
    client = BlockingKernelClient()
    client.load_connection_file(str(jupyter.root / "rt" / f"kernel-{session['kernel']['id']}.json"))
    client.start_channels()
    try:
        connected(client)
        kernel = Kernel(client)
        assert kernel.run("%load_ext jupyter_analyst").ok
        asked = kernel.run(f"%%ask --server {jupyter.url} --token {jupyter.token} --source sales\nrevenue by region",
                           name="__import__('os').environ['JPY_SESSION_NAME']")
        assert asked.ok, asked.error
        # The kernel knows its notebook as a file of the server's machine; the turn names it in
        # the server's terms, and the server reads it from its own folder.
        assert asked.value("name") == str(jupyter.root / "work" / "review.ipynb")
        prompts = system_prompts(model)
        assert prompts and all("Notebook work/review.ipynb: 2 cells" in p for p in prompts)
        assert "kept-out-of-the-outline" not in prompts[0]
        seen = len(model.requests)
        assert kernel.run(f"%%ask --server {jupyter.url} --token {jupyter.token} --no-attach --rerun\nrevenue by region").ok
        assert all("Notebook " not in p for p in system_prompts(model, seen))
    finally:
        client.stop_channels()
        jupyter.request(f"/api/sessions/{session['id']}", method="DELETE", raw=True)


def test_a_turn_run_on_a_server_keeps_the_ledger_its_end_told():
    from jupyter_analyst.events import TurnEnded, TurnStarted
    from jupyter_analyst.ledger import Ledger, Usage
    from jupyter_analyst.magics.remote import summarize

    ledger = Ledger(usage=Usage(calls=2, prompt_tokens=900, completion_tokens=30, counted_by="server"), steps=1)
    events = [TurnStarted(thread_id="thr_1", turn_id="turn_1", prompt="p", model="m"),
              TurnEnded(thread_id="thr_1", turn_id="turn_1", status="completed", ledger=ledger)]
    assert summarize(events).ledger == ledger
    # A turn the server closed without its ledger has none: no figure is made up for it.
    events[1] = events[1].model_copy(update={"ledger": None})
    assert summarize(events).ledger is None


ORDERS = ("SELECT r.region, count(*) AS orders FROM orders o JOIN regions r ON o.region_id = r.region_id "
          "GROUP BY r.region ORDER BY r.region")


def test_ask_shows_the_answers_receipts_and_marks_an_unsupported_number(kernel, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer
    from jupyter_analyst.testing.model_server import MODEL_NAME

    script = {"turns": [{"match": ".", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": ORDERS, "name": "orders"}}]},
        {"content": "North had 595 orders, East 393, and West grew 37%."},
    ]}]}
    with ScriptedModelServer(script) as server:
        cell = kernel.run(f"%%ask --base-url {server.base_url} --model {MODEL_NAME} --no-summarizer "
                          f"--source {sales_db}\norders by region")
    assert cell.ok, cell.error
    (html,) = [o["content"]["data"]["text/html"] for o in cell.outputs
               if "595 orders" in o["content"].get("data", {}).get("text/html", "")]
    assert html.startswith("<p>North had 595 orders, East 393, and West grew 37%.</p>")
    # Each cited number with its step's call id, row and column; the invented one marked.
    call = re.search(r"<code>595</code>: step <code>(call_[^<]+)</code>, row 3, column <code>orders</code>", html)
    assert call, html
    assert f"<code>393</code>: step <code>{call.group(1)}</code>, row 2, column <code>orders</code>" in html
    assert "<code>37%</code>: ⚠️ no step shows this number" in html
    assert "`595`: step `call_" in cell.text() and "`37%`: ⚠️ no step shows this number" in cell.text()
