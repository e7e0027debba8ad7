"""``jupyter analyst threads``: list, rename, delete, through the real command line."""

from __future__ import annotations

import json
from jupyter_analyst.testing import sql_step as sql, text_step as say

from .test_cli import run_cli


def listed(workspace) -> list[dict]:
    out = run_cli("threads", "--json", "--workspace", str(workspace))
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_thread_is_listed_by_its_first_question_renamed_and_deleted(analyst, tmp_path):
    a = analyst({"turns": [{"steps": [sql("SELECT COUNT(*) AS n FROM orders", "order_count"), say("`order_count`")]}]})
    thread = a.run("How many orders are there?").thread_id
    workspace = tmp_path / "ws"
    assert [(t["thread_id"], t["title"]) for t in listed(workspace)] == [(thread, "How many orders are there?")]

    out = run_cli("threads", "--rename", thread, "Order count", "--workspace", str(workspace))
    assert out.returncode == 0, out.stderr
    assert [t["title"] for t in listed(workspace)] == ["Order count"]
    out = run_cli("threads", "--rename", thread, "  ", "--workspace", str(workspace))
    assert out.returncode == 2 and "error: the title is blank" in out.stderr

    out = run_cli("threads", "--delete", thread, "--workspace", str(workspace))
    assert out.returncode == 0, out.stderr
    assert f"deleted {thread} and its 1 artifact" in out.stderr
    assert listed(workspace) == []
    assert not (workspace / "threads" / thread).exists()
    out = run_cli("threads", "--delete", thread, "--workspace", str(workspace))
    assert out.returncode == 2 and f"unknown thread '{thread}'" in out.stderr


def test_a_thread_with_a_turn_marked_running_is_kept_unless_forced(tmp_path):
    from jupyter_analyst.workspace import Workspace

    workspace = Workspace(tmp_path / "ws")
    thread = workspace.store.create_thread(source="x")
    workspace.store.start_turn(thread.thread_id, "still going?")
    workspace.close()
    out = run_cli("threads", "--delete", thread.thread_id, "--workspace", str(tmp_path / "ws"))
    assert out.returncode != 0 and "marked running" in out.stderr and "--force" in out.stderr
    assert [t["thread_id"] for t in listed(tmp_path / "ws")] == [thread.thread_id]
    out = run_cli("threads", "--delete", thread.thread_id, "--force", "--workspace", str(tmp_path / "ws"))
    assert out.returncode == 0, out.stderr
    assert listed(tmp_path / "ws") == []
