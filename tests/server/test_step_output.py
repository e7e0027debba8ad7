"""A running step's prints reach a client while it runs and stay with the thread when the
user stops the turn (a real Jupyter server, kernel and scripted model)."""

from __future__ import annotations

import asyncio
import json


SLOW = "import time\nprint('loaded 3 files', flush=True)\ntime.sleep(60)\nprint('never printed')"
SCRIPT = {"turns": [{"steps": [{"tool_calls": [{"name": "run_python", "arguments": {"code": SLOW}}]},
                               {"content": "[scripted model] done"}]}]}


async def as_json(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = json.dumps(body)
    return json.loads((await jp_fetch("analyst", "api", *path, method=method, **kw)).body)


async def test_what_a_step_printed_is_shown_while_it_runs_and_kept_after_stop(jp_fetch):
    tid = (await as_json(jp_fetch, "threads", method="POST", body={"source": "sales"}))["thread_id"]
    turn = asyncio.ensure_future(jp_fetch("analyst", "api", "threads", tid, "turns", method="POST",
                                          body=json.dumps({"prompt": "load the files"}), request_timeout=120))
    printed: list[dict] = []
    for _ in range(600):  # until the step's first print has been told (bounded)
        events = (await as_json(jp_fetch, "threads", tid, "events"))["events"]
        printed = [e for e in events if e["type"] == "step_output"]
        if printed:
            break
        await asyncio.sleep(0.05)
    assert printed and printed[0]["text"] == "loaded 3 files\n"
    assert not any(e["type"] == "tool_result" for e in events), "told while the step still runs"

    assert await as_json(jp_fetch, "threads", tid, "cancel", method="POST", body={}) == {"cancelled": True}
    await turn
    events = (await as_json(jp_fetch, "threads", tid, "events"))["events"]
    assert events[-1]["type"] == "turn_ended" and events[-1]["status"] == "interrupted"
    kept = "".join(e["text"] for e in events if e["type"] == "step_output")
    assert kept == "loaded 3 files\n"
