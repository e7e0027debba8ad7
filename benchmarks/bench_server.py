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
    """One thread, one streamed turn: (seconds, events streamed, events lost)."""
    thread = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})
    tid = thread["thread_id"]
    started = time.perf_counter()
    body = server.request(f"/analyst/api/threads/{tid}/turns", method="POST", body={"prompt": "revenue"}, raw=True,
                          timeout=300).decode()
    elapsed = time.perf_counter() - started
    streamed = parse_events(body)
    stored = server.request(f"/analyst/api/threads/{tid}/events")["events"]
    seqs = [e["seq"] for e in streamed]
    lost = len(stored) - len(seqs) + (0 if seqs == list(range(1, len(seqs) + 1)) else 1)
    assert streamed[-1]["type"] == "turn_ended", streamed[-1]
    return elapsed, len(streamed), lost


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
    report.note(f"{events_total} events streamed over {len(per_event)} turns, {lost_total} lost")
