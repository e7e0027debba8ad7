"""The source spec's latency targets on long threads: context assembly under 200 ms, the
first event of a turn under 500 ms (the model's own time excluded).

* Context assembly: what the agent does before each model call (read the agent state, the
  recent turns and the inventory from the store; shape and bound them; the attached
  notebook's outline), p50 and p95, on a thread of 20 and of 200 turns (five artifacts a
  turn), without a notebook and with a 200-cell one attached.
* Time to the first event: ``POST threads/{id}/turns`` on a real Jupyter server to the
  first SSE frame, on threads of 20 and 200 turns (with the 200-cell notebook attached on
  the longer one), against a plain ``GET /api/status`` on a new connection. The threads
  are written into the server's workspace before it starts (as bench_context grows them),
  so the server reads a long history, not a short one it made itself.

Both are reported as ratios to the spec's targets, and to the floor named on each row.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_analyst.agent.environment import ThreadEnvironment
from jupyter_analyst._clock import utc_now
from jupyter_analyst.cli.demo import build_sample_database
from jupyter_analyst.notebooks.outline import AttachedNotebook
from jupyter_analyst.sql import open_source
from jupyter_analyst.store import Turn
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess
from jupyter_analyst.workspace import Workspace

from .bench_context import _grow, opened_context
from .bench_server import _percentile, _scripted_model, _status, _turn
from .common import Report

CHECKPOINTS = (20, 200)
NOTEBOOK_CELLS = 200
#: The source spec's targets (agentic-chat-v2-spec, section 11), in seconds.
ASSEMBLY_TARGET_S = 0.200
FIRST_EVENT_TARGET_S = 0.500


def notebook(cells: int = NOTEBOOK_CELLS) -> dict:
    """A working notebook: a heading every ten cells, code that defines DataFrames, outputs."""
    body = []
    for i in range(cells):
        if i % 10 == 0:
            body.append({"id": f"h{i}", "cell_type": "markdown", "metadata": {}, "source": f"## Section {i // 10}\nnotes"})
            continue
        body.append({"id": f"c{i}", "cell_type": "code", "metadata": {}, "execution_count": i,
                     "source": f"df_{i} = sales[sales.region == 'r{i % 7}'].groupby('month').revenue.sum()\n"
                               f"df_{i}.plot(title='step {i}')\n",
                     "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{i} rows\n" * 20}]})
    return {"cells": body, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _assembly(ws: Workspace, runtime: ThreadEnvironment, thread_id: str, turns: int, repeat: int) -> list[float]:
    nxt = Turn(turn_id="turn_bench", thread_id=thread_id, number=turns + 1, prompt="next",
               status="running", started_at=utc_now())
    took = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        opened_context(ws, runtime, nxt).messages(1, [{"role": "user", "content": "next"}])
        took.append(time.perf_counter() - t0)
    return took


def bench_latency(report: Report, *, rows: int, repeat: int) -> None:
    samples = max(20, repeat * 10)
    with tempfile.TemporaryDirectory(prefix="bench-latency-") as tmp:
        root = Path(tmp)
        db = build_sample_database(root / "sales.duckdb")
        (root / "work").mkdir()
        (root / "work" / "review.ipynb").write_text(json.dumps(notebook()))
        attached = AttachedNotebook(path="work/review.ipynb", content=notebook())

        # ---- context assembly, in this process, on the store the server will then read.
        ws = Workspace(root / "ws")
        source = open_source(str(db))
        threads: dict[int, str] = {}
        for turns in CHECKPOINTS:
            thread = ws.store.create_thread(user="local", source=str(db), title=f"{turns} turns")
            threads[turns] = thread.thread_id
            _grow(ws, thread.thread_id, 1, turns)
            runtime = ThreadEnvironment(thread_id=thread.thread_id, source=source, artifacts=ws.artifacts,
                                    workdir=ws.kernel_dir(thread.thread_id))
            for label, notebook_attached in (("", None), (f", {NOTEBOOK_CELLS}-cell notebook", attached)):
                runtime.attached = notebook_attached
                _assembly(ws, runtime, thread.thread_id, turns, 3)  # warm: first reads, imports
                took = _assembly(ws, runtime, thread.thread_id, turns, samples)
                for q in (0.5, 0.95):
                    report.add(f"context assembly p{round(q * 100)}, {turns} turns{label}", _percentile(took, q) * 1e3,
                               ASSEMBLY_TARGET_S * 1e3, "the spec's 200 ms target", unit="ms")
        source.close()
        ws.close()

        # ---- time to the first event, on a real server reading those threads.
        with _scripted_model(root) as model_url, \
                JupyterServerProcess(root, sources={"sales": str(db)}, model_url=model_url) as server:
            _turn(server)  # warm-up: the first SQL checker, imports on first use
            status = statistics.median(_status(server) for _ in range(50))
            for turns in CHECKPOINTS:
                cases = [("", None)] + ([(f", {NOTEBOOK_CELLS}-cell notebook", "work/review.ipynb")]
                                        if turns == CHECKPOINTS[-1] else [])
                for label, path in cases:
                    firsts = [_turn(server, threads[turns], notebook=path)["first"] for _ in range(max(3, repeat))]
                    first = statistics.median(firsts)
                    report.add(f"server: time to first event, thread of {turns} turns{label}", first, status,
                               "GET /api/status", peer=FIRST_EVENT_TARGET_S, peer_name="the spec's 500 ms target")
    report.note(f"latency: {samples} context assemblies per figure; the threads have 5 artifacts a turn and a "
                f"growing agent state (bench_context's synthetic turns); the notebook has {NOTEBOOK_CELLS} cells "
                "with outputs, a heading every 10")
