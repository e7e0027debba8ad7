"""A kernel sees its own thread's data and nothing else of the workspace.

Before the fix, the whole blob store was mounted into every kernel, so thread B read
thread A's datasets (and, on a server, another user's).
"""

from __future__ import annotations

import json

import pytest

from jupyter_analyst.testing import python_step, sql_step, text_step

from .conftest import results_of, sandboxed_root, scripted

pytestmark = sandboxed_root()

A_SQL = "SELECT region_id, region FROM regions ORDER BY region_id"
B_SQL = "SELECT product_id FROM products ORDER BY product_id LIMIT 3"


def _script(*steps) -> dict:
    return {"turns": [{"match": ".", "steps": list(steps)}]}


def test_thread_b_cannot_read_thread_a_datasets(tmp_path, sales_db):
    workspace = tmp_path / "ws"
    with scripted(workspace, sales_db, _script(sql_step(A_SQL, "regions_a"), python_step("print(len(regions_a))"),
                                               text_step())) as a:
        first = a.run("fetch")
    assert first.status == "completed"
    secret = next(e for e in a.of_type("artifact") if e.artifact_type == "dataset").fingerprint.removeprefix("sha256:")
    blob = workspace.resolve() / "artifacts" / "sha256" / secret[:2] / secret
    assert blob.is_file()
    # The probe reads B's own dataset, so B's kernel has it linked (datasets are restored
    # for the steps that read them).
    probe = f"""
import glob, json, os
found = {{"blob": None, "store": None, "datasets": None, "rows": len(products_b)}}
try:
    found["blob"] = len(open({str(blob)!r}, "rb").read())
except OSError as exc:
    found["blob"] = type(exc).__name__
try:
    found["store"] = os.listdir({str(blob.parent.parent)!r})
except OSError as exc:
    found["store"] = type(exc).__name__
root = {str(workspace.resolve() / "kernels" / ".datasets")!r}
found["datasets"] = {{d: sorted(os.listdir(os.path.join(root, d))) for d in os.listdir(root)}} if os.path.isdir(root) else None
found["hits"] = [p for p in glob.glob({str(workspace.resolve())!r} + "/**", recursive=True) if {secret!r} in p]
print(json.dumps(found))
"""
    with scripted(workspace, sales_db, _script(sql_step(B_SQL, "products_b"), python_step(probe), text_step())) as b:
        second = b.run("probe")
    assert second.status == "completed" and second.thread_id != first.thread_id
    seen = json.loads(results_of(b, second.turn_id)[1].result["stdout"])
    assert seen["blob"] == "FileNotFoundError", "thread A's dataset must not be readable from thread B"
    assert seen["store"] == "FileNotFoundError", "the blob store is not mounted at all"
    assert seen["hits"] == [] and seen["rows"] == 3
    # B's kernel sees one datasets folder, its own, holding only B's dataset.
    mine = next(e for e in b.of_type("artifact") if e.artifact_type == "dataset").fingerprint.removeprefix("sha256:")
    assert list(seen["datasets"].values()) == [[mine]]
