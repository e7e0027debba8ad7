"""A step cannot fill the blob store: caps on bytes and files, checked before any copy.

Before the fix, three sparse 1000 MB files became 3 GB in the blob store, and 5,000 small
files became 5,000 artifacts in one step.
"""

from __future__ import annotations

import pytest

from jupyter_analyst.testing import python_step, text_step

from .conftest import blob_bytes, results_of, sandboxed_root, scripted

pytestmark = sandboxed_root()

SPARSE = """
for i in range(3):
    with open(f"outputs/big{i}.bin", "wb") as fh:
        fh.truncate(1000 * 2**20)
"""
MANY = """
import os
os.makedirs("outputs/many", exist_ok=True)
for i in range(5000):
    open(f"outputs/many/{i}.txt", "w").write(str(i))
"""
FIGURES = """
import matplotlib.pyplot as plt
for i in range(3):
    plt.figure(); plt.plot([i, i + 1]); plt.show()
open("outputs/a.csv", "w").write("a\\n1\\n")
open("outputs/b.csv", "w").write("b\\n2\\n")
"""


@pytest.fixture(scope="module")
def capped(tmp_path_factory, sales_db):
    steps = [python_step(SPARSE), python_step(MANY), python_step("open('outputs/small.csv', 'w').write('x\\n1\\n')"),
             python_step(FIGURES), text_step()]
    with scripted(tmp_path_factory.mktemp("ws") / "ws", sales_db, {"turns": [{"match": ".", "steps": steps}]}) as runner:
        summary = runner.run("fill the disk", outputs={"step_files": 4})
        yield runner, summary, results_of(runner, summary.turn_id)


def test_sparse_giants_are_refused_before_a_byte_is_copied(capped):
    runner, _, results = capped
    step = results[0]
    assert step.status == "ok" and step.artifact_ids == []
    assert "a step may store 256 MB" in step.result["files_note"]
    assert sum(len(b) for b in blob_bytes(runner.workspace)) < 2**20


def test_thousands_of_files_are_refused_as_a_whole(capped):
    _, _, results = capped
    step = results[1]
    assert step.artifact_ids == []
    assert "the step made 5000 files and figures; a step may store 4" in step.result["files_note"]


def test_figures_count_towards_the_cap(capped):
    _, _, results = capped
    assert results[2].status == "ok" and len(results[2].artifact_ids) == 1, "small work is stored as usual"
    step = results[3]
    assert step.artifact_ids == [] and "the step made 5 files and figures" in step.result["files_note"]


def test_the_thread_cap_counts_what_the_thread_holds(tmp_path, sales_db):
    steps = [python_step(f"open('outputs/f{i}.csv', 'w').write('{i}')") for i in range(3)] + [text_step()]
    with scripted(tmp_path / "ws", sales_db, {"turns": [{"match": ".", "steps": steps}]}) as runner:
        summary = runner.run("fill the thread", outputs={"thread_files": 2})
    results = results_of(runner, summary.turn_id)
    assert [len(r.artifact_ids) for r in results] == [1, 1, 0]
    assert "cap of 2" in results[2].result["files_note"]
