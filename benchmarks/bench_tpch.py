"""TPC-H's 22 queries through ``run_sql`` vs DuckDB straight to Arrow, on the same database.

Ours is ``ToolBox.plan`` + ``ToolBox.call("run_sql")``: the SQL checked in the worker,
run, written as Parquet and fingerprinted, stored in the inventory; measured twice, with
no kernel started (a turn of SQL steps only) and with the thread's kernel running (each
result also loaded as a DataFrame, in the background once the step has returned its result:
that load is awaited after the timing, before the next query runs). The baseline is ``cursor.sql(query).to_arrow_table()``
on the same DuckDB instance, so both read warm caches. Every run of ours sends a new text
(a comment with its number) under a new dataset name, so its SQL is checked, and starts
running as soon as it is cleared, as a new query's would. Each query is run once each way to
warm up, then ``repeat`` times alternately; the figures are medians, combined over the
22 queries as geometric means (the geomean of the per-query ratios is their ratio).

The pass with no kernel also runs each query's one text again and again (a rerun of what
was asked before): its check is answered from the process's cache of checked texts, so the
difference between the two is what checking a new query costs (parse, read-only guard,
columns and canonical form, in the checker's process).

The scale factor is ``JUPYTER_ANALYST_TPCH_SF``, else 1 (0.1 when ``--rows`` is below a
million, as ``--quick`` runs); the generated database is cached (see tpch.py).
"""

from __future__ import annotations

import asyncio
import math
import os
import statistics
import tempfile
import time
from itertools import count
from pathlib import Path

from jupyter_analyst.agent.environment import ThreadEnvironment
from jupyter_analyst.agent.spec import CallContext
from jupyter_analyst.agent.tools import ToolBox
from jupyter_analyst.workspace import Workspace

from . import tpch
from .common import Report

DIRECT = "DuckDB cursor.sql(q).to_arrow_table(), same instance"
#: Numbers the runs' texts in this process: no pass sends a text an earlier pass sent (the
#: checker remembers the texts it checked, process-wide).
_CALLS = count()


def scale_factor(rows: int) -> float:
    """The scale factor of this run."""
    chosen = os.environ.get("JUPYTER_ANALYST_TPCH_SF")
    return float(chosen) if chosen else (1.0 if rows >= 1_000_000 else 0.1)


def bench_tpch(report: Report, *, rows: int, repeat: int) -> None:
    sf = scale_factor(rows)
    db = tpch.database(sf)
    for with_kernel in (False, True):
        ours, direct, again = asyncio.run(_measure(db, repeat, with_kernel=with_kernel))
        where = "with the kernel running (DataFrames loaded)" if with_kernel else "no kernel started"
        ratios = {n: ours[n] / direct[n] for n in ours}
        worst = max(ratios, key=ratios.__getitem__)
        report.add(f"TPC-H SF{sf:g}, 22 queries through run_sql, {where}: geomean per query",
                   _geomean(ours.values()), _geomean(direct.values()), DIRECT)
        if again:
            report.add(f"TPC-H SF{sf:g}, the same texts run again (checks answered from the cache), {where}: "
                       "geomean per query", _geomean(again.values()), _geomean(direct.values()), DIRECT)
        report.add(f"TPC-H SF{sf:g}, {where}: worst query, q{worst}", ours[worst], direct[worst], DIRECT)
        report.add(f"TPC-H SF{sf:g}, {where}: all 22 queries, summed", sum(ours.values()), sum(direct.values()), DIRECT)
        report.note(f"TPC-H SF{sf:g} {where}, ratio per query: "
                    + ", ".join(f"q{n} {ratios[n]:.2f}x" for n in sorted(ratios)))


def _geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


async def _measure(
    db: Path, repeat: int, *, with_kernel: bool,
) -> tuple[dict[int, float], dict[int, float], dict[int, float]]:
    """Median seconds per query: ours and DuckDB's, run alternately, and (with no kernel)
    ours again on one text per query, checked once."""
    from jupyter_analyst.sql import open_source

    with tempfile.TemporaryDirectory(prefix="bench-tpch-") as tmp:
        workspace = Workspace(Path(tmp) / "ws")
        thread = workspace.store.create_thread(source=str(db))
        source = open_source(str(db))
        runtime = ThreadEnvironment(
            thread_id=thread.thread_id, source=source, artifacts=workspace.artifacts,
            workdir=workspace.kernel_dir(thread.thread_id),
        )
        tools = ToolBox(runtime)
        if with_kernel:
            await runtime.kernel()

        async def ours(number: int, *, again: bool = False) -> float:
            call = next(_CALLS)
            # A new text each time: checked as a new query would be (not found among those
            # checked); or, ``again``, the query's one text, checked at its first run only.
            # A new query comes with a new dataset name (a name asked for before is taken
            # for the same query again, which starts no run before its key is known).
            text, name = ("/* again */ ", f"q{number}") if again else (f"/* run {call} */ ", f"q{number}_{call}")
            args = {"sql": text + tpch.QUERIES[number], "name": name}
            ctx = CallContext(thread.thread_id, "bench", f"call_{call}", rerun=True)
            started = time.perf_counter()
            plan = await tools.plan("run_sql", args)
            outcome = await tools.call("run_sql", args, ctx, plan)
            took = time.perf_counter() - started
            assert outcome.status == "ok" and outcome.result["rows"] > 0, (number, outcome.result)
            # The DataFrame loads after the step returns, as the model's next call is made: it is
            # in the kernel before the next step (here, the next query) runs.
            await runtime.settle()
            runtime.loaded.clear()  # each repetition loads its DataFrame again
            return took

        def direct(number: int) -> float:
            cursor = source.cursor()
            try:
                started = time.perf_counter()
                table = cursor.sql(tpch.QUERIES[number]).to_arrow_table()
                took = time.perf_counter() - started
            finally:
                cursor.close()
            assert table.num_rows > 0, number
            return took

        mine: dict[int, float] = {}
        theirs: dict[int, float] = {}
        rerun: dict[int, float] = {}
        try:
            for number in tpch.QUERIES:
                await ours(number)
                direct(number)
                if not with_kernel:
                    await ours(number, again=True)
                a, b, c = [], [], []
                for _ in range(repeat):
                    b.append(direct(number))
                    a.append(await ours(number))
                    if not with_kernel:
                        c.append(await ours(number, again=True))
                mine[number], theirs[number] = statistics.median(a), statistics.median(b)
                if c:
                    rerun[number] = statistics.median(c)
        finally:
            await runtime.close()
            source.close()
            workspace.close()
        return mine, theirs, rerun
