"""``run_sql`` on large results, end to end into the kernel, vs JupySQL and the raw floor.

Each size is measured three ways in the same run, on the same DuckDB file:

* ours: ``ToolBox.plan`` + ``ToolBox.call("run_sql")``: the SQL checked, the result
  written as Parquet and fingerprinted, stored as an artifact, loaded into the thread's
  (sandboxed, already started) kernel as a pandas DataFrame;
* the peer: JupySQL's ``%sql df << SELECT ...`` in a plain ipykernel (started once,
  connected once), with ``autopandas`` so that ``df`` is a DataFrame;
* the floor: DuckDB -> Arrow -> pandas in this process, nothing stored.

Beside them, in the same run, the two parts of ours that the floor does not have, each
against the same floor: DuckDB's ``COPY`` of the result to Parquet with the stored
artifact's settings (what fixes its bytes, hence its fingerprint), and that file read into
pandas as the kernel's loader reads it; and, for comparison, the same rows mapped from an
Arrow IPC file into pandas (what the kernel's load would be given Arrow without a decode).

Peak memory is the high-water mark of resident memory during the first query after the
start (``VmHWM``, reset before it): ours is the host's process plus the source's engine
worker (DuckDB, in a process of its own, started before) plus the kernel's processes; the
peer's is its kernel; the floor's its own process. The increase over the memory held
before the query is shown too: what the query itself costs.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from itertools import count
from pathlib import Path

import duckdb

from jupyter_analyst.agent.environment import ThreadEnvironment
from jupyter_analyst.agent.spec import CallContext
from jupyter_analyst.agent.tools import ToolBox
from jupyter_analyst.workspace import Workspace

from .common import Report, median_time, median_time_async

QUERY = "SELECT id, id % 97 AS bucket, id * 0.5 AS amount, 'label-' || (id % 13) AS label FROM big ORDER BY id"
PEER = "JupySQL %sql df << SELECT ... (plain ipykernel)"
FLOOR = "DuckDB -> Arrow -> pandas in process, nothing stored"


def make_db(path: Path, rows: int) -> None:
    with duckdb.connect(str(path)) as conn:
        conn.execute(f"CREATE TABLE big AS SELECT range AS id FROM range({rows})")


def bench_run_sql(report: Report, *, rows: int, repeat: int) -> None:
    for size in (rows, 10 * rows):
        with tempfile.TemporaryDirectory(prefix="bench-sql-") as tmp:
            root = Path(tmp)
            db = root / "big.duckdb"
            make_db(db, size)
            floor = median_time(lambda: _floor(db, size), repeat)
            parts = _parts(db, root, size, repeat)
            floor_memory = _in_a_fresh_process("_floor_memory", db, size)
            peer = _jupysql(db, size, repeat)
            ours = _in_a_fresh_process("_ours", root, db, size, repeat)
            label = f"run_sql, {size:,} rows into the kernel"
            peer_of = {"peer_name": PEER} if peer is not None else {}
            report.add(label, ours.seconds, floor, FLOOR,
                       **({"peer": peer.seconds, **peer_of} if peer is not None else {}))
            report.add(f"{label}: peak memory", ours.peak_mb, floor_memory.peak_mb, FLOOR, unit="MB",
                       **({"peer": peer.peak_mb, **peer_of} if peer is not None else {}))
            report.add(f"{label}: peak memory over idle", ours.added_mb, floor_memory.added_mb, FLOOR, unit="MB",
                       **({"peer": peer.added_mb, **peer_of} if peer is not None else {}))
            for part, seconds in parts.items():
                report.add(f"{label}: of which {part}", seconds, floor, FLOOR)
            if peer is None:
                report.note("JupySQL is not installed (pip install -e '.[bench]'): the peer was not measured")


def _floor(db: Path, rows: int) -> None:
    import pyarrow as pa

    with duckdb.connect(str(db), read_only=True) as conn:
        table = conn.sql(QUERY).to_arrow_table()
    for i, field in enumerate(table.schema):  # as our kernel gets them: DECIMAL as float64
        if pa.types.is_decimal(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(pa.float64()))
    frame = table.to_pandas(self_destruct=True, split_blocks=True)
    assert len(frame) == rows


def _parts(db: Path, root: Path, rows: int, repeat: int) -> dict[str, float]:
    """Median seconds of what ours does that the floor does not (see the module's doc)."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    from jupyter_analyst.kernel.loader import read_dataset
    from jupyter_analyst.sql.duckdb_engine import _PARQUET_OPTIONS

    stored, mapped = root / "part.parquet", root / "part.arrow"
    with duckdb.connect(str(db), read_only=True) as conn:
        def copy() -> None:
            conn.execute(f"COPY ({QUERY}) TO '{stored}' ({_PARQUET_OPTIONS})")

        copied = median_time(copy, repeat)
        table = conn.sql(QUERY).to_arrow_table()
        with pa.OSFile(str(mapped), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        del table

    def load_ipc() -> None:
        table = ipc.open_file(pa.memory_map(str(mapped))).read_all()
        table = pa.table([c.cast(pa.float64()) if pa.types.is_decimal(c.type) else c for c in table.columns],
                         names=table.column_names)
        assert len(table.to_pandas(split_blocks=True)) == rows

    out = {
        "DuckDB's COPY to the stored Parquet (fixes the fingerprint)": copied,
        "the stored Parquet read into pandas (the kernel's load)":
            median_time(lambda: read_dataset(str(stored)), repeat),
        "the same rows mapped from Arrow IPC into pandas (no decode)": median_time(load_ipc, repeat),
    }
    stored.unlink()
    mapped.unlink()
    return out


class Measured:
    """Median seconds of a call, and the peak memory of one more call (MB)."""

    def __init__(self, seconds: float, peak: int, before: int) -> None:
        self.seconds = seconds
        self.peak_mb = peak / 1e6
        self.added_mb = (peak - before) / 1e6


class PeakMemory:
    """The high-water mark of some processes' resident memory over a span of time.

    Reset through ``/proc/PID/clear_refs`` and read from ``VmHWM`` where that is allowed,
    else sampled every 2 ms; the figure is the sum over the processes.
    """

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self._stop = threading.Event()
        self._sampled = 0
        self._thread: threading.Thread | None = None
        self.exact = all(_can_reset(pid) for pid in pids)

    def resident(self) -> int:
        return sum(_status(pid, "VmRSS") for pid in self.pids)

    def __enter__(self) -> PeakMemory:
        if self.exact:
            for pid in self.pids:
                Path(f"/proc/{pid}/clear_refs").write_text("5")
        else:
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()

    def peak(self) -> int:
        return sum(_status(pid, "VmHWM") for pid in self.pids) if self.exact else self._sampled

    def _sample(self) -> None:
        while not self._stop.is_set():
            self._sampled = max(self._sampled, self.resident())
            time.sleep(0.002)


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _can_reset(pid: int) -> bool:
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError:
        return False
    return True


def _kernel_pids() -> list[int]:
    """This process's descendants that make up kernels (not the SQL checker's workers)."""
    import psutil

    return [
        p.pid for p in psutil.Process().children(recursive=True)
        if "prepare_worker" not in " ".join(p.cmdline())
    ]


def _in_a_fresh_process(function: str, *args: object) -> Measured:
    """``function(*args)`` of this module in a process of its own (its memory is its own)."""
    code = (
        "import asyncio, inspect, json, sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]);"
        "from benchmarks import bench_sql;"
        "f = getattr(bench_sql, sys.argv[2]);"
        "args = [Path(a) if '/' in a else int(a) for a in sys.argv[3:]];"
        "m = f(*args); m = asyncio.run(m) if inspect.iscoroutine(m) else m;"
        "print(json.dumps(vars(m)))"
    )
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", code, str(repo), function, *map(str, args)],
        capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{function} failed: {done.stderr[-2000:]}")
    measured = Measured(0.0, 0, 0)
    measured.__dict__.update(json.loads(done.stdout.strip().splitlines()[-1]))
    return measured


def _floor_memory(db: Path, rows: int) -> Measured:
    """The floor's peak memory in this (fresh) process, over what it held before."""
    import pandas  # noqa: F401 - imported before the idle figure, as the kernel has it
    import pyarrow  # noqa: F401

    memory = PeakMemory([os.getpid()])
    before = memory.resident()
    with memory:
        _floor(db, rows)
    return Measured(0.0, memory.peak(), before)


async def _ours(root: Path, db: Path, rows: int, repeat: int) -> Measured:
    from jupyter_analyst.sql import open_source

    workspace = Workspace(root / "ws")
    thread = workspace.store.create_thread(source=str(db))
    source = open_source(str(db))
    runtime = ThreadEnvironment(
        thread_id=thread.thread_id, source=source, artifacts=workspace.artifacts,
        workdir=workspace.kernel_dir(thread.thread_id), row_cap=rows + 1,
    )
    tools = ToolBox(runtime)
    await runtime.kernel()  # started once: the comparison is per query, not per kernel start
    ids = count()

    async def once() -> None:
        call = next(ids)
        args = {"sql": f"/* run {call} */ {QUERY}", "name": "big_result"}  # checked anew each time
        ctx = CallContext(thread.thread_id, "bench", f"call_{call}", rerun=True)
        plan = await tools.plan("run_sql", args)
        outcome = await tools.call("run_sql", args, ctx, plan)
        await runtime.settle()  # end to end: the DataFrame is in the kernel (it loads in the background)
        assert outcome.status == "ok" and outcome.result["rows"] == rows, outcome.result
        runtime.loaded.clear()  # make every repetition load the DataFrame into the kernel again

    try:
        # The source's engine worker, which a turn starts when the model names run_sql, is
        # started and counted from the first query on (started by it, it was not counted at
        # all); this process has imported what writing a result needs, as the floor's process
        # has before its idle figure (one-time imports are the server's, not the query's).
        engine = getattr(source, "engine", None)
        if engine is not None:
            await asyncio.to_thread(engine.run, "SELECT 1")
        import pandas  # noqa: F401
        import pyarrow.parquet  # noqa: F401

        # Memory first, on the first query after the start, as the peer's is.
        memory = PeakMemory([os.getpid(), *_kernel_pids()])
        before = memory.resident()
        with memory:
            await once()
        peak = memory.peak()
        return Measured(await median_time_async(once, repeat), peak, before)
    finally:
        await runtime.close()
        source.close()
        workspace.close()


def _jupysql(db: Path, rows: int, repeat: int) -> Measured | None:
    """JupySQL in a plain ipykernel: ``%sql df << QUERY`` into a DataFrame."""
    try:
        import sql  # noqa: F401  (jupysql)
    except ImportError:
        return None
    from jupyter_client.manager import start_new_kernel

    env = {**os.environ, "PLOOMBER_STATS_ENABLED": "false"}  # no telemetry calls
    manager, client = start_new_kernel(kernel_name="python3", env=env)

    def run(code: str) -> None:
        reply = client.execute_interactive(code, timeout=3_600, output_hook=lambda msg: None)
        assert reply["content"]["status"] == "ok", reply["content"]

    try:
        run("%load_ext sql")
        run("%config SqlMagic.autopandas = True\n%config SqlMagic.displaycon = False")
        run(f"%sql duckdb:///{db}?access_mode=read_only")
        memory = PeakMemory([manager.provisioner.process.pid])
        before = memory.resident()
        with memory:
            run(f"%sql df << {QUERY}")
        peak = memory.peak()
        run(f"assert type(df).__name__ == 'DataFrame' and len(df) == {rows}, (type(df), len(df))")
        return Measured(median_time(lambda: run(f"%sql df << {QUERY}"), repeat), peak, before)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
