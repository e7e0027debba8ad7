"""Stored blobs are re-hashed whenever they are read back: a swapped or damaged one is a loud error.

On each blob store: the workspace folder, and an S3 bucket read through a cache (an object
damaged in the bucket is refused the same way).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.testing.servers.jupyter import analyst_server_config
from jupyter_analyst.errors import StorageError
from jupyter_analyst.testing import python_step, sql_step, text_step

SQL = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r "
       "ON o.region_id = r.region_id GROUP BY r.region ORDER BY r.region")
TOTAL = "print('total', round(revenue.revenue.sum(), 2))"


def _other_parquet(tmp_path) -> bytes:
    """Other valid Parquet with the same columns as the dataset (and other numbers)."""
    other = tmp_path / "other.parquet"
    pd.DataFrame({"region": ["EMEA"], "revenue": [1.0]}).to_parquet(other)
    return other.read_bytes()


# ------------------------------------------------------------------ the store


def test_reading_a_swapped_blob_names_the_artifact(blob_store, blob_place):
    store = blob_store
    art, _ = store.add_bytes(b"the real bytes", thread_id="t", name="notes.txt", type="text",
                             mime="text/plain", producer="python")
    assert store.read_bytes(art.artifact_id) == b"the real bytes"
    blob_place.tamper(store, art.fingerprint, b"the fake bytes")
    with pytest.raises(StorageError) as info:
        store.read_bytes(art.artifact_id)
    assert info.value.reason == "blob_corrupt"
    assert art.artifact_id in info.value.message and "notes.txt" in info.value.message
    assert info.value.context["artifact_id"] == art.artifact_id


def test_a_missing_blob(blob_store, blob_place):
    store = blob_store
    art, _ = store.add_bytes(b"abc", thread_id="t", name="a.txt", type="text", mime="text/plain", producer="python")
    blob_place.remove(store, art.fingerprint)
    with pytest.raises(StorageError) as info:
        store.read_bytes(art.artifact_id)
    assert info.value.reason == "blob_missing" and art.artifact_id in info.value.message


def test_a_link_in_place_of_a_blob(store, tmp_path):
    art, _ = store.add_bytes(b"abc", thread_id="t", name="a.txt", type="text", mime="text/plain", producer="python")
    path = store.blob_path(art)
    elsewhere = tmp_path / "same-bytes.txt"
    elsewhere.write_bytes(b"abc")
    path.unlink()
    # A link is never followed, even to the right bytes: blobs are regular files.
    path.symlink_to(elsewhere)
    with pytest.raises(StorageError) as info:
        store.read_bytes(art.artifact_id)
    assert info.value.reason == "blob_corrupt"


def test_storing_the_same_content_again_repairs_a_damaged_blob(blob_store, blob_place, tmp_path):
    store = blob_store
    art, _ = store.add_bytes(b"chart bytes", thread_id="t", name="c.txt", type="text", mime="text/plain",
                             producer="python")
    blob_place.tamper(store, art.fingerprint, b"damaged")
    again, created = store.add_bytes(b"chart bytes", thread_id="t", name="c2.txt", type="text",
                                     mime="text/plain", producer="python")
    assert not created and again.artifact_id == art.artifact_id
    assert store.read_bytes(art.artifact_id) == b"chart bytes"
    src = tmp_path / "d.csv"
    src.write_bytes(b"a,b\n1,2\n")
    data, _ = store.add_file(src, thread_id="t", name="d.csv", type="file", mime="text/csv", producer="python")
    blob_place.tamper(store, data.fingerprint, b"a,b\n9,9\n\n")
    moved = tmp_path / "d2.csv"
    moved.write_bytes(b"a,b\n1,2\n")
    store.add_file(moved, thread_id="t", name="d.csv", type="file", mime="text/csv", producer="python", move=True)
    assert store.read_bytes(data.artifact_id) == b"a,b\n1,2\n" and not moved.exists()


# ------------------------------------------------------------------ into the kernel


def test_a_swapped_dataset_is_never_loaded_into_a_kernel(analyst, tmp_path, blob_place):
    """The rerun that gave other numbers: now the step fails, naming the artifact."""
    from jupyter_analyst.workspace import Workspace

    a = analyst({"turns": [
        {"match": "^repair", "steps": [sql_step(SQL, "revenue"), python_step(TOTAL), text_step()]},
        {"match": "^total", "steps": [python_step(TOTAL.replace("'total'", "'total again'")), text_step()]},
        {"match": ".", "steps": [sql_step(SQL, "revenue"), python_step(TOTAL), text_step()]},
    ]})
    blobs = {"blobs": blob_place.url, "blobs_endpoint": blob_place.endpoint}
    first = a.run("revenue by region", **blobs)
    assert first.status == "completed"
    true_total = next(e for e in a.of_type("tool_result") if e.tool == "run_python").result["stdout"]
    ws = Workspace(a.workspace, blobs=blob_place.url, blobs_endpoint=blob_place.endpoint)
    dataset = next(x for x in ws.artifacts.list(first.thread_id) if x.type == "dataset")
    blob_place.tamper(ws.artifacts, dataset.fingerprint, _other_parquet(tmp_path))
    ws.close()

    a.events.clear()
    later = a.run("total again", thread=first.thread_id, **blobs)
    result = next(e for e in a.of_type("tool_result") if e.tool == "run_python")
    assert result.status == "error"
    error = result.result["error"]
    assert error["reason"] == "blob_corrupt" and dataset.artifact_id in error["message"]
    assert "total 1.0" not in json.dumps(result.result), "the swapped numbers never reach the model"
    assert later.status == "error" and later.error["reason"] == "blob_corrupt"

    # Fetching the data again (rerun) stores the true bytes again; the thread works.
    a.events.clear()
    repaired = a.run("repair it", thread=first.thread_id, rerun=True, **blobs)
    assert repaired.status == "completed", repaired.error
    result = next(e for e in a.of_type("tool_result") if e.tool == "run_python")
    assert result.status == "ok" and result.result["stdout"] == true_total


# ------------------------------------------------------------------ served by the Jupyter server


@pytest.fixture
def jp_server_config(tmp_path, sales_db, blob_place):
    blobs = {"blobs_url": blob_place.url, "blobs_endpoint_url": blob_place.endpoint} if blob_place.url else {}
    return analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, **blobs)


async def test_the_server_does_not_serve_a_swapped_blob(jp_fetch, jp_serverapp, blob_place):
    service = jp_serverapp.web_app.settings["jupyter_analyst"]
    thread = service.workspace.store.create_thread(user="local", source="x")
    # A text file: served byte for byte (a CSV file is served rewritten, its cells neutralised).
    art, _ = service.workspace.artifacts.add_bytes(b"true,1\n", thread_id=thread.thread_id, name="t.txt",
                                                   type="file", mime="text/plain", producer="python")
    ok = await jp_fetch("analyst", "api", "artifacts", art.artifact_id, "content")
    assert ok.body == b"true,1\n"
    shown = await jp_fetch("analyst", "api", "artifacts", art.artifact_id, "preview")
    assert json.loads(shown.body)["data"] == {"text/plain": "true,1\n"}
    blob_place.tamper(service.workspace.artifacts, art.fingerprint, b"fake,9\n")
    for served in ("content", "preview"):
        with pytest.raises(HTTPClientError) as info:
            await jp_fetch("analyst", "api", "artifacts", art.artifact_id, served)
        assert info.value.code == 500
        body = json.loads(info.value.response.body)
        assert body["reason"] == "blob_corrupt" and art.artifact_id in body["message"]
        assert b"fake" not in info.value.response.body
