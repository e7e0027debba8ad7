"""Data sources and the query runner, on real DuckDB files, CSV/Parquet files and SQLite."""

from __future__ import annotations

import asyncio
import sqlite3
import time

import duckdb
import pyarrow.parquet as pq
import pytest

from jupyter_analyst.errors import QueryFailed, SourceError, SqlRejected
from jupyter_analyst.sql import QueryRunner, open_source, prepare_query


def run(source, sql, dest, **kw):
    return asyncio.run(QueryRunner(source, **kw).run_to_parquet(prepare_query(sql, source), dest))


@pytest.fixture(scope="module")
def big_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("big") / "big.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE big AS SELECT range AS id, range % 997 AS g, (range * 7) % 101 AS v FROM range(200000)")
    return path


def test_duckdb_file_tables_and_description(sales_db):
    src = open_source(str(sales_db))
    try:
        tables = {t.name: t for t in src.list_tables()}
        assert set(tables) == {"orders", "products", "regions"}
        assert tables["orders"].rows == 2400
        desc = src.describe_table("ORDERS")
        assert desc.name == "orders" and desc.rows == 2400 and len(desc.sample) == 5
        assert [c.name for c in desc.columns][:2] == ["order_id", "order_date"]
        with pytest.raises(SqlRejected) as info:
            src.describe_table("order")
        assert info.value.reason == "unknown_table" and "orders" in info.value.suggestions
    finally:
        src.close()


def test_source_is_opened_read_only(sales_db):
    src = open_source(str(sales_db))
    try:
        with pytest.raises(duckdb.Error):
            src.cursor().execute("DELETE FROM orders")  # the engine refuses too, not only our guard
    finally:
        src.close()


def test_result_written_as_parquet(sales_db, tmp_path):
    src = open_source(str(sales_db))
    try:
        out = run(src, "SELECT region_id, COUNT(*) AS n FROM orders GROUP BY region_id", tmp_path / "r.parquet")
        table = pq.read_table(tmp_path / "r.parquet")
        assert out.rows == table.num_rows == 5 and not out.truncated
        assert [c.name for c in out.columns] == ["region_id", "n"]
        assert sum(r["n"] for r in table.to_pylist()) == 2400
        assert len(out.sample) == 5 and set(out.sample[0]) == {"region_id", "n"}
        assert [p.name for p in tmp_path.iterdir()] == ["r.parquet"], "nothing but the result"
    finally:
        src.close()


def test_same_query_same_bytes(big_db, tmp_path):
    src = open_source(str(big_db))
    try:
        sql = "SELECT g, COUNT(*) AS n, SUM(v) AS total FROM big GROUP BY g"
        run(src, sql, tmp_path / "a.parquet")
        run(src, sql, tmp_path / "b.parquet")
        assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    finally:
        src.close()


def test_row_cap_truncates_and_says_so(big_db, tmp_path):
    src = open_source(str(big_db))
    try:
        out = run(src, "SELECT id FROM big", tmp_path / "c.parquet", row_cap=1000)
        assert out.rows == 1000 and out.truncated
        assert pq.read_table(tmp_path / "c.parquet").num_rows == 1000
        exact = run(src, "SELECT id FROM big WHERE id < 1000", tmp_path / "d.parquet", row_cap=1000)
        assert exact.rows == 1000 and not exact.truncated
    finally:
        src.close()


def test_timeout_stops_a_slow_query_promptly(big_db, tmp_path):
    src = open_source(str(big_db))
    try:
        started = time.perf_counter()
        with pytest.raises(QueryFailed) as info:
            run(src, "SELECT COUNT(*) AS n FROM big a, big b WHERE a.id + b.id = 7", tmp_path / "e.parquet", timeout_s=0.5)
        assert info.value.reason == "query_timeout"
        assert time.perf_counter() - started < 20
        assert not (tmp_path / "e.parquet").exists()
        # The source still works afterwards.
        assert run(src, "SELECT COUNT(*) AS n FROM big", tmp_path / "f.parquet").rows == 1
    finally:
        src.close()


