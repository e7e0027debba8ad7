"""Streamed turns against one Jupyter server, measured from the client's side.

* time to the first event: from sending ``POST .../turns`` to the first SSE frame, as a
  ratio to a plain ``GET /api/status`` (both on a new connection, as a browser would);
* delivery latency of every event: the client's clock when its frame arrived minus the
  event's own ``ts`` (set when the engine made it; same machine, same clock, millisecond
  resolution), p50 and p99 over all events of :data:`CONCURRENT` concurrent turns;
* events lost: every stored event must have arrived, in order (text deltas may arrive
  merged, so their text is compared as a whole).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from jupyter_analyst.cli.demo import build_sample_database
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess

from .common import Report

CONCURRENT = 16
SQL = "SELECT region_id, COUNT(*) AS n, SUM(revenue) AS revenue FROM orders GROUP BY region_id"
SCRIPT = {"turns": [{"steps": [
    {"content": "Looking at the tables first.", "tool_calls": [{"name": "list_tables", "arguments": {}}]},
    {"tool_calls": [{"name": "run_sql", "arguments": {"sql": SQL, "name": "by_region"}}]},
    {"content": "[scripted model] " + "Revenue is spread over five regions. " * 20},
]}]}


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def _connection(server: JupyterServerProcess) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)


def _headers(server: JupyterServerProcess) -> dict[str, str]:
    return {"Authorization": f"token {server.token}", "Content-Type": "application/json"}


def _status(server: JupyterServerProcess) -> float:
    """One ``GET /api/status`` on a new connection, in seconds."""
    conn = _connection(server)
    try:
        t0 = time.perf_counter()
        conn.request("GET", "/api/status", headers=_headers(server))
        conn.getresponse().read()
        return time.perf_counter() - t0
    finally:
        conn.close()


def _turn(server: JupyterServerProcess, tid: str | None = None, *, notebook: str | None = None) -> dict:
    """One streamed turn (on a new thread unless ``tid``, beside ``notebook`` when given),
    each frame timed as it arrives."""
    if tid is None:
        tid = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
    before = server.request(f"/analyst/api/threads/{tid}")["last_seq"]
    conn = _connection(server)
    frames: list[tuple[float, float, dict]] = []  # (perf_counter, time.time, event)
    try:
        sent = time.perf_counter()
        body = {"prompt": "revenue", **({"notebook": notebook} if notebook else {})}
        conn.request("POST", f"/analyst/api/threads/{tid}/turns", body=json.dumps(body), headers=_headers(server))
        resp = conn.getresponse()
        data: list[str] = []
        while line := resp.readline():
            text = line.decode().rstrip("\r\n")
            if text.startswith("data: "):
                data.append(text[6:])
            elif not text and data:
                frames.append((time.perf_counter(), time.time(), json.loads("\n".join(data))))
                data = []
    finally:
        conn.close()
    streamed = [e for _, _, e in frames]
    stored = server.request(f"/analyst/api/threads/{tid}/events?after={before}")["events"]
    assert streamed and streamed[-1]["type"] == "turn_ended", streamed[-1:]
    seqs = [e["seq"] for e in streamed]
    assert seqs == sorted(set(seqs)), "no duplicate, in order"
    # What the stream carries: the turn's events up to its end (the summarizer's come after).
    stored = [e for e in stored if e["seq"] <= seqs[-1]]
    solid = [e for e in stored if e["type"] != "text_delta"]
    got = [e for e in streamed if e["type"] != "text_delta"]
    lost = sum(1 for e in solid if e not in got)
    text = "".join(e["text"] for e in stored if e["type"] == "text_delta")
    lost += 0 if "".join(e["text"] for e in streamed if e["type"] == "text_delta") == text else 1
    return {
        "thread": tid,
        "first": frames[0][0] - sent,
        "latencies": [wall - _epoch(e["ts"]) for _, wall, e in frames],
        "events": len(stored),
        "lost": lost,
    }


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@contextlib.contextmanager
def _scripted_model(folder: Path, script: dict | None = None) -> Iterator[str]:
    """The scripted model (``script``, else this benchmark's) in a process of its own (so
    its work does not share this client's interpreter, whose clock times the events);
    yields its base URL."""
    path = folder / "script.json"
    path.write_text(json.dumps(script or SCRIPT))
    proc = subprocess.Popen([sys.executable, "-m", "jupyter_analyst.cli", "scripted-model", "--script", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "serving at " not in line:
            raise RuntimeError(f"the scripted model did not start: {line!r}")
        yield line.rsplit("serving at ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def bench_server(report: Report, *, rows: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp, _scripted_model(Path(tmp)) as model_url:
        root = Path(tmp)
        db = build_sample_database(root / "sales.duckdb")
        with JupyterServerProcess(root, sources={"sales": str(db)}, model_url=model_url) as server:
            _turn(server)  # warm-up: the first SQL checker, imports on first use
            status = [_status(server) for _ in range(50)]
            singles = [_turn(server) for _ in range(max(3, repeat))]
            # The next turn of a thread that exists (its source known, its history stored).
            nexts = [_turn(server, r["thread"]) for r in singles]
            loaded: list[dict] = []
            for _ in range(max(1, repeat // 2)):
                with ThreadPoolExecutor(CONCURRENT) as pool:
                    loaded += list(pool.map(lambda _: _turn(server), range(CONCURRENT)))
            status_loaded = statistics.median(status)
    first = statistics.median(r["first"] for r in singles)
    report.add("server: time to first event, first turn of a thread", first, status_loaded, "GET /api/status")
    report.add("server: time to first event, next turn of a thread", statistics.median(r["first"] for r in nexts),
               status_loaded, "GET /api/status")
    latencies = [x for r in loaded for x in r["latencies"]]
    report.add(f"server: time to first event, {CONCURRENT} concurrent turns",
               statistics.median(r["first"] for r in loaded), status_loaded, "GET /api/status")
    report.add(f"server: event delivery latency p50, {CONCURRENT} concurrent turns", _percentile(latencies, 0.5),
               status_loaded, "GET /api/status")
    report.add(f"server: event delivery latency p99, {CONCURRENT} concurrent turns", _percentile(latencies, 0.99),
               status_loaded, "GET /api/status")
    lost = sum(r["lost"] for r in loaded + singles + nexts)
    events = sum(r["events"] for r in loaded + singles + nexts)
    single = [x for r in singles for x in r["latencies"]]
    report.note(f"server: {events} events over {len(loaded) + len(singles) + len(nexts)} turns, {lost} lost; one turn alone: "
                f"latency p50 {_percentile(single, 0.5) * 1e3:.1f} ms, p99 {_percentile(single, 0.99) * 1e3:.1f} ms "
                "(latency = client clock at arrival - the event's ts, which has millisecond resolution)")
