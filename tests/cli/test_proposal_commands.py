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
        return run_cli("run", "--db", str(tmp_path / "sales.csv"),
                       "--prompt", "improve my notebook", "--workspace", str(tmp_path / "ws"),
                       "--attach", str(notebook), "--propose", "--no-summarizer", *extra, env=env)


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
    # nbdiff's format: what was inserted and what was modified, by path.
    assert "inserted before" in run.stdout and "modified" in run.stdout and "+y = 3" in run.stdout.replace("  ", "")
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
