"""What survives a kill -9: every committed event and step; and, since each turn's end copies
the write-ahead log into the database file, every completed turn even when the -wal file is
deleted afterwards (an operator error that loses only the turn in flight)."""

from __future__ import annotations

import shutil
import threading

from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess
from jupyter_analyst.workspace import Workspace

SQL = "SELECT region, COUNT(*) AS n FROM regions GROUP BY region ORDER BY region"
SCRIPT = {"turns": [{"steps": [sql_step(SQL, "counts"), text_step()]}]}


def _what_survived(ws) -> dict:
    workspace = Workspace(ws)
    try:
        thread = workspace.store.list_threads()[0]
        turns = workspace.store.turns(thread.thread_id)
        return {
            "turns": [t.status for t in turns],
            "ended": [e.status for e in workspace.store.events(thread.thread_id) if e.type == "turn_ended"],
            "steps": [(s.tool, s.turn_id) for s in workspace.artifacts.steps(thread.thread_id)],
            "results": [e.turn_id for e in workspace.store.events(thread.thread_id) if e.type == "tool_result"],
            "turn_ids": [t.turn_id for t in turns],
            "datasets": len(workspace.artifacts.list(thread.thread_id, type="dataset")),
        }
    finally:
        workspace.close()


def test_kill_9_then_a_deleted_wal_keeps_every_completed_turn(tmp_path, sales_db):
    with ScriptedModelServer(SCRIPT) as model:
        server = JupyterServerProcess(tmp_path, sources={"sales": str(sales_db)}, model_url=model.base_url,
                                      extra=["--AnalystApp.summarizer=False", "--AnalystApp.pool_size=0"])
        server.start()
        try:
            tid = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
            # A whole turn: the request returns when it has ended.
            server.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "count"},
                           raw=True, timeout=120)
            # The next turn is held after its SQL step, when it asks the model what to do next.
            held, release = model.hold_requests(after=len(model.requests) + 1)
            threading.Thread(target=_quietly, args=(server, tid), daemon=True).start()
            assert held.wait(60), "the second turn did not reach its second model call"
            server.kill9()
        finally:
            server.stop()
    ws = tmp_path / "ws"
    kept_wal = tmp_path / "ws-with-wal"
    shutil.copytree(ws, kept_wal)

    # With the -wal file (as any restart finds it): nothing committed is lost.
    with_wal = _what_survived(kept_wal)
    assert with_wal["turns"] == ["completed", "running"]  # the next start marks it interrupted
    assert with_wal["results"] == with_wal["turn_ids"], "each turn's step result is there"

    # Without it: the completed turn is whole; only the turn in flight is gone.
    for suffix in ("-wal", "-shm"):
        (ws / f"analyst.sqlite3{suffix}").unlink(missing_ok=True)
    without = _what_survived(ws)
    assert without["turns"] == ["completed"]
    assert without["ended"] == ["completed"]
    assert without["steps"] == [("run_sql", without["turn_ids"][0])]
    assert without["results"] == without["turn_ids"]
    assert without["datasets"] == 1


def _quietly(server: JupyterServerProcess, tid: str) -> None:
    try:
        server.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "count again"},
                       raw=True, timeout=120)
    except Exception:
        pass  # the server is killed under this request
