"""What the server extension adds to every Jupyter server's start, whether or not anyone opens
the panel.

* importing the extension's entry point (``jupyter_analyst.server``), as ``python -X
  importtime`` counts it, beside ``import jupyter_server.serverapp`` in the same process;
* the whole start: ``ServerApp.initialize()`` with the extension enabled (imported, its
  settings and handlers loaded, its workspace opened), beside the same server with the
  extension disabled.

Each run is a fresh interpreter; the figures are medians.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from jupyter_analyst.testing.servers.jupyter import free_port

from .common import Report

#: What the engine needs and a server's start does not: none of it should be imported then.
ENGINE = ("openai", "duckdb", "sqlglot", "pandas", "pyarrow")

ENTRY_POINT = "jupyter_analyst.server"
BASELINE = "jupyter_server.serverapp"

_INITIALIZE = """
import json, sys, time
t0 = time.perf_counter()
from jupyter_server.serverapp import ServerApp
ServerApp().initialize(argv=sys.argv[1:])
print(json.dumps({"s": time.perf_counter() - t0, "engine": [m for m in %r if m in sys.modules]}))
"""


def import_times(stderr: str) -> tuple[float, float]:
    """Seconds ``import jupyter_server.serverapp`` took, and what the imports after it added,
    from ``python -X importtime``'s report (cumulative, top-level lines).

    >>> report = ("import time: self [us] | cumulative | imported package\\n"
    ...           "import time:       900 |    3000000 | jupyter_server.serverapp\\n"
    ...           "import time:       100 |       2000 |   jupyter_analyst._version\\n"
    ...           "import time:       200 |       5000 | jupyter_analyst\\n"
    ...           "import time:       300 |      40000 | jupyter_analyst.server\\n")
    >>> import_times(report)
    (3.0, 0.045)
    """
    baseline, after, seen = 0.0, 0.0, False
    for line in stderr.splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        _, cumulative, name = line.split("|")
        if not cumulative.strip().isdigit() or name.startswith("  "):
            continue  # the header, or a module imported by another one (counted in its parent)
        seconds = int(cumulative) / 1e6
        if name.strip() == BASELINE:
            baseline, seen = seconds, True
        elif seen:
            after += seconds
    if not seen:
        raise RuntimeError(f"{BASELINE} is not in the importtime report")
    return baseline, after


def _entry_point(repeat: int) -> tuple[float, float]:
    baselines, added = [], []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {BASELINE}; import {ENTRY_POINT}"],
                             capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            raise RuntimeError(f"importing {ENTRY_POINT} failed: {out.stderr[-2000:]}")
        baseline, after = import_times(out.stderr)
        baselines.append(baseline)
        added.append(after)
    return statistics.median(added), statistics.median(baselines)


def _initialize(root: Path, enabled: bool) -> dict:
    """``ServerApp.initialize()`` in a fresh interpreter, with the extension enabled or not."""
    argv = ["--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={free_port()}",
            "--IdentityProvider.token=bench", f"--ServerApp.root_dir={root}",
            f"--ServerApp.jpserver_extensions={{'{ENTRY_POINT}': {enabled}}}",
            f"--AnalystApp.workspace={root / 'ws'}", "--AnalystApp.pool_size=0"]
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(root / "cfg"), "JUPYTER_RUNTIME_DIR": str(root / "rt"),
           "JUPYTER_DATA_DIR": str(root / "data")}
    out = subprocess.run([sys.executable, "-c", _INITIALIZE % (ENGINE,), *argv], capture_output=True, text=True,
                         env=env, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"the server did not initialize: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_server_start(report: Report, *, rows: int, repeat: int) -> None:
    added, baseline = _entry_point(repeat)
    report.add("Jupyter server start: importing the extension's entry point (python -X importtime)", added,
               baseline, f"import {BASELINE}")
    with tempfile.TemporaryDirectory(prefix="bench-start-") as tmp:
        root = Path(tmp)
        runs: dict[bool, list[dict]] = {True: [], False: []}
        for _ in range(repeat + 1):  # alternated, so both see the same machine; the first pair warms up
            for enabled in (False, True):
                runs[enabled].append(_initialize(root, enabled))
    with_it = statistics.median(r["s"] for r in runs[True][1:])
    without = statistics.median(r["s"] for r in runs[False][1:])
    report.add("Jupyter server start: ServerApp.initialize() with the extension loaded", with_it, without,
               "the same server, extension disabled")
    engine = sorted({m for r in runs[True] for m in r["engine"]})
    report.note(f"server start: the extension's entry point adds {added:.3f} s to {BASELINE}'s {baseline:.3f} s; "
                f"the whole extension (settings, workspace, handlers) adds {with_it - without:.3f} s to a "
                f"{without:.3f} s initialize; engine modules imported at start: {', '.join(engine) or 'none'}")
