"""Artifacts on an S3 bucket: the bucket is the store of record, read through a verified cache.

Against a real S3-compatible server (moto's, on 127.0.0.1), with the real s3fs client.
"""

from __future__ import annotations

import json
import shutil

import pytest

from jupyter_analyst.artifacts import ArtifactStore, open_blob_store
from jupyter_analyst.artifacts.fingerprints import sha256_bytes
from jupyter_analyst.cli import main
from jupyter_analyst.errors import StorageError
from jupyter_analyst.testing import python_step, sql_step, text_step

SQL = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r "
       "ON o.region_id = r.region_id GROUP BY r.region ORDER BY r.region")
CHART = ("import matplotlib.pyplot as plt\n"
         "revenue.plot.bar(x='region', y='revenue')\n"
         "revenue.to_csv('outputs/revenue.csv', index=False)\n"
         "plt.show()\n"
         "print('total', round(revenue.revenue.sum(), 2))")
TOTAL = "print('total again', round(revenue.revenue.sum(), 2))"
TEXT = dict(type="text", mime="text/plain", producer="python")


@pytest.fixture
def bucket(s3_server, s3_env):
    """A fresh bucket: ``(name, s3:// URL with a prefix, endpoint)``."""
    name = s3_server.new_bucket()
    return name, f"s3://{name}/team", s3_server.endpoint_url


@pytest.fixture
def s3_store(tmp_path, bucket):
    _, url, endpoint = bucket
    store = ArtifactStore(tmp_path / "ws.sqlite3", tmp_path, blobs=open_blob_store(url, tmp_path, endpoint_url=endpoint))
    yield store
    store.close()


def _key(fingerprint: str) -> str:
    hexdigest = fingerprint.removeprefix("sha256:")
    return f"team/sha256/{hexdigest[:2]}/{hexdigest}"


# ------------------------------------------------------------------ a whole turn


