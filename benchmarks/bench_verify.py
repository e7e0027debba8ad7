"""``jupyter analyst verify`` of an exported notebook vs stock papermill executing it.

Threads of several sizes are exported once each: the demo's (a query, a chart with a CSV,
then "continue": four step cells) and generated ones of N steps, alternating a query per
region and month window with a Python step that charts it. Ours re-executes the notebook
with the ``analyst`` engine (sandboxed kernel) and compares every artifact's fingerprint
with the manifest; the baseline is stock papermill running the same notebook in a plain
kernel, with nothing compared. The ratio should fall as N grows: the sandbox's start is
paid once, the comparison per artifact is a hash.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import papermill

from jupyter_analyst.analysis import AnalystConfig, ModelSettings, TurnRequest, run_turn
from jupyter_analyst.demo import DEMO_SCRIPT, FIRST_PROMPT, build_sample_database
from jupyter_analyst.notebooks.export import export_thread, write_export
from jupyter_analyst.notebooks.verify import verify_notebook
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


def _time_both(root: Path, path: Path, repeat: int) -> tuple[float, float]:
    ours, stock = [], []
    for n in range(repeat):
        t0 = time.perf_counter()
        result = verify_notebook(path)
        ours.append(time.perf_counter() - t0)
        assert result.ok, result.model_dump()
        run_dir = root / f"stock{n}"
        run_dir.mkdir()
        t0 = time.perf_counter()
        papermill.execute_notebook(str(path), str(run_dir / "out.ipynb"), cwd=str(run_dir), progress_bar=False)
        stock.append(time.perf_counter() - t0)
    return statistics.median(ours), statistics.median(stock)


def bench_verify(report: Report, *, rows: int, repeat: int) -> None:
    runs = max(3, repeat // 2)
    threads = [(DEMO_SCRIPT, [FIRST_PROMPT, "continue"])] + [(steps_script(n), ["windows"]) for n in SIZES]
    for script, prompts in threads:
        with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
            root = Path(tmp)
            db = build_sample_database(root / "sales.duckdb")
            path = _exported(root, db, script, prompts)
            nb = papermill.iorw.load_notebook_node(str(path))
            steps = sum(1 for c in nb.cells if "call_id" in c.metadata.get("jupyter_analyst", {}))
            artifacts = len(nb.metadata["jupyter_analyst"]["manifest"])
            ours, stock = _time_both(root, path, runs)
        report.add(f"verify, {steps}-step exported notebook ({artifacts} artifacts)", ours, stock,
                   "stock papermill executing it (plain kernel, no checks)")
