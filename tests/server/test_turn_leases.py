"""Two Jupyter servers on one PostgreSQL store: a turn running on one is not cut by the
other, and a turn whose server was killed is closed as interrupted by the other once its
lease runs out, with the ``turn_ended`` its followers wait for."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest

from jupyter_analyst.testing import ScriptedModelServer, text_step
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess, servers_on_one_store

LEASE_S = 2.0
#: A bound on each wait below (a limit, not a wait: each ends when its condition holds).
LIMIT_S = 120
HOLD = "import time\ntime.sleep(600)"
SCRIPT = {"turns": [
    {"match": "^hold", "steps": [{"tool_calls": [{"name": "run_python", "arguments": {"code": HOLD}}]},
                                 {"content": "[scripted model] never reached"}]},
    {"steps": [text_step()]},
]}


def _stream(server: JupyterServerProcess, path: str, body: dict | None = None):
    """An SSE response of ``server`` (a POST with ``body``, else a GET), opened."""
    request = urllib.request.Request(
        server.url + path, method="POST" if body is not None else "GET",
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"token {server.token}", "Content-Type": "application/json",
                 "Accept": "text/event-stream"})
    return urllib.request.urlopen(request, timeout=LIMIT_S)


def _until(stream, done) -> list[dict]:
    """The stream's events up to the first for which ``done`` holds."""
    seen = []
    for line in stream:
        if line.startswith(b"data: "):
            seen.append(json.loads(line[6:]))
            if done(seen[-1]):
                return seen
    raise AssertionError(f"the stream ended first: {seen[-3:]}")


def _lease(url: str, turn_id: str) -> str:
    import psycopg

    with psycopg.connect(url) as conn:
        (until,) = conn.execute("SELECT lease_until FROM turns WHERE turn_id = %s", (turn_id,)).fetchone()
    return until


def test_a_live_turn_keeps_its_lease_and_a_killed_servers_turn_is_closed_by_another(postgres, tmp_path, sales_db):
    url = postgres.new_database()
    with ScriptedModelServer(SCRIPT) as model, \
            servers_on_one_store(tmp_path, url, {"sales": str(sales_db)}, model.base_url,
                                 extra=[f"--AnalystApp.turn_lease={LEASE_S}"]) as (a, b):
        tid = a.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
        held = _stream(a, f"/analyst/api/threads/{tid}/turns", {"prompt": "hold"})
        started = _until(held, lambda e: e["type"] == "tool_call")[0]
        assert started["type"] == "turn_started"
        turn_id = started["turn_id"]

        # A renews its turn's lease while the turn runs: seen to move on twice, past the
        # lease's own length, during which B's sweeps find nothing to cut.
        first = _lease(url, turn_id)
        seen = [first]
        deadline = time.monotonic() + LIMIT_S
        while len(set(seen)) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
            seen.append(_lease(url, turn_id))
        assert len(set(seen)) >= 3 and sorted(set(seen))[-1] > first
        assert [t["status"] for t in b.request(f"/analyst/api/threads/{tid}")["turns"]] == ["running"]

        # B does not start a second turn under A's living one (nor mark A's interrupted).
        with pytest.raises(urllib.error.HTTPError) as refused:
            b.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "again"}, raw=True)
        assert refused.value.code == 409
        assert json.loads(refused.value.read())["reason"] == "turn_in_progress"

        # A dies. B's follower of the thread gets the turn's end once the lease runs out.
        after = b.request(f"/analyst/api/threads/{tid}")["last_seq"]
        follower = _stream(b, f"/analyst/api/threads/{tid}/events?after={after}")
        a.kill9()
        killed = time.monotonic()
        ended = _until(follower, lambda e: e["type"] == "turn_ended")[-1]
        assert ended["turn_id"] == turn_id and ended["status"] == "interrupted"
        assert "lease" in ended["message"]
        assert time.monotonic() - killed >= LEASE_S / 3  # not before A could have renewed

        # The thread goes on, on B.
        body = b.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "go on"},
                         raw=True, timeout=LIMIT_S).decode()
        assert '"status": "completed"' in body or '"status":"completed"' in body
        turns = b.request(f"/analyst/api/threads/{tid}")["turns"]
        events = b.request(f"/analyst/api/threads/{tid}/events")["events"]
    assert [t["status"] for t in turns] == ["interrupted", "completed"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["type"] for e in events if e["turn_id"] == turn_id][-1] == "turn_ended"


def test_a_command_line_turn_on_a_shared_store_holds_a_lease_while_it_runs(postgres, tmp_path, sales_db):
    import asyncio

    from jupyter_analyst.events import TurnStarted
    from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
    from jupyter_analyst.store import ThreadBusy, ThreadStore

    url = postgres.new_database()
    other = ThreadStore(url)  # another process's view of the store

    async def scenario() -> None:
        running = asyncio.Event()
        seen: dict = {}

        def on_event(event) -> None:
            seen.setdefault("turn", event.turn_id)
            seen.setdefault("thread", event.thread_id)
            if event.type == "tool_call":
                running.set()

        with ScriptedModelServer(SCRIPT) as model:
            settings = ModelSettings(model="jupyter-analyst-scripted", base_url=model.base_url, api_key="x")
            config = AnalystConfig(workspace=tmp_path / "ws", store=url, summarizer=False, turn_lease_s=LEASE_S)
            task = asyncio.create_task(run_turn(TurnRequest(prompt="hold", source=str(sales_db)), config=config,
                                                model=settings, on_event=on_event))
            await running.wait()
            first = await asyncio.to_thread(_lease, url, seen["turn"])
            with pytest.raises(ThreadBusy):
                other.announce_turn(seen["thread"], "again", lambda t: TurnStarted(
                    thread_id=t.thread_id, turn_id=t.turn_id, prompt=t.prompt, model="m"), lease_s=LEASE_S)
            deadline = time.monotonic() + LIMIT_S
            while await asyncio.to_thread(_lease, url, seen["turn"]) == first and time.monotonic() < deadline:
                await asyncio.sleep(0.1)  # polls the row until the renewal shows
            assert await asyncio.to_thread(_lease, url, seen["turn"]) > first
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        assert [t.status for t in other.turns(seen["thread"])] == ["interrupted"]

    try:
        asyncio.run(scenario())
    finally:
        other.close()
