"""Benchmarks that misbehave on purpose, to check that the harness loses nothing else."""

from __future__ import annotations

import os
import subprocess
import sys

from .common import Report


def fine(report: Report, *, rows: int, repeat: int) -> None:
    """Two figures and a note."""
    report.add("selftest figure", 2.0, 1.0, "floor", peer=4.0, peer_name="peer")
    report.add("selftest count", float(rows), float(repeat), "repeat", unit="events")
    report.note(f"quick={report.quick}")


def fails(report: Report, *, rows: int, repeat: int) -> None:
    """One figure, then an exception."""
    report.add("measured before the failure", 1.0, 1.0, "floor")
    raise RuntimeError("the peer is not installed")


def crashes(report: Report, *, rows: int, repeat: int) -> None:
    """One figure, then the process dies without a word (as on a segfault or the OOM killer)."""
    report.add("measured before the crash", 1.0, 1.0, "floor")
    os.abort()


def hangs(report: Report, *, rows: int, repeat: int) -> None:
    """Starts a helper process (as a server or kernel would be), notes its pid, and never ends."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    report.note(f"helper pid {child.pid}")
    child.wait()
