"""File-backed sources are opened read-only, and a missing file is refused, never created."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import duckdb
import pytest
import sqlalchemy

from jupyter_analyst.errors import SourceError
from jupyter_analyst.sql import open_source

CLI = [sys.executable, "-m", "jupyter_analyst.cli"]
MODEL = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "x"}


@pytest.fixture
def shop_db(tmp_path):
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sales (region TEXT, amount REAL)")
        conn.execute("INSERT INTO sales VALUES ('north', 1.5)")
    conn.close()
    return db


@pytest.mark.parametrize("url", [
    "sqlite:///{rel}", "sqlite:///{abs}", "sqlite+pysqlite:///{abs}", "sqlite:///{abs}?timeout=5",
    "duckdb:///{abs}", "{abs}",
])
def test_a_missing_database_file_is_refused_and_not_created(tmp_path, monkeypatch, url):
    monkeypatch.chdir(tmp_path)
    missing = tmp_path / "data" / "nope.db"
    missing.parent.mkdir()
    spec = url.format(rel="data/nope.db", abs=missing)
    with pytest.raises(SourceError) as info:
        open_source(spec)
    assert info.value.reason == "source_not_found" and info.value.hint
    assert "nope.db" in info.value.message
    assert list(missing.parent.iterdir()) == [], "nothing was created"


@pytest.mark.parametrize("form", ["url", "path", "query"])
def test_sqlite_files_are_opened_read_only(shop_db, form):
    spec = {"url": f"sqlite:///{shop_db}", "path": str(shop_db), "query": f"sqlite:///{shop_db}?timeout=5"}[form]
    before = shop_db.read_bytes()
    src = open_source(spec)
    try:
        # The engine itself refuses to write, not only our SQL guard.
        with src.engine.connect() as conn, pytest.raises(sqlalchemy.exc.OperationalError, match="readonly"):
            conn.execute(sqlalchemy.text("CREATE TABLE x (a INT)"))
        assert [t.name for t in src.list_tables()] == ["sales"]
    finally:
        src.close()
    assert shop_db.read_bytes() == before


def test_a_sqlite_url_to_something_else_is_refused(tmp_path):
    not_db = tmp_path / "notes.db"
    not_db.write_text("region,amount\nnorth,1\n" * 100)
    folder = tmp_path / "folder.db"
    folder.mkdir()
    for target in (not_db, folder):
        with pytest.raises(SourceError) as info:
            open_source(f"sqlite:///{target}")
        assert info.value.reason in ("source_unreadable", "source_not_found")
    assert not_db.read_text().startswith("region,amount")


def test_in_memory_databases_still_open():
    for spec in ("sqlite://", "sqlite:///:memory:", ":memory:", "duckdb:///:memory:"):
        src = open_source(spec)
        try:
            assert src.list_tables() == []
        finally:
            src.close()


def test_duckdb_file_is_read_only(sales_db):
    src = open_source(f"duckdb:///{sales_db}")
    try:
        with pytest.raises(duckdb.Error):
            src.cursor().execute("CREATE TABLE x (a INT)")
    finally:
        src.close()


def test_a_data_file_removed_after_opening_is_a_source_error(tmp_path):
    csv = tmp_path / "orders.csv"
    csv.write_text("id,amount\n1,2.5\n")
    folder = tmp_path / "lake"
    folder.mkdir()
    (folder / "events.csv").write_text("id\n1\n")
    for spec, gone in ((str(csv), csv), (str(folder), folder / "events.csv")):
        src = open_source(spec)
        try:
            gone.unlink()
            with pytest.raises(SourceError) as info:
                src.data_version()
            assert info.value.reason == "source_not_found" and gone.name in info.value.message
        finally:
            src.close()


def test_the_cli_refuses_a_missing_sqlite_file(tmp_path):
    (tmp_path / "data").mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run(
        [*CLI, "run", "--db", "sqlite:///data/nope.db", "--prompt", "hi", "--workspace", str(tmp_path / "ws")],
        env={**base, **MODEL}, cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: ") and "nope.db" in out.stderr and "Traceback" not in out.stderr
    assert list((tmp_path / "data").iterdir()) == []
