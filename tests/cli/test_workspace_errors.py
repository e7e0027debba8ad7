"""A read-only or full workspace: one clear line, exit status 2, and nothing half-written.

Root ignores file modes, so the workspace is made read-only (a read-only bind mount) or full
(a small tmpfs) for real, in a mount namespace of its own that vanishes with the process.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare(1) for private mounts"
)

SMALL = "SELECT region FROM regions ORDER BY region"
BIG = "SELECT a, b FROM noise"
SCRIPT = {"turns": [
    {"match": "^big", "steps": [sql_step(BIG, "noise_df"), text_step()]},
    {"match": ".", "steps": [sql_step(SMALL, "regions_df"), text_step()]},
]}

#: Runs inside ``unshare -m``: sets up the mounts it is given, then the CLI commands, and
#: prints what each did as JSON.
DRIVER = r"""
import json, os, subprocess, sys
plan = json.loads(sys.argv[1])
for mount in plan["mounts"]:
    subprocess.run(mount, check=True)
out = []
for step in plan["steps"]:
    if step[0] == "fill":
        # Fill the file system: write until it refuses.
        fd = os.open(step[1], os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 65536):
                pass
        except OSError:
            pass
        os.close(fd)
        out.append(None)
        continue
    if step[0] == "free":
        os.unlink(step[1])
        out.append(None)
        continue
    run = subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", *step], capture_output=True, text=True,
                         timeout=300)
    out.append({"rc": run.returncode, "stdout": run.stdout, "stderr": run.stderr})
if plan.get("inspect"):
    import sqlite3
    ws = plan["inspect"]
    db = sqlite3.connect(os.path.join(ws, "analyst.sqlite3"))
    check = db.execute("PRAGMA integrity_check").fetchone()[0]
    turns = db.execute("SELECT number, status FROM turns ORDER BY number").fetchall()
    db.close()
    leftovers = [os.path.relpath(os.path.join(d, f), ws) for d, _, files in os.walk(ws) for f in files
                 if f.startswith((".tmp-", ".nb-", ".q-")) or f.endswith(".parquet") and ".incoming" in d]
    out.append({"integrity": check, "turns": turns, "leftovers": leftovers})
print(json.dumps(out))
"""


def in_namespace(plan: dict, env: dict[str, str]) -> list:
    run = subprocess.run(["unshare", "-m", sys.executable, "-c", DRIVER, json.dumps(plan)],
                         env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def one_clear_line(result: dict, phrase: str) -> None:
    assert result["rc"] == 2, result
    lines = result["stderr"].splitlines()
    assert lines and lines[0].startswith(f"error: {phrase}"), result["stderr"]
    assert "Traceback" not in result["stderr"] and len(lines) <= 2, result["stderr"]


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def model():
    with ScriptedModelServer(SCRIPT) as server:
        yield {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"}


def test_a_read_only_workspace(tmp_path, sales_db, model):
    ws = tmp_path / "ws"
    first = subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", "run", "--db", str(sales_db), "--prompt",
                            "regions", "--workspace", str(ws), "--json", "--no-summarizer"],
                           env={**os.environ, **model}, capture_output=True, text=True, timeout=300)
    assert first.returncode == 0, first.stderr
    thread = json.loads(first.stdout)["thread_id"]
    locked = tmp_path / "locked"
    locked.mkdir()
    writable = tmp_path / "writable-copy"
    shutil.copytree(ws, writable)
    before = tree_digest(ws)
    read_only = lambda path: [["mount", "--bind", str(path), str(path)],  # noqa: E731
                              ["mount", "-o", "remount,bind,ro", str(path)]]
    results = in_namespace({
        "mounts": read_only(ws) + read_only(locked),
        "steps": [
            ["run", "--thread", thread, "--prompt", "regions again", "--workspace", str(ws), "--json"],
            ["run", "--db", str(sales_db), "--prompt", "regions", "--workspace", str(locked / "new")],
            ["threads", "--workspace", str(ws)],
            ["export", "--thread", thread, "-o", str(locked / "audit.ipynb"), "--workspace", str(writable)],
        ],
    }, model)
    turn, fresh, listing, export = results
    one_clear_line(turn, f"workspace is read-only: {ws}")
    assert json.loads(turn["stdout"])["error"]["reason"] == "workspace_read_only"
    one_clear_line(fresh, f"workspace is read-only: {locked / 'new'}")
    one_clear_line(listing, f"workspace is read-only: {ws}")
    one_clear_line(export, f"cannot write {locked / 'audit.ipynb'}: the file system is read-only")
    assert tree_digest(ws) == before, "nothing in the workspace changed"
    assert list(locked.iterdir()) == []


def test_a_full_workspace(tmp_path, sales_db, model):
    big = tmp_path / "big.duckdb"
    with duckdb.connect(str(big)) as con:
        con.execute("CREATE TABLE regions AS SELECT * FROM range(3) t(region)")
        # Random doubles do not compress: ~16 MB of Parquet, on a 4 MB file system.
        con.execute("CREATE TABLE noise AS SELECT random() AS a, random() AS b FROM range(1000000)")
    full = tmp_path / "full"
    full.mkdir()
    ws = full / "ws"
    common = ["--workspace", str(ws), "--no-summarizer", "--json"]
    results = in_namespace({
        "mounts": [["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(full)]],
        "steps": [
            ["run", "--db", str(big), "--prompt", "regions", *common],
            ["run", "--db", str(big), "--prompt", "big table", *common],
            ["fill", str(full / "filler")],
            ["run", "--db", str(big), "--prompt", "regions", *common],
            ["free", str(full / "filler")],
        ],
        "inspect": str(ws),
    }, model)
    first, mid_turn, _, no_room, _, state = results
    assert first["rc"] == 0, first["stderr"]
    # The query's result did not fit: the turn stops with one line, not a retry loop.
    one_clear_line(mid_turn, f"no space left in {ws}")
    assert json.loads(mid_turn["stdout"])["error"]["reason"] == "workspace_full"
    one_clear_line(no_room, f"no space left in {ws}")
    # Nothing half-written: the database is whole, the first turn intact, no temporary files.
    assert state["integrity"] == "ok"
    assert state["turns"][0] == [1, "completed"]
    assert all(status != "running" or number == len(state["turns"]) for number, status in state["turns"])
    assert state["leftovers"] == []
