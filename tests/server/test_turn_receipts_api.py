"""An answer's receipts through the API the panel reads: the ``turn_ended`` event and the
thread's turns carry its citations and unsupported numbers, kept with the turn in the store."""

from __future__ import annotations

import json

from jupyter_analyst.testing import sql_step

SQL = ("SELECT r.region, ROUND(SUM(o.revenue), 2) AS revenue FROM orders o "
       "JOIN regions r ON o.region_id = r.region_id GROUP BY r.region ORDER BY revenue DESC")
ANSWER = "Central leads with 192,506.67; West grew 37%."
SCRIPT = {"turns": [{"match": ".", "steps": [sql_step(SQL, "revenue"), {"content": ANSWER}]}]}


async def as_json(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = json.dumps(body)
    return json.loads((await jp_fetch("analyst", "api", *path, method=method, **kw)).body)


async def test_the_thread_and_its_turn_ended_event_carry_the_answers_receipts(jp_fetch, scripted):
    tid = (await as_json(jp_fetch, "threads", method="POST", body={"source": "sales"}))["thread_id"]
    await jp_fetch("analyst", "api", "threads", tid, "turns", method="POST", body=json.dumps({"prompt": "Who leads?"}),
                   request_timeout=120)
    (turn,) = (await as_json(jp_fetch, "threads", tid))["turns"]
    assert turn["answer"] == ANSWER
    events = (await as_json(jp_fetch, "threads", tid, "events"))["events"]
    (call_id,) = [e["call_id"] for e in events if e["type"] == "tool_call"]
    (artifact_id,) = [e["artifact_id"] for e in events if e["type"] == "artifact"]
    cited = [(c["text"], c["call_id"], c["artifact_id"], c["row"], c["column"]) for c in turn["citations"]]
    assert cited == [("Central", call_id, artifact_id, 0, "region"), ("192,506.67", call_id, artifact_id, 0, "revenue")]
    assert [(u["text"], u["start"], u["end"], u["kind"]) for u in turn["unsupported"]] == [("37%", 41, 44, "percent")]
    assert ANSWER[41:44] == "37%"
    (ended,) = [e for e in events if e["type"] == "turn_ended"]
    assert ended["citations"] == turn["citations"] and ended["unsupported"] == turn["unsupported"]
    # Told once: the answer, then the same answer after the check.
    assert len(scripted.requests) == 3
