"""``run_sql`` on a large result vs DuckDB -> Parquet -> pandas done directly."""

from __future__ import annotations

import asyncio
import tempfile
from itertools import count
from pathlib import Path

import duckdb
import pandas as pd

from jupyter_analyst.agent.runtime import ThreadRuntime
from jupyter_analyst.agent.tools import CallContext, ToolBox
from jupyter_analyst.workspace import Workspace

from .common import Report, median_time, median_time_async

QUERY = "SELECT id, id % 97 AS bucket, id * 0.5 AS amount, 'label-' || (id % 13) AS label FROM big ORDER BY id"


def make_db(path: Path, rows: int) -> None:
    with duckdb.connect(str(path)) as conn:
        conn.execute(f"CREATE TABLE big AS SELECT range AS id FROM range({rows})")


def bench_run_sql(report: Report, *, rows: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-sql-") as tmp:
        root = Path(tmp)
        db = root / "big.duckdb"
        make_db(db, rows)

        def raw() -> None:
            out = root / "raw.parquet"
            with duckdb.connect(str(db), read_only=True) as conn:
                conn.execute(f"COPY ({QUERY}) TO '{out}' (FORMAT parquet)")
            frame = pd.read_parquet(out)
            assert len(frame) == rows

        baseline = median_time(raw, repeat)
        ours = asyncio.run(_ours(root, str(db), rows, repeat))
        report.add(f"run_sql, {rows:,} rows (to Parquet, inventory, kernel DataFrame)", ours, baseline,
                   "DuckDB COPY -> Parquet -> pandas.read_parquet")


async def _ours(root: Path, db: str, rows: int, repeat: int) -> float:
    from jupyter_analyst.sql import open_source

    workspace = Workspace(root / "ws")
    thread = workspace.store.create_thread(source=db)
    source = open_source(db)
    runtime = ThreadRuntime(
        thread_id=thread.thread_id, source=source, artifacts=workspace.artifacts,
        workdir=workspace.kernel_dir(thread.thread_id), row_cap=rows + 1,
    )
    tools = ToolBox(runtime)
    await runtime.kernel()  # started once: the comparison is per query, not per kernel start
    ids = count()
    args = {"sql": QUERY, "name": "big_result"}
    plan = await tools.plan("run_sql", args)

    async def once() -> None:
        ctx = CallContext(thread.thread_id, "bench", f"call_{next(ids)}", rerun=True)
        outcome = await tools.call("run_sql", args, ctx, plan)
        assert outcome.status == "ok" and outcome.result["rows"] == rows, outcome.result
        runtime.loaded.clear()  # make every repetition load the DataFrame into the kernel again

    try:
        return await median_time_async(once, repeat)
    finally:
        await runtime.close()
        source.close()
        workspace.close()
