"""Sources are stored as absolute paths, so threads and exports work from any folder."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from jupyter_analyst.sql import absolute_spec, display_spec
from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step

CLI = [sys.executable, "-m", "jupyter_analyst.cli"]


@pytest.mark.parametrize(("typed", "stored"), [
    ("sales.duckdb", "/work/a/sales.duckdb"),
    ("./data/../sales.duckdb", "/work/a/sales.duckdb"),
    ("data/", "/work/a/data"),
    ("/srv/sales.duckdb", "/srv/sales.duckdb"),
    ("duckdb:///sales.duckdb", "duckdb:////work/a/sales.duckdb"),
    ("sqlite:///shop.db", "sqlite:////work/a/shop.db"),
    ("sqlite+pysqlite:///db/shop.db?timeout=5", "sqlite+pysqlite:////work/a/db/shop.db?timeout=5"),
    ("sqlite:////srv/shop.db", "sqlite:////srv/shop.db"),
    ("sqlite://", "sqlite://"),
    ("sqlite:///:memory:", "sqlite:///:memory:"),
    (":memory:", ":memory:"),
    ("duckdb:///:memory:", "duckdb:///:memory:"),
    ("postgresql://ann:s3cret@db.example:5432/shop", "postgresql://ann:s3cret@db.example:5432/shop"),
])
def test_what_is_stored(typed, stored):
    assert absolute_spec(typed, base=Path("/work/a")) == stored


def test_home_is_expanded(monkeypatch):
    monkeypatch.setenv("HOME", "/home/ann")
    assert absolute_spec("~/sales.duckdb", base=Path("/elsewhere")) == "/home/ann/sales.duckdb"


@pytest.mark.parametrize(("stored", "shown"), [
    ("/work/a/sales.duckdb", "sales.duckdb"),
    ("/work/a/data/x.csv", "data/x.csv"),
    ("/work/b/sales.duckdb", "/work/b/sales.duckdb"),
    ("sqlite:////work/a/shop.db", "sqlite:///shop.db"),
    ("sqlite:////srv/shop.db", "sqlite:////srv/shop.db"),
    ("postgresql://ann@db/shop", "postgresql://ann@db/shop"),
    (":memory:", ":memory:"),
])
def test_what_is_shown(stored, shown):
    assert display_spec(stored, base=Path("/work/a")) == shown


def _cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=300)


SQL = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY region"


def test_a_thread_and_its_export_work_from_another_folder(tmp_path, monkeypatch):
    project, elsewhere, reviewer = tmp_path / "project", tmp_path / "elsewhere", tmp_path / "reviewer"
    for folder in (project, elsewhere, reviewer):
        folder.mkdir()
    with sqlite3.connect(project / "shop.db") as conn:
        conn.execute("CREATE TABLE sales (region TEXT, amount REAL)")
        conn.executemany("INSERT INTO sales VALUES (?, ?)", [("north", 1.5), ("south", 2.0), ("north", 3.0)])
    conn.close()
    workspace = tmp_path / "ws"
    script = {"turns": [{"steps": [sql_step(SQL, "totals"), text_step()]}]}
    with ScriptedModelServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}
        common = ("--workspace", str(workspace), "--json", "--no-summarizer")
        first = _cli("run", "--db", "sqlite:///shop.db", "--prompt", "totals", *common, cwd=project, env=env)
        assert first.returncode == 0, first.stderr
        thread = json.loads(first.stdout)["thread_id"]
        again = _cli("run", "--thread", thread, "--prompt", "totals again", *common, cwd=elsewhere, env=env)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["tool_calls"]["reused"] == 1
    listed = json.loads(_cli("threads", "--workspace", str(workspace), "--json", cwd=elsewhere, env={}).stdout)
    assert listed[0]["source"] == f"sqlite:///{project / 'shop.db'}"
    # Shown relative where that is shorter and still right.
    shown = _cli("threads", "--workspace", str(workspace), cwd=project, env={}).stdout
    assert "sqlite:///shop.db" in shown
    exported = _cli("export", "--thread", thread, "-o", str(reviewer / "audit.ipynb"),
                    "--workspace", str(workspace), cwd=elsewhere, env={})
    assert exported.returncode == 0, exported.stderr
    nb = nbformat.read(reviewer / "audit.ipynb", as_version=4)
    assert nb.metadata["jupyter_analyst"]["source"] == f"sqlite:///{project / 'shop.db'}"
    # The reviewer checks it from their own folder, naming the source as the summary shows
    # it; the sandboxed kernel is shown the SQLite file the URL names.
    from jupyter_analyst.notebooks.verify import verify_notebook

    shutil.rmtree(elsewhere)
    monkeypatch.chdir(reviewer)
    report = verify_notebook(Path("audit.ipynb"), source=nb.metadata["jupyter_analyst"]["source"])
    assert report.ok, report.to_json()
    assert report.source == f"sqlite:///{project / 'shop.db'}"
