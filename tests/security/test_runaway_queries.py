"""Runaway queries on a server: each stopped in its engine at its timeout, none holding up the
other turns.

Before the fix, a SQLite (or PostgreSQL) query past its timeout was reported stopped but ran
on in a thread of the event loop's default executor, which the store's writes share: six of
them froze every turn on the server until it restarted.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time

import pytest

from jupyter_analyst.events import parse_events
from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

ENDLESS = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT COUNT(*) AS n FROM r"
PLAIN = "SELECT COUNT(*) AS n, ROUND(SUM(amount), 2) AS total FROM orders"
TIMEOUT_S = 8.0
RUNAWAYS = 6
SCRIPT = {"turns": [
    {"match": "runaway", "steps": [{"tool_calls": [{"name": "run_sql", "arguments": {"sql": ENDLESS, "name": "r"}}]},
                                   {"content": "[scripted model] it ran away"}]},
    {"match": ".", "steps": [{"tool_calls": [{"name": "run_sql", "arguments": {"sql": PLAIN, "name": "totals"}}]},
                             {"content": "[scripted model] totals fetched"}]},
]}


@pytest.fixture
def shop(tmp_path):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE orders (id INTEGER, amount REAL)")
        con.executemany("INSERT INTO orders VALUES (?, ?)", [(i, i * 1.5) for i in range(1000)])
    return path


@pytest.fixture
def scripted():
    with ScriptedModelServer(SCRIPT) as server:
        yield server


@pytest.fixture
def jp_server_config(tmp_path, shop, scripted):
    return analyst_server_config(tmp_path / "ws", {"shop": f"sqlite:///{shop}"}, scripted.base_url,
                                 query_timeout=TIMEOUT_S)


async def _turn(jp_fetch, prompt: str) -> tuple[list[dict], float]:
    thread = json.loads((await jp_fetch("analyst", "api", "threads", method="POST",
                                        body=json.dumps({"source": "shop", "title": prompt}))).body)
    started = time.perf_counter()
    response = await jp_fetch("analyst", "api", "threads", thread["thread_id"], "turns", method="POST",
                              body=json.dumps({"prompt": prompt}), request_timeout=120)
    return parse_events(response.body.decode()), time.perf_counter() - started


@pytest.mark.serial  # an ordinary turn's time beside six runaway queries: on a machine not shared with another test
async def test_six_runaway_queries_are_stopped_and_other_turns_go_on(jp_fetch):
    runaways = [asyncio.create_task(_turn(jp_fetch, f"runaway {i}")) for i in range(RUNAWAYS)]
    # Once every runaway query is running (their threads are busy), another turn is asked.
    deadline = time.perf_counter() + TIMEOUT_S / 2
    while time.perf_counter() < deadline and _running_queries() < RUNAWAYS:
        await asyncio.sleep(0.05)
    assert _running_queries() == RUNAWAYS
    events, elapsed = await _turn(jp_fetch, "totals please")
    assert events[-1]["type"] == "turn_ended" and events[-1]["status"] == "completed"
    assert elapsed < TIMEOUT_S, f"an ordinary turn waited {elapsed:.1f} s behind the runaway queries"
    for events, elapsed in await asyncio.gather(*runaways):
        result = next(e for e in events if e["type"] == "tool_result")
        assert result["result"]["error"]["reason"] == "query_timeout", result["result"]["error"]
        assert elapsed < TIMEOUT_S + 4
    assert _running_queries() == 0, "every runaway query's thread let go: stopped in SQLite, not abandoned"


def _running_queries() -> int:
    """Threads of sources' own executors that are inside a query now."""
    import sys
    import threading

    frames = sys._current_frames()
    busy = 0
    for thread in threading.enumerate():
        if not thread.name.startswith("analyst-query"):
            continue
        frame = frames.get(thread.ident)
        while frame is not None and frame.f_code.co_name != "work":
            frame = frame.f_back
        busy += frame is not None
    return busy
