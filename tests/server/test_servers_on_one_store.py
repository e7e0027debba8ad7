"""Two Jupyter servers on one PostgreSQL store: a turn run through one is read through the other."""

from __future__ import annotations

from jupyter_analyst.testing import ScriptedModelServer, text_step
from jupyter_analyst.testing.servers.jupyter import servers_on_one_store

SCRIPT = {"turns": [{"steps": [text_step()]}]}


def test_a_turn_run_on_one_server_is_seen_whole_on_the_other(postgres, tmp_path, sales_db):
    url = postgres.new_database()
    with ScriptedModelServer(SCRIPT) as model, \
            servers_on_one_store(tmp_path, url, {"sales": str(sales_db)}, model.base_url) as (a, b):
            tid = a.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
            a.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "hello"},
                      raw=True, timeout=120)
            events = b.request(f"/analyst/api/threads/{tid}/events")["events"]
            listed = b.request("/analyst/api/threads")
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "turn_started" and events[-1]["type"] == "turn_ended"
    assert events[-1]["status"] == "completed"
    threads = listed["threads"] if isinstance(listed, dict) else listed
    assert tid in [t["thread_id"] for t in threads]
    assert not (tmp_path / "server0" / "ws" / "analyst.sqlite3").exists()