def test_a_cli_turn_leaves_its_artifacts_in_the_bucket(analyst, s3_server, bucket, tmp_path, capsys):
    name, url, endpoint = bucket
    a = analyst({"turns": [
        {"match": "^again", "steps": [python_step(TOTAL), text_step()]},
        {"match": ".", "steps": [sql_step(SQL, "revenue"), python_step(CHART), text_step()]},
    ]})
    blobs = ["--blobs", url, "--blobs-endpoint", endpoint]
    common = ["--workspace", str(a.workspace), "--base-url", a.server.base_url, "--no-summarizer", "--json", *blobs]
    assert main(["run", "--db", str(a.source), "--prompt", "revenue by region", *common]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["status"] == "completed" and first["artifacts"]["created"] == 3

    from jupyter_analyst.workspace import Workspace

    ws = Workspace(a.workspace, blobs=url, blobs_endpoint=endpoint)
    try:
        made = ws.artifacts.list(first["thread_id"])
        assert sorted(x.type for x in made) == ["dataset", "file", "image"]
        # The bucket holds each artifact under its fingerprint; the folder's own store is empty.
        assert s3_server.keys(name) == sorted(_key(x.fingerprint) for x in made)
        assert not list((a.workspace / "artifacts" / "sha256").rglob("*"))
        for x in made:
            body = s3_server.client().get_object(Bucket=name, Key=_key(x.fingerprint))["Body"].read()
            assert sha256_bytes(body) == x.fingerprint and len(body) == x.size
    finally:
        ws.close()

    # Another machine (no cache): the next turn's kernel loads the dataset from the bucket.
    shutil.rmtree(a.workspace / "artifacts" / "cache")
    assert main(["run", "--thread", first["thread_id"], "--prompt", "again", *common]) == 0
    later = json.loads(capsys.readouterr().out)
    assert later["status"] == "completed" and later["tool_calls"]["executed"] == 1
    ws = Workspace(a.workspace, blobs=url, blobs_endpoint=endpoint)
    try:
        step = next(s for s in ws.artifacts.steps(first["thread_id"]) if s.arguments.get("code") == TOTAL)
    finally:
        ws.close()
    assert step.status == "ok" and "total again" in step.result["stdout"]
    dataset = next(x for x in made if x.type == "dataset")
    cached = a.workspace / "artifacts" / "cache" / _key(dataset.fingerprint).removeprefix("team/")
    assert sha256_bytes(cached.read_bytes()) == dataset.fingerprint


def test_a_library_turn_on_a_missing_bucket_fails_before_it_starts(analyst, s3_server, s3_env):
    a = analyst({"turns": [{"match": ".", "steps": [sql_step(SQL, "revenue"), text_step()]}]})
    with pytest.raises(StorageError) as info:
        a.run("revenue by region", blobs="s3://no-such-bucket/team", blobs_endpoint=s3_server.endpoint_url)
    assert info.value.reason == "blob_bucket_missing" and "no-such-bucket" in info.value.message
    assert "aws s3 mb" in info.value.hint
    from jupyter_analyst.workspace import Workspace

    ws = Workspace(a.workspace)
    try:
        assert ws.store.list_threads() == []  # nothing was started
    finally:
        ws.close()


# ------------------------------------------------------------------ written once, verified on read


def test_the_same_content_stored_twice_makes_one_object(s3_store, s3_server, bucket, tmp_path):
    name, url, endpoint = bucket
    a, _ = s3_store.add_bytes(b"same bytes", thread_id="t1", name="a", **TEXT)
    b, _ = s3_store.add_bytes(b"same bytes", thread_id="t2", name="b", **TEXT)
    src = tmp_path / "same.txt"
    src.write_bytes(b"same bytes")
    c, _ = s3_store.add_file(src, thread_id="t3", name="c", **TEXT, move=True)
    assert a.fingerprint == b.fingerprint == c.fingerprint and not src.exists()
    assert s3_server.keys(name) == [_key(a.fingerprint)]
    # Written once: a present object of the right size is never sent again (here, a forged
    # one stays forged, and is refused when read with a cold cache).
    s3_server.client().put_object(Bucket=name, Key=_key(a.fingerprint), Body=b"fake bytes")
    s3_store.add_bytes(b"same bytes", thread_id="t4", name="d", **TEXT)
    assert s3_server.client().get_object(Bucket=name, Key=_key(a.fingerprint))["Body"].read() == b"fake bytes"


def test_an_object_edited_in_the_bucket_is_refused(s3_store, s3_server, bucket):
    name, _, _ = bucket
    art, _ = s3_store.add_bytes(b"the true numbers", thread_id="t", name="n.txt", **TEXT)
    s3_server.client().put_object(Bucket=name, Key=_key(art.fingerprint), Body=b"the fake numbers")
    cached = s3_store.blob_path(art)
    assert s3_store.read_bytes(art.artifact_id) == b"the true numbers"  # the verified cache still has them
    cached.unlink()
    with pytest.raises(StorageError) as info:
        s3_store.read_bytes(art.artifact_id)
    assert info.value.reason == "blob_corrupt"
    assert art.artifact_id in info.value.message and f"s3://{name}/{_key(art.fingerprint)}" in info.value.message
    assert not cached.exists(), "a wrong object never enters the cache"
    assert not list(cached.parent.glob(".tmp-*"))


def test_a_deleted_or_damaged_cache_is_refilled_from_the_bucket(s3_store, tmp_path):
    art, _ = s3_store.add_bytes(b"kept in the bucket", thread_id="t", name="k.txt", **TEXT)
    shutil.rmtree(tmp_path / "artifacts" / "cache")
    assert s3_store.read_bytes(art.artifact_id) == b"kept in the bucket"
    cached = s3_store.blob_path(art)
    assert cached.read_bytes() == b"kept in the bucket"
    # A cached copy that no longer hashes right (or a link in its place) is fetched again.
    cached.write_bytes(b"damaged in the cache")
    assert s3_store.read_bytes(art.artifact_id) == b"kept in the bucket"
    cached.unlink()
    cached.symlink_to(tmp_path / "elsewhere")
    assert s3_store.checked_blob(art.fingerprint, thread_id="t") == cached
    assert not cached.is_symlink() and cached.read_bytes() == b"kept in the bucket"


def test_an_object_deleted_from_the_bucket_is_missing(s3_store, s3_server, bucket):
    name, _, _ = bucket
    art, _ = s3_store.add_bytes(b"gone", thread_id="t", name="g.txt", **TEXT)
    s3_server.client().delete_object(Bucket=name, Key=_key(art.fingerprint))
    s3_store.blob_path(art).unlink()
    with pytest.raises(StorageError) as info:
        s3_store.read_bytes(art.artifact_id)
    assert info.value.reason == "blob_missing" and art.artifact_id in info.value.message


# ------------------------------------------------------------------ clear errors at start


def test_server_down_is_a_clear_error(tmp_path, s3_env):
    from jupyter_analyst.testing.servers.s3_server import s3_server

    with s3_server() as server:
        name = server.new_bucket()
        store = open_blob_store(f"s3://{name}", tmp_path, endpoint_url=server.endpoint_url)
        fingerprint = sha256_bytes(b"stored before the server went down")
        store.put_bytes(fingerprint, b"stored before the server went down")
    # At start: the store is not opened.
    with pytest.raises(StorageError) as info:
        open_blob_store(f"s3://{name}", tmp_path, endpoint_url=server.endpoint_url)
    assert info.value.reason == "blob_store_unreachable"
    assert server.endpoint_url in info.value.message and "endpoint" in info.value.hint
    # In the middle: a cached blob still reads (verified); an upload is a clear error.
    with store.open_verified(fingerprint) as fh:
        assert fh.read() == b"stored before the server went down"
    with pytest.raises(StorageError) as info:
        store.put_bytes(sha256_bytes(b"new"), b"new")
    assert info.value.reason == "blob_store_unreachable"


def test_missing_bucket_and_missing_credentials(tmp_path, s3_server, s3_env, monkeypatch):
    with pytest.raises(StorageError) as info:
        open_blob_store("s3://no-such-bucket", tmp_path, endpoint_url=s3_server.endpoint_url)
    assert info.value.reason == "blob_bucket_missing"
    name = s3_server.new_bucket()
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(StorageError) as info:
        open_blob_store(f"s3://{name}", tmp_path, endpoint_url=s3_server.endpoint_url)
    assert info.value.reason == "blob_credentials_missing" and "AWS_ACCESS_KEY_ID" in info.value.hint


def test_the_endpoint_can_come_from_the_environment(tmp_path, s3_server, s3_env, monkeypatch):
    name = s3_server.new_bucket()
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint_url)
    store = open_blob_store(f"s3://{name}", tmp_path)
    store.put_bytes(sha256_bytes(b"x"), b"x")
    assert s3_server.keys(name) == [_key(sha256_bytes(b"x")).removeprefix("team/")]


