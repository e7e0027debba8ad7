"""Root never acts on a path the kernel chose.

Before the fix, the host made ``.config/matplotlib`` in the kernel's folder at each start,
following a link the kernel had put there: ``<target>/matplotlib`` appeared on the host,
made by root.
"""

from __future__ import annotations

import os

from jupyter_analyst.testing import python_step, text_step

from .conftest import sandboxed_root, scripted

pytestmark = sandboxed_root()


def test_links_planted_for_the_next_kernel_start_are_not_followed(tmp_path, sales_db):
    target = tmp_path / "host-target"
    target.mkdir()
    owned = tmp_path / "host-file"
    owned.write_text("root's")
    plant = f"""
import os, shutil
for name in (".config", ".cache", "outputs"):
    shutil.rmtree(name, ignore_errors=True)
os.symlink({str(target)!r}, ".config")
os.symlink({str(target)!r}, ".cache")
os.symlink({str(target)!r}, "outputs")
os.symlink({str(owned)!r}, "owned-by-me")
"""
    script = {"turns": [
        {"match": "plant", "steps": [python_step(plant), text_step()]},
        # A new process, so a new kernel starts in the planted folder.
        {"match": "next", "steps": [python_step("import matplotlib; print('ok')"), text_step()]},
    ]}
    with scripted(tmp_path / "ws", sales_db, script) as runner:
        first = runner.run("plant")
        second = runner.run("next", thread=first.thread_id)
    assert first.status == second.status == "completed"
    assert os.listdir(target) == [], "nothing may be created through the kernel's links"
    assert os.stat(target).st_uid == 0 and os.stat(owned).st_uid == 0, "no chown through a link"
    assert owned.read_text() == "root's"


def test_a_thread_id_from_a_models_text_names_no_notebook_outside_the_workspace(tmp_path):
    """Jupyter's MCP tools name a thread's audit notebook from an id a result's text carries:
    an id that climbs out of the workspace, or a notebook that is a link, names nothing."""
    from jupyter_analyst.workspace import Workspace

    ws = Workspace(tmp_path / "ws")
    outside = tmp_path / "elsewhere" / "notebook.ipynb"
    outside.parent.mkdir()
    outside.write_text("{}")
    assert ws.written_notebook("../../elsewhere") is None
    linked = ws.root / "threads" / "thr_a" / "notebook.ipynb"
    linked.parent.mkdir(parents=True)
    linked.symlink_to(outside)
    assert ws.written_notebook("thr_a") is None
    real = ws.root / "threads" / "thr_b" / "notebook.ipynb"
    real.parent.mkdir(parents=True)
    real.write_text("{}")
    assert ws.written_notebook("thr_b") == real
