"""The artifact inventory: content addressing, dedup, determinism, the step ledger."""

from __future__ import annotations

import io
import struct
import zlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from jupyter_analyst.artifacts import ArtifactNotFound, ArtifactStore, StepRecord  # noqa: E402
from jupyter_analyst.artifacts.deterministic import normalise_bytes  # noqa: E402
from jupyter_analyst.artifacts.fingerprints import sha256_bytes  # noqa: E402

KW = dict(type="file", mime="text/plain", producer="python")


def blobs(tmp_path):
    return sorted(p for p in (tmp_path / "artifacts" / "sha256").rglob("*") if p.is_file())


def test_same_bytes_stored_once(store, tmp_path):
    a, created_a = store.add_bytes(b"hello", thread_id="t1", name="a.txt", **KW)
    b, created_b = store.add_bytes(b"hello", thread_id="t1", name="b.txt", **KW)
    assert created_a and not created_b
    assert b.artifact_id == a.artifact_id and b.name == "a.txt"
    assert store.count("t1") == 1 and len(blobs(tmp_path)) == 1
    assert a.fingerprint == sha256_bytes(b"hello") and a.size == 5
    assert store.read_bytes(a.artifact_id) == b"hello"


def test_two_threads_share_the_blob_not_the_row(store, tmp_path):
    a, _ = store.add_bytes(b"same", thread_id="t1", name="x", **KW)
    b, created = store.add_bytes(b"same", thread_id="t2", name="x", **KW)
    assert created and a.artifact_id != b.artifact_id
    assert len(blobs(tmp_path)) == 1
    assert [x.artifact_id for x in store.list("t1")] == [a.artifact_id]


def test_files_are_moved_in_and_hashed_streaming(store, tmp_path):
    src = tmp_path / "big.bin"
    src.write_bytes(b"x" * (3 * 1024 * 1024 + 7))
    art, created = store.add_file(src, thread_id="t", name="big.bin", move=True, **KW)
    assert created and not src.exists()
    assert store.blob_path(art).stat().st_size == art.size == 3 * 1024 * 1024 + 7


def test_no_temp_files_left_and_a_crashed_temp_is_ignored(store, tmp_path):
    store.add_bytes(b"one", thread_id="t", name="1", **KW)
    assert not [p for p in blobs(tmp_path) if p.name.startswith(".tmp-")]
    art, _ = store.add_bytes(b"two", thread_id="t", name="2", **KW)
    (store.blob_path(art).parent / ".tmp-crashed").write_bytes(b"half")
    again, created = store.add_bytes(b"two", thread_id="t", name="2", **KW)
    assert not created and store.read_bytes(again.artifact_id) == b"two"


def test_inventory_survives_a_new_store(tmp_path):
    first = ArtifactStore(tmp_path / "db.sqlite3", tmp_path)
    art, _ = first.add_bytes(b"persist", thread_id="t", name="p", **KW)
    first.close()
    second = ArtifactStore(tmp_path / "db.sqlite3", tmp_path)
    try:
        assert second.get(art.artifact_id) == art
        assert second.add_bytes(b"persist", thread_id="t", name="p", **KW) == (art, False)
    finally:
        second.close()


def test_unknown_artifact(store):
    with pytest.raises(ArtifactNotFound) as info:
        store.get("art_nope")
    assert info.value.reason == "artifact_not_found"


def test_list_filters(store):
    store.add_bytes(b"a", thread_id="t", name="revenue.csv", **KW)
    store.add_bytes(b"b", thread_id="t", name="chart.png", type="image", mime="image/x-test", producer="python")
    assert [a.name for a in store.list("t", type="image")] == ["chart.png"]
    assert [a.name for a in store.list("t", name="rev")] == ["revenue.csv"]


def _figure_png() -> bytes:
    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([1, 2, 3], [3, 1, 2])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def _with_chunk(png: bytes, kind: bytes, body: bytes) -> bytes:
    chunk = struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    return png[:33] + chunk + png[33:]  # right after IHDR


def test_same_figure_same_fingerprint_despite_stamps(store):
    png = _figure_png()
    stamped_1 = _with_chunk(png, b"tIME", b"\x07\xe8\x01\x01\x00\x00\x00")
    stamped_2 = _with_chunk(png, b"tIME", b"\x07\xe9\x02\x02\x01\x01\x01")
    stamped_2 = _with_chunk(stamped_2, b"tEXt", b"Software\x00renderer 9.9")
    assert stamped_1 != stamped_2
    a, _ = store.add_bytes(stamped_1, thread_id="t", name="a.png", type="image", mime="image/png", producer="python")
    b, created = store.add_bytes(stamped_2, thread_id="t", name="b.png", type="image", mime="image/png", producer="python")
    assert not created and a.fingerprint == b.fingerprint
    assert store.read_bytes(a.artifact_id).startswith(b"\x89PNG")


def test_pdf_dates_blanked():
    def pdf(date: str) -> bytes:
        fig, ax = plt.subplots()
        ax.plot([1, 2])
        buf = io.BytesIO()
        fig.savefig(buf, format="pdf", metadata={"CreationDate": None})
        plt.close(fig)
        body = buf.getvalue()
        return body.replace(b"/Producer", f"/CreationDate (D:{date}) /Producer".encode(), 1)

    assert pdf("20240101000000Z") != pdf("20250606060606Z")
    assert normalise_bytes(pdf("20240101000000Z"), "application/pdf") == normalise_bytes(
        pdf("20250606060606Z"), "application/pdf")


def test_step_ledger(store):
    def record(key: str, call: str) -> StepRecord:
        return StepRecord(thread_id="t", step_key=key, tool="run_sql", call_id=call, turn_id="u",
                          arguments={"sql": "SELECT 1", "name": "x"}, status="ok", result={"rows": 1},
                          artifact_ids=["art_1"], created_at="2026-01-01T00:00:00Z", duration_s=0.1)

    store.record_step(record("k1", "c1"))
    store.record_step(record("k2", "c2"))
    store.record_step(record("k1", "c3"))  # a second record of a key is ignored
    assert store.find_step("t", "k1").call_id == "c1"
    assert store.find_step("t", "nope") is None
    assert store.find_step("other", "k1") is None
    assert [s.step_key for s in store.steps("t")] == ["k1", "k2"]