@pytest.mark.parametrize("url", ["s3://", "s3://bucket?x=1", "gs://bucket/prefix", "http://example.com/x"])
def test_bad_blob_store_urls(tmp_path, url):
    with pytest.raises(StorageError) as info:
        open_blob_store(url, tmp_path)
    assert info.value.reason == "blob_store_url"


def test_credentials_in_the_url_are_refused_without_echoing_them(tmp_path):
    with pytest.raises(StorageError) as info:
        open_blob_store("s3://AKIAEXAMPLE:very-secret@bucket/prefix", tmp_path)
    assert info.value.reason == "blob_store_url"
    assert "very-secret" not in str(info.value) and "AKIAEXAMPLE" not in json.dumps(info.value.to_dict())


def test_the_cli_refuses_a_missing_bucket_before_anything(tmp_path, s3_server, s3_env, sales_db, capsys):
    status = main(["run", "--db", str(sales_db), "--prompt", "hi", "--workspace", str(tmp_path / "ws"),
                   "--base-url", "http://127.0.0.1:9/v1", "--blobs", "s3://no-such-bucket",
                   "--blobs-endpoint", s3_server.endpoint_url])
    err = capsys.readouterr().err
    assert status != 0 and "no-such-bucket" in err and "does not exist" in err


def test_the_server_extension_does_not_start_on_a_missing_bucket(tmp_path, s3_server, s3_env):
    from jupyter_analyst.turns import AnalystConfig
    from jupyter_analyst.server.service import ThreadService

    config = AnalystConfig(workspace=tmp_path / "ws", blobs="s3://no-such-bucket/team",
                           blobs_endpoint=s3_server.endpoint_url, summarizer=False)
    with pytest.raises(StorageError) as info:
        ThreadService(config=config, model=None, sources={})
    assert info.value.reason == "blob_bucket_missing"
