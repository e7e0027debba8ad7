"""Runs each benchmark in a process of its own and gathers the figures into ``results.json``.

A benchmark that raises, crashes or passes its time limit is recorded as such, with the
figures it measured before; the others run all the same. The results file is rewritten
after every benchmark, so an interrupted run keeps what it measured.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from .one import save

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results.json"
#: The documentation page whose table ``python -m benchmarks --readme`` writes from RESULTS.
PAGE = ROOT / "docs" / "benchmarks.md"

#: Versions that explain a figure: ours, the engine, and the peers.
PACKAGES = ("duckdb", "pandas", "pyarrow", "ipykernel", "jupyter_server", "papermill", "jupysql")


def run(specs: list[str], *, out: Path = RESULTS, rows: int, repeat: int, quick: bool = False,
        timeout_s: float = 1800.0) -> dict[str, Any]:
    """Run ``specs`` one after the other, each in its own process, merging into ``out``.

    Figures of benchmarks not run now are kept from the earlier file, each with the commit
    and time it was measured at.
    """
    results = load(out)
    results["machine"] = machine()
    for spec in specs:
        print(f"== {spec}", file=sys.stderr, flush=True)
        entry = _run_one(spec, rows=rows, repeat=repeat, quick=quick, timeout_s=timeout_s)
        results["benches"][spec] = entry
        out.parent.mkdir(parents=True, exist_ok=True)
        save(out, results)
        if entry["status"] != "ok":
            print(f"== {spec}: {entry['status']}: {entry['error']}", file=sys.stderr, flush=True)
    return results


def load(path: Path) -> dict[str, Any]:
    """The results file, or an empty one."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        data = {}
    data.setdefault("benches", {})
    return data


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    return {
        "cpus": os.cpu_count(),
        "memory_gib": round(mem_kb / 2**20, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": versions,
    }


def _run_one(spec: str, *, rows: int, repeat: int, quick: bool, timeout_s: float) -> dict[str, Any]:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        report_file = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "benchmarks.one", spec, "--out", str(report_file),
               "--rows", str(rows), "--repeat", str(repeat)] + (["--quick"] if quick else [])
        # A session of its own: on a timeout the whole group goes (servers, kernels, workers).
        proc = subprocess.Popen(cmd, cwd=ROOT, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout_s)
            status = "ok" if code == 0 else ("failed" if code > 0 else "crashed")
            error = None if code == 0 else (f"exit status {code}" if code > 0 else f"killed by {_signal_name(-code)}")
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            status, error = "timeout", f"still running after {timeout_s:g} s"
        finally:
            _kill_group(proc)
        try:
            report = json.loads(report_file.read_text())
        except (OSError, ValueError):
            report = {"rows": [], "notes": [], "error": None}
    return {
        "status": status,
        "error": report.get("error") or error,
        "rows": report["rows"],
        "notes": report["notes"],
        "seconds": round(time.perf_counter() - started, 1),
        "quick": quick,
        "commit": _commit(),
        "at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    }


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop the benchmark's process group, its helpers included (nothing left behind)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":!benchmarks/results.json", ":!README.md", ":!docs"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() + ("+changes" if dirty else "")
