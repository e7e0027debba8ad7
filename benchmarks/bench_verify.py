"""``jupyter-analyst verify`` of an exported notebook vs stock papermill executing it.

Threads of several sizes are exported once each: the demo's (a query, a chart with a CSV,
then "continue": four step cells) and generated ones of N steps, alternating a query per
region and month window with a Python step that charts it. Ours re-executes the notebook
with the ``analyst`` engine (sandboxed kernel) and compares every artifact's fingerprint
with the manifest. The peer is stock papermill's command running the same notebook in a
plain kernel, with nothing compared; both are timed as the commands a user types (process
start included). The floor is the raw work: nbclient executing the notebook in this
process, plain kernel. The ratios should fall as N grows: the sandbox's start is paid once,
the comparison per artifact is a hash.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbclient
import nbformat

from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
from jupyter_analyst.cli.demo import DEMO_SCRIPT, FIRST_PROMPT, build_sample_database
from jupyter_analyst.notebooks.export import export_thread, write_export
from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.workspace import Workspace

from .common import Report

#: Step counts of the generated threads (the demo's thread comes first).
SIZES = (20, 40)


def steps_script(steps: int) -> dict[str, Any]:
    """A one-turn script of ``steps`` tool calls: a query, then a chart of it, repeated."""
    calls: list[dict[str, Any]] = []
    for n in range(steps // 2):
        name = f"window_{n}"
        calls.append({"tool_calls": [{"name": "run_sql", "arguments": {"name": name, "sql": (
            "SELECT r.region, SUM(o.revenue) AS revenue, COUNT(*) AS orders FROM orders o "
            "JOIN regions r ON o.region_id = r.region_id "
            f"WHERE o.order_id % {steps // 2} = {n} GROUP BY r.region ORDER BY r.region")}}]})
        calls.append({"tool_calls": [{"name": "run_python", "arguments": {"code": (
            f"ax = {name}.plot.bar(x='region', y='revenue', legend=False, title='window {n}')\n"
            "plt.show()\n"
            f"print({name}['orders'].sum())")}}]})
    calls.append({"content": "[scripted model] done"})
    return {"turns": [{"match": "^windows$", "steps": calls}]}


def _exported(root: Path, db: Path, script: dict[str, Any], prompts: list[str]) -> Path:
    """Run ``prompts`` on one thread with the scripted model and export the thread."""
    with ScriptedModelServer(script) as server:
        model = ModelSettings(model="jupyter-analyst-scripted", base_url=server.base_url, api_key="x")
        config = AnalystConfig(workspace=root / "ws", summarizer=False, max_steps=200)
        thread = None
        for prompt in prompts:
            request = TurnRequest(prompt=prompt, source=str(db), thread_id=thread)
            summary = asyncio.run(run_turn(request, config=config, model=model))
            assert summary.status == "completed", summary.error
            thread = summary.thread_id
    ws = Workspace(root / "ws")
    nb = export_thread(ws.store, ws.artifacts, thread)
    ws.close()
    return write_export(nb, root / "exported.ipynb")


def _timed(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - t0


def _time_all(root: Path, path: Path, db: Path, repeat: int) -> tuple[float, float, float]:
    """Medians of (ours, the floor, the peer), interleaved so drift on the machine hits all three."""
    bindir = Path(sys.executable).parent
    ours, floor, peer = [], [], []
    for n in range(repeat):
        ours.append(_timed([str(bindir / "jupyter-analyst"), "verify", str(path), "--db", str(db)], root))
        run_dir = root / f"run{n}"
        run_dir.mkdir()
        nb = nbformat.read(path, as_version=4)
        t0 = time.perf_counter()
        nbclient.NotebookClient(nb, resources={"metadata": {"path": str(run_dir)}}).execute()
        floor.append(time.perf_counter() - t0)
        peer.append(_timed([str(bindir / "papermill"), "--no-progress-bar", str(path), str(run_dir / "out.ipynb")],
                           run_dir))
    return statistics.median(ours), statistics.median(floor), statistics.median(peer)


def bench_verify(report: Report, *, rows: int, repeat: int) -> None:
    runs = 1 if report.quick else max(3, repeat // 2)
    sizes = SIZES[:1] if report.quick else SIZES
    threads = [(DEMO_SCRIPT, [FIRST_PROMPT, "continue"])] + [(steps_script(n), ["windows"]) for n in sizes]
    for script, prompts in threads:
        with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
            root = Path(tmp)
            db = build_sample_database(root / "sales.duckdb")
            path = _exported(root, db, script, prompts)
            nb = nbformat.read(path, as_version=4)
            steps = sum(1 for c in nb.cells if "call_id" in c.metadata.get("jupyter_analyst", {}))
            artifacts = len(nb.metadata["jupyter_analyst"]["manifest"])
            ours, floor, peer = _time_all(root, path, db, runs)
        report.add(f"`verify`, {steps}-step exported notebook ({artifacts} artifacts; command, sandboxed kernel)",
                   ours, floor, "nbclient executing it in-process, plain kernel",
                   peer=peer, peer_name="`papermill` command, plain kernel, nothing checked")
