"""``%%ask`` beside its notebook proposes cells into it: the proposals shown in the cell's output
as diffs, decided with ``%analyst accept|reject|revert``, locally (``NB.proposed.ipynb``
written, the file changed through Jupyter's file contents manager) or through the Jupyter
server the turn ran on. Real kernels, the scripted model over HTTP, the sandboxed kernel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .test_magics import Kernel, connected, started_kernel

pytestmark = pytest.mark.kernel

PROPOSE = {"turns": [{"match": ".", "steps": [
    {"tool_calls": [{"name": "propose_cells", "arguments": {"changes": [
        {"op": "insert", "after": "c1", "source": "print('sum is', 40 + 2)", "reason": "add the sum"},
        {"op": "replace", "cell_id": "c2", "source": "y = 3", "reason": "y is 3"}]}}]},
    {"content": "[scripted model] proposed two changes"},
]}]}


def study() -> dict[str, Any]:
    cells = [{"id": "c1", "cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": "x = 1"},
             {"id": "c2", "cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": "y = 2"}]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def sources(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]]


def html_of(cell: Any) -> str:
    return "\n".join(o["content"]["data"].get("text/html", "") for o in cell.outputs if "data" in o["content"])


@pytest.fixture
def proposing():
    from jupyter_analyst.testing import ScriptedModelServer

    with ScriptedModelServer(PROPOSE) as server:
        yield server


def test_a_local_ask_shows_its_proposals_writes_the_proposed_notebook_and_decides(tmp_path, sales_db, proposing):
    from jupyter_analyst.testing.model_server import MODEL_NAME

    notebook = tmp_path / "study.ipynb"
    notebook.write_text(json.dumps(study()))
    before = notebook.read_bytes()
    with started_kernel(tmp_path, JPY_SESSION_NAME=str(notebook)) as kernel:
        asked = kernel.run(f"%%ask --base-url {proposing.base_url} --model {MODEL_NAME} --no-summarizer "
                           f"--source {sales_db}\nimprove my notebook")
        assert asked.ok, asked.error
        text, html = asked.text(), html_of(asked)
        proposal = text.split("proposal ")[1].split()[0]
        assert proposal.startswith("prop_")
        # The diff of each change, its reason and its sandbox run; how to decide.
        assert "    -y = 2" in text and "    +y = 3" in text and "+print('sum is', 40 + 2)" in text
        assert "ran in the sandbox: ok" in text and "| sum is 42" in text
        assert f"%analyst accept {proposal}" in text and "wrote study.proposed.ipynb" in text
        assert '<span style="background:#ffebe9">-y = 2</span>' in html
        assert "<b>proposal " in html and "print(&#x27;sum is&#x27;, 40 + 2)" in html
        # Nothing ran in the user's kernel, and the notebook is unchanged; the preview has all.
        assert kernel.run("pass", ran="'y' in globals() or 'x' in globals()").value("ran") is False
        assert notebook.read_bytes() == before
        assert sources(tmp_path / "study.proposed.ipynb") == ["x = 1", "print('sum is', 40 + 2)", "y = 3"]

        one = kernel.run(f"%analyst accept {proposal} c2")
        assert one.ok, one.error
        assert "accepted  c2" in one.text() and "pending   prop-" in one.text() and "Reload Notebook" in one.text()
        assert sources(notebook) == ["x = 1", "y = 3"]
        assert (tmp_path / ".ipynb_checkpoints" / "study-checkpoint.ipynb").is_file()
        rest = kernel.run("%analyst accept")  # the latest proposal, its pending changes
        assert rest.ok, rest.error
        assert sources(notebook) == ["x = 1", "print('sum is', 40 + 2)", "y = 3"]
        cell = json.loads(notebook.read_text())["cells"][1]
        assert cell["execution_count"] is None and "sum is 42" in json.dumps(cell["outputs"])
        back = kernel.run("%analyst revert")
        assert back.ok, back.error
        assert "reverted 2 change(s)" in back.text() and notebook.read_bytes() == before

        # Bad input: one clear line each.
        unknown = kernel.run("%analyst reject prop_nope")
        assert not unknown.ok and unknown.reply["ename"] == "UsageError"
        assert "unknown proposal 'prop_nope'" in unknown.reply["evalue"]
        gone = kernel.run(f"%analyst accept {proposal} --notebook {tmp_path / 'missing.ipynb'}")
        assert not gone.ok and "there is no notebook" in gone.reply["evalue"]
        decided = kernel.run(f"%analyst accept {proposal}")
        assert not decided.ok and "no pending change left" in decided.reply["evalue"]
        twice = kernel.run("%analyst revert")
        assert not twice.ok and "no accepted change to revert" in twice.reply["evalue"]


def test_an_ask_without_a_notebook_proposes_nothing_and_a_decision_says_why(tmp_path, sales_db, proposing):
    from jupyter_analyst.testing.model_server import MODEL_NAME

    with started_kernel(tmp_path) as kernel:
        nothing = kernel.run("%analyst accept")
        assert not nothing.ok and "no thread has proposals in this kernel yet" in nothing.reply["evalue"]
        # No notebook attached: the model is not offered propose_cells (its call is refused).
        asked = kernel.run(f"%%ask --base-url {proposing.base_url} --model {MODEL_NAME} --no-summarizer "
                           f"--source {sales_db}\nimprove my notebook")
        assert asked.ok, asked.error
        assert "%analyst accept" not in asked.text() and not list(tmp_path.glob("*.proposed.ipynb"))


# ---------------------------------------------------------------------- on a Jupyter server

@pytest.fixture
def served(tmp_path, sales_db):
    from jupyter_analyst.testing import ScriptedModelServer
    from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess

    (tmp_path / "server").mkdir()
    with ScriptedModelServer(PROPOSE) as model, \
            JupyterServerProcess(tmp_path / "server", sources={"sales": str(sales_db)}, model_url=model.base_url) as server:
        yield server


def test_an_ask_on_a_jupyter_server_proposes_into_its_notebook_and_decides_through_the_server(served):
    from jupyter_client import BlockingKernelClient

    from jupyter_analyst.testing.servers.jupyter import free_port

    jupyter = served
    (jupyter.root / "work").mkdir()
    notebook = jupyter.root / "work" / "study.ipynb"
    notebook.write_text(json.dumps(study()))
    session = jupyter.request("/api/sessions", method="POST", body={
        "path": "work/study.ipynb", "name": "study.ipynb", "type": "notebook", "kernel": {"name": "python3"}})
    client = BlockingKernelClient()
    client.load_connection_file(str(jupyter.root / "rt" / f"kernel-{session['kernel']['id']}.json"))
    client.start_channels()
    try:
        connected(client)
        kernel = Kernel(client)
        assert kernel.run("%load_ext jupyter_analyst").ok
        asked = kernel.run(f"%%ask --server {jupyter.url} --token {jupyter.token} --source sales\nimprove it")
        assert asked.ok, asked.error
        text = asked.text()
        proposal = text.split("proposal ")[1].split()[0]
        # The old source comes from the server's contents API: a true diff, not only the new text.
        assert "    -y = 2" in text and "    +y = 3" in text and "| sum is 42" in text
        assert f"decisions apply through the Jupyter server at {jupyter.url}" in text
        assert not list((jupyter.root / "work").glob("*.proposed.ipynb"))  # the server keeps them

        one = kernel.run(f"%analyst accept {proposal} c2")
        assert one.ok, one.error
        assert sources(notebook) == ["x = 1", "y = 3"]
        (thread,) = jupyter.request("/analyst/api/threads")["threads"]
        listed = jupyter.request(f"/analyst/api/threads/{thread['thread_id']}/proposals")["proposals"]
        assert [c["status"] for c in listed[0]["changes"]] == ["pending", "accepted"]  # the panel sees it
        rejected = kernel.run(f"%analyst reject {proposal}")
        assert rejected.ok and "rejected  prop-" in rejected.text()
        back = kernel.run("%analyst revert")
        assert back.ok, back.error
        assert sources(notebook) == ["x = 1", "y = 2"]

        unknown = kernel.run("%analyst accept prop_nope")
        assert not unknown.ok and "unknown proposal 'prop_nope'" in unknown.reply["evalue"]
        # Another server than the turn's: its proposals are not meant, the thread must be named.
        other = f"--server http://127.0.0.1:{free_port()} --token t"
        unnamed = kernel.run(f"%analyst accept {proposal} {other}")
        assert not unnamed.ok and "no thread has proposals in this kernel yet" in unnamed.reply["evalue"]
        gone = kernel.run(f"%analyst accept {proposal} --thread {thread['thread_id']} {other}")
        assert not gone.ok and "cannot reach the Jupyter server at http://127.0.0.1:" in gone.reply["evalue"]
    finally:
        client.stop_channels()
        jupyter.request(f"/api/sessions/{session['id']}", method="DELETE", raw=True)
