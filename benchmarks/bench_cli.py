"""The command line's own cost: a turn whose steps are all reused, timed as the user runs it.

The demo's thread is built once (``jupyter-analyst demo``: the scripted model, a kernel for
its Python step); then ``jupyter-analyst run --thread ... --prompt continue`` runs as a real
process, again and again, against the same scripted model. Every step of that turn is
reused, so what is left is the process: start-up, imports, the store, the model calls, the
notebook, the exit. Baselines: ``python -c "import jupyter_analyst"`` and ``python -c pass``.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jupyter_analyst.cli.demo import DEMO_SCRIPT
from jupyter_analyst.testing import ScriptedModelServer

from .common import Report

#: The console script next to this interpreter (the project's virtualenv).
CLI = Path(sys.executable).with_name("jupyter-analyst")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _wall(cmd: list[str], repeat: int) -> tuple[float, float, list[str]]:
    """Median wall time and CPU time (the process and the children it waited for) of
    ``repeat`` runs of ``cmd`` (after one warm-up run), and their outputs."""
    times, cpu, outputs = [], [], []
    for i in range(repeat + 1):
        t0, c0 = time.perf_counter(), _children_cpu()
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        elapsed, used = time.perf_counter() - t0, _children_cpu() - c0
        if out.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({out.returncode}): {out.stderr[-2000:]}")
        if i:
            times.append(elapsed)
            cpu.append(used)
            outputs.append(out.stdout)
    return statistics.median(times), statistics.median(cpu), outputs


def bench_cli(report: Report, *, rows: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as tmp:
        out = Path(tmp) / "demo"
        demo = subprocess.run([str(CLI), "demo", "--out", str(out), "--json"], capture_output=True, text=True,
                              timeout=600)
        if demo.returncode != 0:
            raise RuntimeError(f"the demo failed: {demo.stderr[-2000:]}")
        thread = json.loads(demo.stdout)["first"]["thread_id"]
        load_before = os.getloadavg()[0]
        with ScriptedModelServer(DEMO_SCRIPT) as model:
            turn = [str(CLI), "run", "--workspace", str(out / ".analyst"), "--thread", thread,
                    "--prompt", "continue", "--base-url", model.base_url, "--json"]
            ours, ours_cpu, outputs = _wall(turn, repeat)
        summaries = [json.loads(o) for o in outputs]
        assert all(s["tool_calls"]["executed"] == 0 and s["tool_calls"]["reused"] == 2 for s in summaries), summaries
        inside = statistics.median(s["timings"]["total_s"] for s in summaries)
        imported, _, _ = _wall([sys.executable, "-c", "import jupyter_analyst"], repeat)
        bare, _, _ = _wall([sys.executable, "-c", "pass"], repeat)
    report.add("CLI 'continue' turn, every step reused (process wall), vs the package's import", ours, imported,
               'python -c "import jupyter_analyst"')
    report.add("CLI 'continue' turn, every step reused (process wall), vs a bare interpreter", ours, bare,
               "python -c pass")
    report.note(f"CLI turn: {ours:.2f} s wall ({ours_cpu:.2f} s CPU, with the helper processes it started), of "
                f"which the agent loop (TurnSummary total_s) {inside:.2f} s; the rest is start-up, the notebook, the "
                "end-of-turn summarizer and the exit; scripted model on 127.0.0.1")
    # Wall time on a machine that may be shared: its load says how far it was from idle.
    report.note(f"CLI turn: load average (1 min) on {os.cpu_count()} cores: {load_before:.1f} at the start, "
                f"{os.getloadavg()[0]:.1f} at the end")
