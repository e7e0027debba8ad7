"""The artifact store: content addressing, dedup under concurrency, durability, bad input.

The blob tests run on each blob store (the workspace folder, an S3 bucket) and each database.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from datetime import datetime

import pydantic
import pytest

from jupyter_analyst.artifacts import ArtifactNotFound, ArtifactStore, StepRecord
from jupyter_analyst.artifacts.fingerprints import sha256_bytes
from jupyter_analyst.errors import AnalystError, StorageError
from jupyter_analyst.store import ThreadStore

TEXT = dict(type="text", mime="text/plain", producer="python")


def test_layout_ids_and_summary(blob_store, blob_place, tmp_path):
    store = blob_store
    art, created = store.add_bytes(b"revenue", thread_id="t", name="outputs/r.txt", source_call_id="call_1",
                                   logical_key="step:abc", **TEXT)
    hexdigest = art.fingerprint.removeprefix("sha256:")
    assert created and art.fingerprint == sha256_bytes(b"revenue")
    # In the folder, the blob; with a bucket, its cached copy (the object is keyed the same way).
    local = "artifacts/sha256" if blob_place.kind == "folder" else "artifacts/cache/sha256"
    assert store.blob_path(art) == store.blob_path(art.fingerprint) == tmp_path / local / hexdigest[:2] / hexdigest
    assert blob_place.stored(tmp_path) == [hexdigest]
    assert re.fullmatch(r"art_[0-9a-f]{16}", art.artifact_id)
    assert datetime.fromisoformat(art.created_at).utcoffset().total_seconds() == 0
    assert (art.source_call_id, art.logical_key, art.size) == ("call_1", "step:abc", 7)
    # What the model is told of it: what it can name and use, nothing it cannot act on.
    assert art.summary() == {"id": art.artifact_id, "name": "outputs/r.txt", "type": "text"}


def test_dedup_is_per_thread_and_per_type(blob_store, blob_place, tmp_path):
    store = blob_store
    a, _ = store.add_bytes(b"same", thread_id="t1", name="a", **TEXT)
    renamed, created = store.add_bytes(b"same", thread_id="t1", name="other-name", **TEXT)
    assert not created and renamed == a  # the existing row is reused, name and all
    as_file, created_file = store.add_bytes(b"same", thread_id="t1", name="a", type="file", mime="text/plain",
                                            producer="python")
    in_t2, created_t2 = store.add_bytes(b"same", thread_id="t2", name="a", **TEXT)
    assert created_file and created_t2 and len({a.artifact_id, as_file.artifact_id, in_t2.artifact_id}) == 3
    assert blob_place.stored(tmp_path) == [a.fingerprint.removeprefix("sha256:")]  # one blob, one object
    assert (store.count("t1"), store.count("t2"), store.count()) == (2, 1, 3)


def test_concurrent_adds_of_the_same_bytes_make_one_row(tmp_path, blob_place):
    # Two store instances stand for two processes sharing the workspace file (and bucket).
    stores = [ArtifactStore(tmp_path / "ws.sqlite3", tmp_path, blobs=blob_place.open(tmp_path)) for _ in range(2)]
    results: list[tuple] = []
    barrier = threading.Barrier(8)

    def add(i: int) -> None:
        barrier.wait()
        results.append(stores[i % 2].add_bytes(b"race" * 1000, thread_id="t", name=f"n{i}", **TEXT))

    workers = [threading.Thread(target=add, args=(i,)) for i in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    try:
        assert sum(created for _, created in results) == 1
        assert len({art.artifact_id for art, _ in results}) == 1
        assert stores[0].count("t") == 1 and len(blob_place.stored(tmp_path)) == 1
        assert stores[1].read_bytes(results[0][0].artifact_id) == b"race" * 1000
    finally:
        for s in stores:
            s.close()


def test_a_new_process_sees_the_inventory(tmp_path, blob_place):
    child = (
        "import sys; from pathlib import Path; from jupyter_analyst.artifacts import ArtifactStore, open_blob_store\n"
        "root = Path(sys.argv[1])\n"
        "s = ArtifactStore(root / 'ws.sqlite3', root, blobs=open_blob_store(sys.argv[2] or None, root,"
        " endpoint_url=sys.argv[3] or None))\n"
        "art, created = s.add_bytes(b'from the child', thread_id='t', name='c.txt', type='text',"
        " mime='text/plain', producer='python')\n"
        "print(art.artifact_id)"
    )
    out = subprocess.run([sys.executable, "-c", child, str(tmp_path), blob_place.url or "", blob_place.endpoint or ""],
                         capture_output=True, text=True, check=True)
    artifact_id = out.stdout.strip()
    parent = ArtifactStore(tmp_path / "ws.sqlite3", tmp_path, blobs=blob_place.open(tmp_path))
    try:
        assert parent.read_bytes(artifact_id) == b"from the child"
        again, created = parent.add_bytes(b"from the child", thread_id="t", name="c.txt", **TEXT)
        assert not created and again.artifact_id == artifact_id
    finally:
        parent.close()


def test_shares_the_database_file_with_the_thread_store(tmp_path):
    threads = ThreadStore(tmp_path / "ws.sqlite3")
    thread = threads.create_thread(title="q")
    store = ArtifactStore(tmp_path / "ws.sqlite3", tmp_path)
    try:
        art, _ = store.add_bytes(b"x", thread_id=thread.thread_id, name="x", **TEXT)
        assert threads.get_thread(thread.thread_id).thread_id == thread.thread_id
        assert store.list(thread.thread_id) == [art]
    finally:
        store.close()
        threads.close()


def test_add_file_copy_and_move(blob_store, blob_place, tmp_path):
    store = blob_store
    kept = tmp_path / "kept.csv"
    kept.write_bytes(b"a,b\n1,2\n")
    art, created = store.add_file(kept, thread_id="t", name="outputs/kept.csv", type="file", mime="text/csv",
                                  producer="python")
    assert created and kept.exists() and store.read_bytes(art.artifact_id) == kept.read_bytes()
    # A moved file is handed over even when its content is already stored.
    moved = tmp_path / "incoming.csv"
    moved.write_bytes(b"a,b\n1,2\n")
    same, created = store.add_file(moved, thread_id="t", name="again.csv", type="file", mime="text/csv",
                                   producer="python", move=True)
    assert not created and same == art and not moved.exists()
    png = tmp_path / "fig.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    img, _ = store.add_file(png, thread_id="t", name="fig.png", type="image", mime="image/png", producer="python",
                            move=True)
    assert not png.exists() and store.read_bytes(img.artifact_id) == b"\x89PNG\r\n\x1a\nnot really"
    assert not list((tmp_path / "artifacts").rglob(".tmp-*"))
    assert len(blob_place.stored(tmp_path)) == 2


def test_a_damaged_blob_is_rewritten(blob_store, blob_place):
    store = blob_store
    art, _ = store.add_bytes(b"whole content", thread_id="t1", name="x", **TEXT)
    blob_place.tamper(store, art.fingerprint, b"whole")  # as if a non-atomic writer had crashed
    store.add_bytes(b"whole content", thread_id="t2", name="x", **TEXT)
    assert store.read_bytes(art.artifact_id) == b"whole content"


def test_missing_source_file(blob_store, tmp_path):
    store = blob_store
    with pytest.raises(StorageError) as info:
        store.add_file(tmp_path / "nope.csv", thread_id="t", name="nope.csv", type="file", mime="text/csv",
                       producer="python")
    assert info.value.reason == "artifact_source_missing" and store.count() == 0
    with pytest.raises(StorageError):
        store.add_file(tmp_path, thread_id="t", name="dir", type="file", mime="text/csv", producer="python")


def test_bad_type_or_producer_writes_nothing(blob_store, blob_place, tmp_path):
    store = blob_store
    with pytest.raises(pydantic.ValidationError):
        store.add_bytes(b"x", thread_id="t", name="x", type="chart", mime="text/plain", producer="python")
    with pytest.raises(pydantic.ValidationError):
        store.add_bytes(b"x", thread_id="t", name="x", type="text", mime="text/plain", producer="r")
    assert store.count() == 0 and blob_place.stored(tmp_path) == []


def test_unknown_artifact_and_lost_blob(blob_store, blob_place):
    store = blob_store
    with pytest.raises(ArtifactNotFound) as info:
        store.read_bytes("art_0000000000000000")
    assert isinstance(info.value, AnalystError)
    assert info.value.to_dict()["reason"] == "artifact_not_found"
    assert info.value.to_dict()["artifact_id"] == "art_0000000000000000"
    art, _ = store.add_bytes(b"gone soon", thread_id="t", name="g", **TEXT)
    blob_place.remove(store, art.fingerprint)
    with pytest.raises(StorageError) as lost:
        store.read_bytes(art.artifact_id)
    assert lost.value.reason == "blob_missing"


def test_list_order_and_filters(store):
    names = ["monthly_revenue", "monthlyXrevenue", "Chart.png", "notes"]
    for n, name in enumerate(names):
        store.add_bytes(str(n).encode(), thread_id="t", name=name,
                        type="image" if name.endswith(".png") else "dataset", mime="x/y", producer="sql")
    store.add_bytes(b"other thread", thread_id="u", name="monthly_revenue", type="dataset", mime="x/y",
                    producer="sql")
    assert [a.name for a in store.list("t")] == names
    assert [a.name for a in store.list("t", name="y_r")] == ["monthly_revenue"]  # `_` is not a wildcard
    assert [a.name for a in store.list("t", name="chart")] == ["Chart.png"]
    assert [a.name for a in store.list("t", type="dataset", name="monthly")] == names[:2]
    assert store.list("nobody") == []


def _step(key: str, call: str, thread: str = "t", **extra) -> StepRecord:
    fields = dict(thread_id=thread, step_key=key, tool="run_python", call_id=call, turn_id="turn_1",
                  arguments={"code": "print(1)"}, status="ok", result={"stdout": "1\n"}, artifact_ids=[],
                  created_at="2026-01-01T00:00:00.000Z", duration_s=0.25)
    return StepRecord(**(fields | extra))


def test_ledger_order_isolation_and_persistence(tmp_path):
    first = ArtifactStore(tmp_path / "ws.sqlite3", tmp_path)
    for n, key in enumerate(["k3", "k1", "k2"]):
        first.record_step(_step(key, f"c{n}"))
    first.record_step(_step("k1", "c-late", status="error"))  # insert-or-ignore: the first record stays
    first.record_step(_step("k1", "c-other", thread="t2", result={"when": datetime(2026, 1, 1)},
                            artifact_ids=["art_1", "art_2"]))
    first.close()
    second = ArtifactStore(tmp_path / "ws.sqlite3", tmp_path)
    try:
        assert [s.step_key for s in second.steps("t")] == ["k3", "k1", "k2"]
        kept = second.find_step("t", "k1")
        assert (kept.call_id, kept.status, kept.duration_s) == ("c1", "ok", 0.25)
        assert kept == _step("k1", "c1")
        other = second.find_step("t2", "k1")
        assert other.result == {"when": "2026-01-01 00:00:00"} and other.artifact_ids == ["art_1", "art_2"]
        assert second.find_step("t3", "k1") is None and second.steps("t3") == []
    finally:
        second.close()


def test_the_ledger_knows_which_sql_texts_and_dataset_names_a_thread_asked_for(store):
    """What decides that a query does not start before its key is known (early runs)."""
    sql = "SELECT 'it''s' AS x, 100 % 7 AS y -- a quote, a percent sign"
    store.record_step(_step("k_sql", "c1", tool="run_sql", arguments={"name": "d", "sql": sql}))
    assert store.sql_asked_before("t", sql, "other") is True
    assert store.sql_asked_before("t", "SELECT 2 AS x", "d") is True  # the same dataset, written anew
    assert store.sql_asked_before("t", sql + " ", "other") is False and store.sql_asked_before("t2", sql, "d") is False
    store.record_step(_step("k_py", "c2", arguments={"code": "x = 1", "sql": "SELECT 1", "name": "e"}))
    assert store.sql_asked_before("t", "SELECT 1", "e") is False  # a Python step's arguments are not SQL
