"""A thread's kernel living across turns: time to the first Python result of turn 20 against
turn 2 of the same thread, through a real Jupyter server.

Each turn runs one small Python step that reads what the turn before made, so a kernel
restarted per turn would replay the whole thread (cost growing with its length); a live
kernel runs the step alone. Turn 1 starts the kernel (no warm pool) and is shown as
context. The summarizer is off: its background model call would overlap the next turn.
"""

from __future__ import annotations

import http.client
import json
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_analyst.cli.demo import build_sample_database
from jupyter_analyst.testing import ScriptedModelServer, python_step, text_step
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess

from .common import Report

TURNS = 20


def _code(n: int) -> str:
    return "v1 = 1\nprint(v1)" if n == 1 else f"v{n} = v{n - 1} + 1\nprint(v{n})"


SCRIPT = {"turns": [
    {"match": f"^turn {n}$", "steps": [python_step(_code(n)), text_step()]} for n in range(1, TURNS + 1)
]}


def _first_python_result(server: JupyterServerProcess, thread_id: str, prompt: str) -> float:
    """Seconds from sending the turn to its first Python step's result arriving on the stream."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    try:
        started = time.perf_counter()
        conn.request("POST", f"/analyst/api/threads/{thread_id}/turns", body=json.dumps({"prompt": prompt}),
                     headers={"Authorization": f"token {server.token}", "Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200, response.status
        first = None
        for line in response:  # read to the end: the turn is over before the next starts
            if first is None and line.startswith(b"data: "):
                event = json.loads(line[6:])
                if event["type"] == "tool_result" and event.get("tool") == "run_python":
                    first = time.perf_counter() - started
                    assert event["status"] == "ok", event
    finally:
        conn.close()
    assert first is not None, f"no Python result in {prompt!r}"
    return first


def bench_live(report: Report, *, rows: int, repeat: int) -> None:
    per_turn: dict[int, list[float]] = {n: [] for n in range(1, TURNS + 1)}
    with tempfile.TemporaryDirectory(prefix="bench-live-") as tmp, ScriptedModelServer(SCRIPT) as model:
        root = Path(tmp)
        db = build_sample_database(root / "sales.duckdb")
        extra = ["--AnalystApp.pool_size=0", "--AnalystApp.summarizer=False"]
        with JupyterServerProcess(root, sources={"sales": str(db)}, model_url=model.base_url, extra=extra) as server:
            for _ in range(max(2, repeat)):  # one thread per repetition: per-turn figures are noisy
                thread = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})
                for n in range(1, TURNS + 1):
                    per_turn[n].append(_first_python_result(server, thread["thread_id"], f"turn {n}"))
                kernel = server.request(f"/analyst/api/threads/{thread['thread_id']}")["kernel"]
                assert kernel is not None, "the thread's kernel did not live across its turns"
    first, second, last = (statistics.median(per_turn[n]) for n in (1, 2, TURNS))
    report.add(f"server: first Python result, turn {TURNS} of a thread", last, second, "turn 2 of the same thread")
    report.add("server: first Python result, turn 1 (starts the kernel)", first, second, "turn 2 of the same thread")
    early = statistics.median(x for n in range(2, 6) for x in per_turn[n])
    late = statistics.median(x for n in range(TURNS - 4, TURNS + 1) for x in per_turn[n])
    report.note(f"live kernels: {len(per_turn[1])} thread(s) of {TURNS} turns, each turn one Python step reading "
                "the turn before's variable; medians per turn number; no warm pool, summarizer off; "
                f"turns 2-5 {early:.4f}s, turns {TURNS - 4}-{TURNS} {late:.4f}s ({late / early:.2f}x)")
