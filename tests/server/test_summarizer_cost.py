"""The end-of-turn summarizer's call, through the API the panel reads: told on the ``memory``
event after the turn's end, and added, apart, to the turn's stored ledger and the thread's
sum. The panel's footer counts it from that event (src/components/TurnCost.tsx): the figure
the event carries is the one the stored turn keeps."""

from __future__ import annotations

import json

import pytest

from jupyter_analyst.testing import MODEL_NAME
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

SQL = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id"
USED = {"prompt_tokens": 2000, "completion_tokens": 100}
SUMMARY_USED = {"prompt_tokens": 800, "completion_tokens": 40}
SCRIPT = {
    "turns": [{"match": ".", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": SQL, "name": "revenue"}}], "usage": USED},
        {"content": "[scripted model] revenue by region", "usage": USED},
    ]}],
    "summarizer": [{"match": ".", "steps": [{"content": "{}", "usage": SUMMARY_USED}]}],
}
#: USD per million prompt / completion tokens.
PRICE = {"prompt": 0.5, "completion": 4.0}
CALL = (2000 * 0.5 + 100 * 4.0) / 1e6
SUMMARY_CALL = (800 * 0.5 + 40 * 4.0) / 1e6


@pytest.fixture
def jp_server_config(tmp_path, sales_db, scripted):
    return analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, scripted.base_url,
                                 prices={MODEL_NAME: PRICE}, summarizer=True)


async def as_json(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = json.dumps(body)
    return json.loads((await jp_fetch("analyst", "api", *path, method=method, **kw)).body)


async def test_the_summarizers_call_is_told_after_the_turn_and_kept_apart_in_its_ledger(jp_fetch, jp_serverapp):
    tid = (await as_json(jp_fetch, "threads", method="POST", body={"source": "sales"}))["thread_id"]
    await jp_fetch("analyst", "api", "threads", tid, "turns", method="POST",
                   body=json.dumps({"prompt": "Revenue by region"}), request_timeout=120)
    # The summarizer runs after the turn's end, off the hot path: its work is awaited here.
    await jp_serverapp.web_app.settings["jupyter_analyst"].background.drain()

    events = (await as_json(jp_fetch, "threads", tid, "events"))["events"]
    types = [e["type"] for e in events]
    assert types.index("memory") > types.index("turn_ended")
    (ended,) = [e["ledger"] for e in events if e["type"] == "turn_ended"]
    (memory,) = [e for e in events if e["type"] == "memory"]
    summary = {"calls": 1, **SUMMARY_USED, "counted_by": "server", "cost_usd": pytest.approx(SUMMARY_CALL)}
    # The turn's end counts the answer's two calls; the summarizer's one comes on its own event.
    assert ended["usage"]["calls"] == 2 and ended["summarizer"]["calls"] == 0
    assert memory["status"] == "applied" and memory["usage"] == summary

    thread = await as_json(jp_fetch, "threads", tid)
    (turn,) = thread["turns"]
    assert turn["ledger"]["usage"] == {**ended["usage"], "cost_usd": pytest.approx(2 * CALL)}
    assert turn["ledger"]["summarizer"] == summary
    assert thread["ledger"]["summarizer"] == summary and thread["ledger"]["usage"]["calls"] == 2
