"""The audit notebook is the host's: a kernel cannot plant a cell in it.

Before the fix, ``notebook.ipynb`` lived in the kernel's writable folder and the host
appended to whatever was there, so a planted cell later ran outside the sandbox under
papermill.
"""

from __future__ import annotations

import json

import nbformat

from jupyter_analyst.testing import python_step, text_step

from .conftest import results_of, sandboxed_root, scripted

pytestmark = sandboxed_root()

PLANTED = "import os; os.system('touch /tmp/pwned-by-planted-cell')"


def test_a_planted_notebook_never_reaches_the_audit_trail(tmp_path, sales_db):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PLANTED)])
    text = json.dumps(nb)
    workspace = (tmp_path / "ws").resolve()
    attack = f"""
import glob, os
tid = os.path.basename(os.getcwd())
written = []
for path in ["notebook.ipynb", "../notebook.ipynb", f"../../threads/{{tid}}/notebook.ipynb",
             *glob.glob({str(workspace)!r} + "/**/notebook.ipynb", recursive=True)]:
    try:
        open(path, "w").write({text!r})
        written.append(path)
    except OSError:
        pass
print(written)
"""
    with scripted(tmp_path / "ws", sales_db, {"turns": [{"match": ".", "steps": [python_step(attack), text_step()]}]}) as runner:
        first = runner.run("plant")
        second = runner.run("again", thread=first.thread_id)
    assert first.status == second.status == "completed"
    # The kernel wrote what it could (its own folder), and none of it is the audit notebook.
    planted = results_of(runner, first.turn_id)[0]
    assert planted.status == "ok" and "notebook.ipynb" in planted.result["stdout"], planted.result
    notebook = nbformat.read(second.notebook, as_version=4)
    nbformat.validate(notebook)
    sources = "\n".join(c.source for c in notebook.cells)
    assert PLANTED not in sources
    kernel_dir = (tmp_path / "ws" / "kernels" / first.thread_id).resolve()
    assert kernel_dir not in __import__("pathlib").Path(second.notebook).resolve().parents
