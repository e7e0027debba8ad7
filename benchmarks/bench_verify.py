"""``jupyter analyst verify`` of an exported notebook vs stock papermill executing it.

The demo's thread (a query, a chart with a CSV, then "continue": four step cells) is
exported once. Ours re-executes it with the ``analyst`` engine (sandboxed kernel) and
compares every artifact's fingerprint with the manifest; the baseline is stock papermill
running the same notebook in a plain kernel, with nothing compared.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import papermill

from jupyter_analyst.analysis import AnalystConfig, ModelSettings, TurnRequest, run_turn
from jupyter_analyst.demo import DEMO_SCRIPT, FIRST_PROMPT, build_sample_database
from jupyter_analyst.notebooks.export import export_thread, write_export
from jupyter_analyst.notebooks.verify import verify_notebook
from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.workspace import Workspace

from .common import Report


def bench_verify(report: Report, *, rows: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        root = Path(tmp)
        db = build_sample_database(root / "sales.duckdb")
        with ScriptedModelServer(DEMO_SCRIPT) as server:
            model = ModelSettings(model="jupyter-analyst-scripted", base_url=server.base_url, api_key="x")
            config = AnalystConfig(workspace=root / "ws", summarizer=False)
            first = asyncio.run(run_turn(TurnRequest(prompt=FIRST_PROMPT, source=str(db)), config=config, model=model))
            asyncio.run(run_turn(TurnRequest(prompt="continue", thread_id=first.thread_id), config=config, model=model))
        ws = Workspace(root / "ws")
        nb = export_thread(ws.store, ws.artifacts, first.thread_id)
        ws.close()
        path = write_export(nb, root / "exported.ipynb")
        steps = sum(1 for c in nb.cells if "call_id" in c.metadata.get("jupyter_analyst", {}))
        ours, stock = [], []
        for n in range(max(3, repeat // 2)):
            t0 = time.perf_counter()
            result = verify_notebook(path)
            ours.append(time.perf_counter() - t0)
            assert result.ok, result.model_dump()
            run_dir = root / f"stock{n}"
            run_dir.mkdir()
            t0 = time.perf_counter()
            papermill.execute_notebook(str(path), str(run_dir / "out.ipynb"), cwd=str(run_dir), progress_bar=False)
            stock.append(time.perf_counter() - t0)
    report.add(f"verify, {steps}-step exported notebook", statistics.median(ours), statistics.median(stock),
               "stock papermill executing it (plain kernel, no checks)")
