"""Folders built to exhaust the host: nested thousands deep, or holding tens of thousands
of names. The host's walks are iterative and bounded, so it reports what it did not read
and goes on; before, a 3,000-deep folder raised RecursionError in the host, failing the
step's collection and every later kernel start of the thread (the ownership hand-over
walked the same tree).
"""

from __future__ import annotations

import pytest

from jupyter_analyst.kernel.workdir import SCAN_DEPTH, SCAN_NAMES
from jupyter_analyst.testing import python_step, text_step

from .conftest import remove_deep_tree, results_of, sandboxed_root, scripted

pytestmark = sandboxed_root()

DEEP = """
import os
start = os.getcwd()
try:
    os.chdir("outputs")
    for _ in range(3000):
        os.makedirs("d", exist_ok=True)
        os.chdir("d")
    open("bottom.csv", "w").write("x\\n1\\n")
finally:
    os.chdir(start)
"""
WIDE = f"""
import os
os.makedirs("outputs/wide")
for i in range({SCAN_NAMES + 500}):
    open(f"outputs/wide/{{i:06d}}.txt", "w").close()
"""

# Names that are not text: undecodable bytes, control characters (beside the wide folder).
BAD_NAMES = """
import shutil
shutil.rmtree("outputs/wide")
open(b"outputs/\\xff\\n.csv", "wb").write(b"a\\n")
open("outputs/tab\\there.csv", "w").write("a\\n")
open("outputs/fine.csv", "w").write("fine\\n")
"""


@pytest.fixture(scope="module")
def trees(tmp_path_factory, sales_db):
    script = {"turns": [
        {"match": "deep", "steps": [python_step(DEEP), python_step("open('outputs/after.csv', 'w').write('a\\n')"),
                                    text_step()]},
        {"match": "wide", "steps": [python_step(WIDE), python_step(BAD_NAMES), text_step()]},
    ]}
    workspace = tmp_path_factory.mktemp("ws") / "ws"
    try:
        with scripted(workspace, sales_db, script) as runner:
            deep = runner.run("deep")
            # A new process: a new kernel, whose start hands the deep tree to its own uid.
            wide = runner.run("wide", thread=deep.thread_id)
            yield runner, deep, wide
    finally:
        remove_deep_tree(workspace / "kernels")


def _not_stored(result) -> dict[str, str]:
    return {f["path"]: f["reason"] for f in result.result.get("files_not_stored", [])}


def test_a_folder_nested_thousands_deep_is_reported_not_walked(trees):
    runner, deep, _ = trees
    assert deep.status == "completed"
    nest, after = results_of(runner, deep.turn_id)
    assert nest.status == "ok" and nest.artifact_ids == []
    assert any(f"nested more than {SCAN_DEPTH} deep" in why for why in _not_stored(nest).values())
    assert after.status == "ok" and len(after.artifact_ids) == 1, "the next step's files are stored as usual"


def test_the_next_kernel_starts_in_a_deep_tree_and_a_wide_one_is_bounded(trees):
    runner, _, wide = trees
    assert wide.status == "completed", wide.error
    step = results_of(runner, wide.turn_id)[0]
    assert step.status == "ok" and step.artifact_ids == []
    assert f"more than {SCAN_NAMES} names" in _not_stored(step)["outputs"]


def test_names_that_are_not_text_are_reported_printably_and_not_stored(trees):
    runner, _, wide = trees
    step = results_of(runner, wide.turn_id)[1]
    assert step.status == "ok"
    refused = _not_stored(step)
    assert refused["outputs/\\xff\\n.csv"].startswith("a name that is not plain text")
    assert "outputs/tab\\there.csv" in refused
    assert [a["name"] for a in step.result["artifacts"]] == ["outputs/fine.csv"]
