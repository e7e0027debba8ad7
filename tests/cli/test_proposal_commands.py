"""``run --attach NB.ipynb --propose`` and ``proposals accept|reject|revert`` on a notebook file,
with the scripted model over HTTP and the sandboxed kernel."""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from jupyter_analyst.testing import ScriptedModelServer

from .test_cli import run_cli

pytestmark = pytest.mark.kernel

SCRIPT = {"turns": [{"steps": [
    {"tool_calls": [{"name": "propose_cells", "arguments": {"changes": [
        {"op": "insert", "after": "c1", "source": "print('sum is', 40 + 2)", "reason": "add the sum"},
        {"op": "replace", "cell_id": "c2", "source": "y = 3", "reason": "y is 3"}]}}]},
    {"content": "[scripted model] proposed two changes"},
]}]}


@pytest.fixture
def notebook(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", id="c1"), nbformat.v4.new_code_cell("y = 2", id="c2")]
    path = tmp_path / "study.ipynb"
    nbformat.write(nb, path)
    return path


def propose(tmp_path, notebook, *extra):
    with ScriptedModelServer(SCRIPT) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        run = run_cli("run", "--db", str(tmp_path / "sales.csv"),
                      "--prompt", "improve my notebook", "--workspace", str(tmp_path / "ws"),
                      "--attach", str(notebook), "--propose", "--no-summarizer", *extra, env=env)
        run.requests = list(server.requests)  # type: ignore[attr-defined]
        return run


def thread_of(out: str) -> str:
    return out.split("--thread ")[-1].split()[0]


def test_propose_writes_the_proposed_notebook_and_prints_the_diff_then_accept_and_revert(tmp_path, notebook):
    (tmp_path / "sales.csv").write_text("region,revenue\nnorth,1\n")
    before = notebook.read_bytes()
    run = propose(tmp_path, notebook)
    assert run.returncode == 0, run.stderr
    assert notebook.read_bytes() == before  # the notebook itself is not changed
    proposed = nbformat.read(tmp_path / "study.proposed.ipynb", as_version=4)
    assert [c.source for c in proposed.cells] == ["x = 1", "print('sum is', 40 + 2)", "y = 3"]
    assert "sum is 42" in json.dumps(proposed.cells[1].outputs)
    # Plain text: each change's source lines and each sandbox output in one line; on a pipe,
    # no colour, and no notebook JSON (metadata, execution counts) at all.
    lines = run.stdout.splitlines()
    for said in ["new code cell", "after c1: add the sum", "+ print('sum is', 40 + 2)", "  output stdout: sum is 42",
                 "replace cell c2: y is 3", "- y = 2", "+ y = 3", "  ran in the sandbox: ok, no output"]:
        assert any(said in line for line in lines), (said, run.stdout)
    assert "\x1b" not in run.stdout and "metadata" not in run.stdout and "execution_count" not in run.stdout
    # The model is told the notebook by its name, never by a path of this machine.
    system = run.requests[0]["messages"][0]["content"]
    assert "Notebook study.ipynb:" in system and str(tmp_path) not in json.dumps(run.requests)
    thread = thread_of(run.stdout)

    ws = ["--thread", thread, "--workspace", str(tmp_path / "ws")]
    one = run_cli("proposals", "accept", str(notebook), "--cells", "c2", *ws)
    assert one.returncode == 0, one.stderr
    assert "accepted  c2" in one.stdout
    cells = nbformat.read(notebook, as_version=4).cells
    assert [c.source for c in cells] == ["x = 1", "y = 3"]
    assert cells[1].metadata["jupyter_analyst"]["turn"] and (tmp_path / ".ipynb_checkpoints").is_dir()
    rest = run_cli("proposals", "accept", str(notebook), *ws)
    assert rest.returncode == 0, rest.stderr
    assert len(nbformat.read(notebook, as_version=4).cells) == 3
    again = run_cli("proposals", "accept", str(notebook), *ws)
    assert again.returncode == 2 and "no pending change left" in again.stderr
    back = run_cli("proposals", "revert", str(notebook), *ws)
    assert back.returncode == 0, back.stderr
    assert notebook.read_bytes() == before and "reverted 2 change(s)" in back.stdout


def test_propose_colours_the_changes_on_a_terminal_only(tmp_path, notebook):
    import pty
    import subprocess

    from .test_cli import CLI

    (tmp_path / "sales.csv").write_text("region,revenue\nnorth,1\n")
    main, attached = pty.openpty()
    with ScriptedModelServer(SCRIPT) as server:
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")},
               "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        env.pop("NO_COLOR", None)
        done = subprocess.run([*CLI, "run", "--db", str(tmp_path / "sales.csv"), "--prompt", "improve my notebook",
                               "--workspace", str(tmp_path / "ws"), "--attach", str(notebook), "--propose",
                               "--no-summarizer"], stdout=attached, stderr=subprocess.PIPE, env=env, timeout=120)
    os.close(attached)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the terminal's other end closed: all is read
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert done.returncode == 0, done.stderr
    assert "\x1b[32m+ y = 3\x1b[0m" in out.decode() and "\x1b[31m- y = 2\x1b[0m" in out.decode()


def test_propose_refuses_a_link_and_needs_a_notebook(tmp_path, notebook):
    (tmp_path / "sales.csv").write_text("region,revenue\nnorth,1\n")
    elsewhere = tmp_path / "elsewhere.ipynb"
    elsewhere.write_text("{}")
    os.symlink(elsewhere, tmp_path / "study.proposed.ipynb")
    run = propose(tmp_path, notebook)
    assert run.returncode == 2 and "is a link, which is not followed" in run.stderr
    assert elsewhere.read_text() == "{}"
    alone = run_cli("run", "--db", str(tmp_path / "sales.csv"), "--prompt", "x", "--propose",
                    "--workspace", str(tmp_path / "ws"), env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert alone.returncode == 2 and "--attach" in alone.stderr
    link = tmp_path / "link.ipynb"
    os.symlink(notebook, link)
    refused = run_cli("proposals", "accept", str(link), "--thread", "thr_x", "--workspace", str(tmp_path / "ws"))
    assert refused.returncode == 2 and "is a link" in refused.stderr


def test_a_bare_decision_names_the_newest_proposal_with_a_change_pending(tmp_path, notebook):
    from jupyter_analyst.cli.proposal_commands import _latest
    from jupyter_analyst.workspace import Workspace

    workspace = Workspace(tmp_path / "ws")
    store = workspace.store
    thread = store.create_thread(source="x.csv").thread_id
    for pid in ("prop_old", "prop_new"):
        store.record_proposal(thread, "turn_1", pid, str(notebook), {
            "proposal_id": pid, "notebook": str(notebook), "changes": [{"change_id": f"{pid}-c"}]})
    assert _latest(store, thread, notebook)["proposal_id"] == "prop_new"
    store.decide(thread, "prop_new", ["prop_new-c"], "withdrawn", "model")
    assert _latest(store, thread, notebook)["proposal_id"] == "prop_old"
    store.decide(thread, "prop_old", ["prop_old-c"], "rejected", "ann")
    assert _latest(store, thread, notebook)["proposal_id"] == "prop_new"  # all decided: the newest
    workspace.close()
