"""The first question of a server, from the client's side: how long the panel shows nothing
but "Working…", and how long until the first step.

A new Jupyter server (the extension on the bundled sample data, the lab demo's scripted
model: SQL -> table, Python chart, answer; its default warm pool of one kernel) is asked
its first question in the two ways a user asks it:

* ``at once``: the question is the API's first request (the page was open before the server
  restarted, say): the engine is still to be imported;
* ``panel opened``: the panel opens (``GET /analyst/api/config``, which waits for the engine),
  then a thread is made and asked at once;
* ``typed for 8 s``: the panel opens, and the question comes :data:`TYPING_S` later, as a
  person types it (what the panel's opening starts has had that long).

Timed from sending ``POST .../turns``: the first frame that says more than "Working…" (the
first ``starting`` frame, else the first ``state``: what the panel's status line shows), and
the first step (the first ``tool_call`` of ``run_sql`` or ``run_python``: a card). The floor is
the same question asked again on a new thread of the same server (everything started).
``BEFORE`` holds the figures of the code before the turn told what starts and the engine's
import began the SQL checker and the first turn's imports (commit 6117ef9, measured the same
way on the same machine: the first of two runs, the second slower, 6.8 s and 9.1 s asked at
once, 3.4 s and 6.8 s with the panel opened; the first status was then the first state).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from jupyter_analyst.cli.demo import build_sample_database
from jupyter_analyst.cli.lab import LAB_SCRIPT
from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess

from .common import Report

PROMPT = "Revenue by region per month, with a chart"
STEPS = ("run_sql", "run_python")

#: Seconds, at commit 6117ef9 (before): (first status, first step) per way of asking.
BEFORE: dict[str, tuple[float, float]] = {
    "at once": (3.62, 5.84),
    "panel opened": (2.80, 4.96),
    "typed for 8 s": (3.35, 5.54),
}
#: Seconds between the panel's opening and the question, for ``typed for 8 s``.
TYPING_S = 8.0


@contextlib.contextmanager
def _server(root: Path) -> Iterator[JupyterServerProcess]:
    db = build_sample_database(root / "sales.duckdb")
    with ScriptedModelServer(json.loads(LAB_SCRIPT.read_text())) as model:
        server = JupyterServerProcess(root / "srv", sources={"sales": str(db)}, model_url=model.base_url)
        server.start(timeout=120)
        try:
            yield server
        finally:
            server.stop()


def first_turn(server: JupyterServerProcess) -> dict[str, float | None]:
    """One streamed turn on a new thread: seconds to its first status and its first step,
    and to its end; what the first status said."""
    tid = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    status = step = None
    said = ""
    try:
        sent = time.perf_counter()
        conn.request("POST", f"/analyst/api/threads/{tid}/turns", body=json.dumps({"prompt": PROMPT}),
                     headers={"Authorization": f"token {server.token}", "Content-Type": "application/json"})
        resp = conn.getresponse()
        while line := resp.readline():
            if not line.startswith(b"data: "):
                continue
            event = json.loads(line[6:])
            now = time.perf_counter() - sent
            if status is None and event["type"] in ("starting", "state"):
                status, said = now, event.get("message") or event.get("to_state", "")
            if step is None and event["type"] == "tool_call" and event["tool"] in STEPS:
                step = now
            if event["type"] == "turn_ended":
                return {"status": status, "step": step, "end": now, "said": said}  # type: ignore[dict-item]
    finally:
        conn.close()
    raise RuntimeError("the turn's stream ended before the turn did")


def measure(way: str) -> tuple[dict, dict]:
    """The first turn of a new server asked ``way``, and a second (the floor)."""
    with tempfile.TemporaryDirectory(prefix="bench-first-") as tmp, _server(Path(tmp)) as server:
        if way != "at once":
            server.request("/analyst/api/config", timeout=120)
        if way == "typed for 8 s":
            time.sleep(TYPING_S)  # the person, not a wait for the server
        first = first_turn(server)
        again = first_turn(server)
    return first, again


def bench_first_turn(report: Report, *, rows: int, repeat: int) -> None:
    for way in BEFORE:
        runs = [measure(way) for _ in range(max(1, min(repeat, 3)))]
        first = sorted(runs, key=lambda r: r[0]["step"] or 0)[len(runs) // 2]
        print(f"first turn, {way}: {first[0]}; again: {first[1]}", flush=True)
        before_status, before_step = BEFORE[way]
        report.add(f"first question ({way}): to the first status", first[0]["status"] or 0.0,
                   first[1]["status"] or 0.0, "the same question on a new thread", "s",
                   peer=before_status, peer_name="before (6117ef9)")
        report.add(f"first question ({way}): to the first step", first[0]["step"] or 0.0,
                   first[1]["step"] or 0.0, "the same question on a new thread", "s",
                   peer=before_step, peer_name="before (6117ef9)")
