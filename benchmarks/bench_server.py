"""N concurrent streamed turns against one server: lost events, and the server's latency per
event as a ratio to a plain ``GET /api/status`` measured in the same run."""

from __future__ import annotations

import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from jupyter_analyst.demo import build_sample_database
from jupyter_analyst.server.sse import parse_events
from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.testing.jupyter import JupyterServerProcess

from .common import Report

CONCURRENT = 8
SQL = "SELECT region_id, COUNT(*) AS n, SUM(revenue) AS revenue FROM orders GROUP BY region_id"
SCRIPT = {"turns": [{"steps": [
    {"content": "Looking at the tables first.", "tool_calls": [{"name": "list_tables", "arguments": {}}]},
    {"tool_calls": [{"name": "run_sql", "arguments": {"sql": SQL, "name": "by_region"}}]},
    {"content": "[scripted model] " + "Revenue is spread over five regions. " * 20},
]}]}


def _turn(server: JupyterServerProcess) -> tuple[float, int, int]:
    """One thread, one streamed turn: (seconds, events of the turn, events lost)."""
    thread = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})
    tid = thread["thread_id"]
    started = time.perf_counter()
    body = server.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "revenue"}, raw=True,
                          timeout=300).decode()
    elapsed = time.perf_counter() - started
    streamed = parse_events(body)
    stored = server.request(f"/analyst/api/threads/{tid}/events")["events"]
    assert streamed[-1]["type"] == "turn_ended", streamed[-1]
    seqs = [e["seq"] for e in streamed]
    assert seqs == sorted(set(seqs)), "no duplicate, in order"
    # Text deltas may arrive merged under backpressure; every other event must arrive as stored.
    solid = [e for e in stored if e["type"] != "text_delta"]
    got = [e for e in streamed if e["type"] != "text_delta"]
    lost = len(solid) - sum(1 for e in got if e in solid)
    text = "".join(e["text"] for e in stored if e["type"] == "text_delta")
    lost += 0 if "".join(e["text"] for e in streamed if e["type"] == "text_delta") == text else 1
    return elapsed, len(stored), lost


def bench_server(report: Report, *, rows: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp, ScriptedModelServer(SCRIPT) as model:
        root = Path(tmp)
        db = build_sample_database(root / "sales.duckdb")
        with JupyterServerProcess(root, sources={"sales": str(db)}, model_url=model.base_url) as server:
            status = []
            for _ in range(50):
                t0 = time.perf_counter()
                server.request("/api/status")
                status.append(time.perf_counter() - t0)
            per_event, lost_total, events_total = [], 0, 0
            for _ in range(max(1, repeat // 2)):
                with ThreadPoolExecutor(CONCURRENT) as pool:
                    results = list(pool.map(lambda _: _turn(server), range(CONCURRENT)))
                for elapsed, count, lost in results:
                    per_event.append(elapsed / count)
                    lost_total += lost
                    events_total += count
    report.add(f"server latency per streamed event, {CONCURRENT} concurrent turns", statistics.median(per_event),
               statistics.median(status), "GET /api/status")
    report.note(f"{events_total} events over {len(per_event)} turns, {lost_total} lost "
                "(text deltas may arrive merged; latency per event includes the scripted model and SQL)")
