"""Streams under load: many turns at once, each stream gets every event of its turn, in order."""

from __future__ import annotations

import asyncio
import json


from jupyter_analyst.events import parse_events

CONCURRENT = 8
SQL = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id"
SCRIPT = {"turns": [{"steps": [
    {"content": "Looking at the tables first.", "tool_calls": [{"name": "list_tables", "arguments": {}}]},
    {"tool_calls": [{"name": "run_sql", "arguments": {"sql": SQL, "name": "by_region"}}]},
    {"content": "[scripted model] " + "Revenue is spread over five regions. " * 10},
]}]}


async def _api(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = json.dumps(body)
    return await jp_fetch("analyst", "api", *path, method=method, request_timeout=300, **kw)


async def _one_turn(jp_fetch) -> tuple[list[dict], list[dict]]:
    thread = json.loads((await _api(jp_fetch, "threads", method="POST", body={"source": "sales"})).body)
    tid = thread["thread_id"]
    streamed = parse_events((await _api(jp_fetch, "threads", tid, "turns", method="POST",
                                        body={"prompt": "revenue"})).body.decode())
    stored = json.loads((await _api(jp_fetch, "threads", tid, "events", params={"after": 0})).body)["events"]
    return streamed, stored


async def test_every_stream_delivers_every_event_in_order_under_concurrent_turns(jp_fetch):
    results = await asyncio.gather(*(_one_turn(jp_fetch) for _ in range(CONCURRENT)))
    for streamed, stored in results:
        # Stored: numbered 1..N without a gap; the turn completed.
        assert [e["seq"] for e in stored] == list(range(1, len(stored) + 1))
        assert stored[0]["type"] == "turn_started" and stored[-1]["type"] == "turn_ended"
        assert stored[-1]["status"] == "completed"
        # Streamed: in order, nothing twice, up to the end; only text deltas may arrive merged.
        seqs = [e["seq"] for e in streamed]
        assert seqs == sorted(set(seqs)) and seqs[-1] == stored[-1]["seq"]
        assert [e for e in streamed if e["type"] != "text_delta"] == [e for e in stored if e["type"] != "text_delta"]
        text = "".join(e["text"] for e in stored if e["type"] == "text_delta")
        assert text and "".join(e["text"] for e in streamed if e["type"] == "text_delta") == text
