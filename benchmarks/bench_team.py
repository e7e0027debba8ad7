"""A team's load: several Jupyter server processes on one PostgreSQL store, many threads at once.

Each of :data:`THREADS` threads runs one scripted turn (an SQL step, a Python step in the
thread's own kernel, an answer) at the same time, spread over :data:`PROCESSES` server
processes sharing one PostgreSQL database; the same turns on one process with its own
SQLite file are the floor. Every turn is read twice, as clients do: the stream of the
``POST .../turns`` on the process running it, and ``GET .../events`` as a stream on
another process (which hears the turn through LISTEN/NOTIFY; on SQLite, the same process).

* throughput: turns completed per minute of the whole batch;
* delivery latency of every event: the client's clock at its frame minus the event's
  ``ts`` (same machine, millisecond resolution), p50 and p99, for both streams;
* events lost and duplicated: the store's events of each turn must be numbered 1..N with
  no gap, and each stream must carry them in order, once each (text deltas may arrive
  merged: their text is compared as a whole). Any loss fails the benchmark.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_analyst.cli.demo import build_sample_database
from jupyter_analyst.testing import python_step, sql_step
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess
from jupyter_analyst.testing.streams import Frame, read_stream

from .bench_server import _epoch, _percentile, _scripted_model
from .common import Report

PROCESSES, THREADS = 4, 32
QUICK_PROCESSES, QUICK_THREADS = 2, 4
SQL = "SELECT region_id, COUNT(*) AS n, SUM(revenue) AS revenue FROM orders GROUP BY region_id"
SCRIPT = {"turns": [{"steps": [
    sql_step(SQL, "by_region"),
    python_step("print('total', round(by_region.revenue.sum(), 2))"),
    {"content": "[scripted model] " + "Revenue is spread over five regions. " * 10},
]}]}
#: The servers' settings besides the store: the kernel pool and caps are the defaults (one
#: warm kernel per process; 32 kernels kept, 8 per user); no summarizer, so each turn is
#: exactly its own events.
SETTINGS = ["--AnalystApp.summarizer=False"]
#: How long a turn is followed on another process before its stream counts as cut.
WATCH_S = 240.0


@dataclass
class TurnResult:
    thread: str
    stored: list[dict[str, Any]]
    own: list[Frame]
    other: list[Frame]
    problems: list[str] = field(default_factory=list)


def stream_problems(stored: list[dict[str, Any]], frames: list[Frame], label: str) -> list[str]:
    """What ``frames`` (one turn's stream) lost or duplicated of the turn's ``stored`` events.

    >>> ev = [{"seq": 1, "type": "turn_started"}, {"seq": 2, "type": "text_delta", "text": "a"},
    ...       {"seq": 3, "type": "text_delta", "text": "b"}, {"seq": 4, "type": "turn_ended"}]
    >>> merged = [Frame("1", ev[0], 0), Frame("3", {**ev[2], "text": "ab"}, 0), Frame("4", ev[3], 0)]
    >>> stream_problems(ev, merged, "s")
    []
    >>> stream_problems(ev, [merged[0], merged[2], merged[2]], "s")
    ['s: seq 4 twice or out of order', 's: text differs from the store']
    """
    problems: list[str] = []
    seqs = [f.event["seq"] for f in frames]
    for before, after in zip(seqs, seqs[1:]):
        if after <= before:
            problems.append(f"{label}: seq {after} twice or out of order")
    if [f.id for f in frames] != [str(s) for s in seqs]:
        problems.append(f"{label}: a frame's id is not its event's seq")
    streamed = {f.event["seq"]: f.event for f in frames}
    for event in stored:
        if event["type"] != "text_delta" and streamed.get(event["seq"]) != event:
            problems.append(f"{label}: {event['type']} {event['seq']} lost")
    if "".join(e["text"] for e in stored if e["type"] == "text_delta") != \
            "".join(f.event["text"] for f in frames if f.event["type"] == "text_delta"):
        problems.append(f"{label}: text differs from the store")
    return problems


def store_problems(stored: list[dict[str, Any]]) -> list[str]:
    """A turn's events as stored: numbered 1..N without gaps, one start, one end (completed)."""
    problems = []
    if [e["seq"] for e in stored] != list(range(1, len(stored) + 1)):
        problems.append("store: seq not 1..N")
    types = [e["type"] for e in stored]
    if types.count("turn_started") != 1 or types.count("turn_ended") != 1 or types[-1] != "turn_ended":
        problems.append("store: not one turn from its start to its end")
    elif stored[-1].get("status") != "completed":
        problems.append(f"store: the turn ended {stored[-1].get('status')}: {stored[-1].get('message')}")
    return problems


def _run_turn(owner: JupyterServerProcess, watcher: JupyterServerProcess, thread: str) -> TurnResult:
    """One turn streamed on ``owner``, followed meanwhile on ``watcher`` once it has begun."""
    begun = threading.Event()
    other: list[Frame] = []
    failure: list[BaseException] = []
    headers = {"Authorization": f"token {owner.token}"}
    api = "/analyst/api/threads/" + thread

    def watch() -> None:
        begun.wait(300)
        try:
            # Kept frame by frame, and given up on after a while: a stream that misses its
            # turn's end is a reported loss, not a benchmark that never ends.
            read_stream(watcher.url + api + "/events", headers={"Authorization": f"token {watcher.token}"},
                        on_frame=other.append, give_up_after=WATCH_S)
        except BaseException as exc:  # reported with the turn
            failure.append(exc)

    watching = threading.Thread(target=watch)
    watching.start()
    try:
        own = read_stream(owner.url + api + "/turns", method="POST", headers=headers, body={"prompt": "revenue"},
                          on_frame=lambda _: begun.set())
    finally:
        begun.set()
        watching.join(300)
    stored = watcher.request(api + "/events")["events"]
    result = TurnResult(thread, stored, own, other)
    result.problems = store_problems(stored) + stream_problems(stored, own, "own stream") + \
        stream_problems(stored, other, "other stream") + [f"other stream: {exc!r}" for exc in failure]
    return result


def run_team(root: Path, *, processes: int, threads: int, model_url: str, database: Path,
             store_url: str | None) -> dict[str, Any]:
    """``threads`` turns at once over ``processes`` servers on ``store_url`` (``None``: one
    process on its own SQLite file); throughput, latencies and every turn's problems."""
    servers = [JupyterServerProcess(root / f"server{i}", sources={"sales": str(database)}, model_url=model_url,
                                    extra=SETTINGS + ([f"--AnalystApp.store_url={store_url}"] if store_url else []))
               for i in range(processes)]
    for server in servers:
        server.root.mkdir(parents=True)
    try:
        with ThreadPoolExecutor(processes) as pool:
            list(pool.map(lambda s: s.start(timeout=120), servers))
        # Warm-up, one turn per process: first imports, the SQL checker.
        for i, server in enumerate(servers):
            tid = server.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"]
            _run_turn(server, servers[(i + 1) % processes], tid)
        owners = [servers[i % processes] for i in range(threads)]
        tids = [o.request("/analyst/api/threads", method="POST", body={"source": "sales"})["thread_id"] for o in owners]
        t0 = time.perf_counter()
        with ThreadPoolExecutor(threads) as pool:
            results = list(pool.map(
                lambda i: _run_turn(owners[i], servers[(servers.index(owners[i]) + 1) % processes], tids[i]),
                range(threads)))
        wall = time.perf_counter() - t0
    finally:
        for server in servers:
            server.stop()

    def latencies(which: str) -> list[float]:
        return [f.arrived - _epoch(f.event["ts"]) for r in results for f in getattr(r, which)]

    return {
        "turns_per_min": threads / wall * 60,
        "wall": wall,
        "own": latencies("own"),
        "other": latencies("other"),
        "events": sum(len(r.stored) for r in results),
        "frames": sum(len(r.own) + len(r.other) for r in results),
        "problems": [f"{r.thread}: {p}" for r in results for p in r.problems],
    }


def bench_team(report: Report, *, rows: int, repeat: int) -> None:
    from jupyter_analyst.testing.servers.postgres_server import postgres_server

    processes, threads = (QUICK_PROCESSES, QUICK_THREADS) if report.quick else (PROCESSES, THREADS)
    with tempfile.TemporaryDirectory(prefix="bench-team-") as tmp, _scripted_model(Path(tmp), SCRIPT) as model_url:
        root = Path(tmp)
        database = build_sample_database(root / "sales.duckdb")
        sqlite = run_team(root / "sqlite", processes=1, threads=threads, model_url=model_url, database=database,
                          store_url=None)
        # Not under ``tmp``: the server runs as the postgres user when this runs as root.
        pg_root = Path(tempfile.mkdtemp(prefix="bench-team-pg-"))
        try:
            with postgres_server(pg_root) as pg:
                team = run_team(root / "pg", processes=processes, threads=threads, model_url=model_url,
                                database=database, store_url=pg.new_database())
        finally:
            shutil.rmtree(pg_root, ignore_errors=True)
    floor = f"1 process on SQLite, same {threads} threads"
    shape = f"{processes} processes on PostgreSQL, {threads} concurrent threads"
    report.add(f"team: turns per minute, {shape}", team["turns_per_min"], sqlite["turns_per_min"], floor, "turns/min")
    for q in (0.5, 0.99):
        report.add(f"team: event latency p{round(q * 100)}, stream on the turn's process, {shape}",
                   _percentile(team["own"], q), _percentile(sqlite["own"], q), floor)
        report.add(f"team: event latency p{round(q * 100)}, stream on another process, {shape}",
                   _percentile(team["other"], q), _percentile(sqlite["other"], q), floor + " (same process)")
    problems = team["problems"] + sqlite["problems"]
    report.note(f"team: {team['events']} stored events of {threads} turns on PostgreSQL, {team['frames']} streamed "
                f"frames (two streams a turn), {len(team['problems'])} lost or duplicated; on SQLite "
                f"{sqlite['events']} events, {len(sqlite['problems'])}. Each turn: SQL, Python in its thread's own "
                "sandboxed kernel (pool of 1 warm kernel per process, caps 32 kernels / 8 per user), an answer; "
                f"batch wall time {team['wall']:.1f}s vs {sqlite['wall']:.1f}s; median latency on one process "
                f"{statistics.median(sqlite['own']) * 1e3:.1f} ms")
    if problems:
        raise RuntimeError(f"{len(problems)} problems, e.g. {problems[:5]}")