def test_engine_error_is_surfaced(sales_db, tmp_path):
    src = open_source(str(sales_db))
    try:
        with pytest.raises(QueryFailed) as info:
            run(src, "SELECT CAST(region AS INTEGER) AS x FROM regions", tmp_path / "g.parquet")
        assert info.value.reason == "query_failed" and "North" in info.value.message
        assert list(tmp_path.iterdir()) == []  # nothing half-written is left
        # A staging path is the runner's alone: one that exists is refused, left as it was.
        (tmp_path / "taken.parquet").write_bytes(b"someone else's")
        with pytest.raises(FileExistsError):
            run(src, "SELECT 1 AS x", tmp_path / "taken.parquet")
        assert (tmp_path / "taken.parquet").read_bytes() == b"someone else's"
    finally:
        src.close()


def test_csv_and_parquet_folder_as_tables(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "Sales 2024.csv").write_text("region,amount\nnorth,1\nsouth,2\nnorth,3\n")
    with duckdb.connect() as conn:
        conn.execute(f"COPY (SELECT 'north' AS region, 'Oslo' AS city) TO '{folder / 'cities.parquet'}' (FORMAT parquet)")
    src = open_source(str(folder))
    try:
        assert src.kind == "files"
        assert {t.name: t.rows for t in src.list_tables()} == {"sales_2024": 3, "cities": 1}
        out = run(src, "SELECT s.region, SUM(s.amount) AS total, MAX(c.city) AS city FROM sales_2024 s "
                       "LEFT JOIN cities c USING (region) GROUP BY s.region ORDER BY s.region", tmp_path / "h.parquet")
        assert out.rows == 2 and out.sample[0] == {"region": "north", "total": 4, "city": "Oslo"}
        v1 = src.data_version()
        (folder / "Sales 2024.csv").write_text("region,amount\nnorth,1\nsouth,2\nnorth,4\n")
        assert src.data_version() != v1
    finally:
        src.close()


def test_single_csv_file(tmp_path):
    path = tmp_path / "orders.csv"
    path.write_text("id,amount\n1,2.5\n2,3.5\n")
    src = open_source(str(path))
    try:
        assert [t.name for t in src.list_tables()] == ["orders"]
    finally:
        src.close()


def test_memory_source():
    src = open_source(":memory:")
    try:
        assert src.list_tables() == [] and src.data_version() == "memory"
    finally:
        src.close()


def test_sqlite_through_sqlalchemy(tmp_path):
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sales (region TEXT, amount REAL)")
        conn.executemany("INSERT INTO sales VALUES (?, ?)", [("south", 2.0), ("north", 1.5), ("north", 3.0)])
    for n, spec in enumerate((f"sqlite:///{db}", str(db))):  # a URL, or the file itself (recognised by its header)
        src = open_source(spec)
        try:
            assert src.kind == "sqlalchemy" and src.dialect == "sqlite"
            assert [(t.name, t.rows) for t in src.list_tables()] == [("sales", 3)]
            dest = tmp_path / f"s{n}.parquet"
            out = run(src, "SELECT region, SUM(amount) AS total FROM sales GROUP BY region", dest)
            assert out.rows == 2
            assert pq.read_table(dest).to_pylist() == [
                {"region": "north", "total": 4.5}, {"region": "south", "total": 2.0}]
            with pytest.raises(SqlRejected):
                prepare_query("DELETE FROM sales", src)
        finally:
            src.close()


@pytest.mark.parametrize("spec", ["/no/such/file.duckdb", "/no/such/folder/", "relative-missing.csv"])
def test_missing_source(spec):
    with pytest.raises(SourceError) as info:
        open_source(spec)
    assert info.value.reason == "source_not_found" and info.value.hint


def test_unreadable_and_empty_sources(tmp_path):
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"\x00garbage" * 500)
    with pytest.raises(SourceError) as info:
        open_source(str(bad))
    assert info.value.reason == "source_unreadable"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SourceError) as info:
        open_source(str(empty))
    assert info.value.reason == "source_empty"
    with pytest.raises(SourceError):
        open_source("postgresql://nobody:secret@127.0.0.1:1/db")
