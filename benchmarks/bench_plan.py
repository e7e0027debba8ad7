"""A staged plan of 4 independent queries vs the same 4 queries as calls one after another.

Both are whole turns through the loop with the scripted model (its own time is next to
nothing): each query is checked, run, written to Parquet, fingerprinted and stored. The
floor is DuckDB itself running the 4 queries one after another into Arrow.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
from jupyter_analyst.testing import ScriptedModelServer, call_step, sql_step, text_step

from .common import Report

QUERIES = {
    "by_day": "SELECT day, COUNT(*) AS n, SUM(amount) AS total FROM sales GROUP BY day ORDER BY day",
    "by_store": "SELECT store, AVG(amount) AS mean, MAX(amount) AS top FROM sales GROUP BY store ORDER BY store",
    "by_product": ("SELECT product, SUM(amount * qty) AS revenue, COUNT(DISTINCT store) AS stores FROM sales "
                   "GROUP BY product ORDER BY product"),
    "big_orders": "SELECT store, day, amount FROM sales WHERE amount > 990 ORDER BY amount DESC, store, day LIMIT 50000",
}


def _database(path: Path, rows: int) -> Path:
    with duckdb.connect(str(path)) as conn:
        conn.execute(
            f"CREATE TABLE sales AS SELECT (i % 365) AS day, (i % 97) AS store, (i % 5003) AS product, "
            f"((i * 7919) % 100000) / 100.0 AS amount, (i % 9) + 1 AS qty FROM range({rows}) t(i)")
    return path


def _plan_script() -> dict:
    steps = [{"id": name, "tool": "run_sql", "arguments": {"sql": sql, "name": name}} for name, sql in QUERIES.items()]
    return {"turns": [{"steps": [call_step("plan", goal="four summaries", stages=[{"mode": "parallel", "steps": steps}]),
                                 text_step()]}]}


def _calls_script() -> dict:
    return {"turns": [{"steps": [*(sql_step(sql, name) for name, sql in QUERIES.items()), text_step()]}]}


def _turn(script: dict, db: Path, workspace: Path) -> float:
    with ScriptedModelServer(script) as server:
        model = ModelSettings(model="jupyter-analyst-scripted", base_url=server.base_url, api_key="x")
        config = AnalystConfig(workspace=workspace, summarizer=False)
        started = time.perf_counter()
        summary = asyncio.run(run_turn(TurnRequest(prompt="four summaries", source=str(db)), config=config, model=model))
        took = time.perf_counter() - started
    assert summary.status == "completed" and summary.tool_calls["executed"] == len(QUERIES), summary
    return took


def _direct(db: Path) -> float:
    with duckdb.connect(str(db), read_only=True) as conn:
        started = time.perf_counter()
        for sql in QUERIES.values():
            conn.sql(sql).to_arrow_table()
        return time.perf_counter() - started


def bench_plan(report: Report, *, rows: int, repeat: int) -> None:
    plans, calls, direct = [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as tmp:
        db = _database(Path(tmp) / "sales.duckdb", rows * 10)
        # Once before measuring: the SQL checker's worker processes start, imports load.
        _turn(_plan_script(), db, Path(tmp) / "warm")
        _direct(db)
        for i in range(max(1, repeat)):  # each turn in a new workspace: every query really runs
            order = [(plans, _plan_script()), (calls, _calls_script())]
            for times, script in order if i % 2 else reversed(order):
                times.append(_turn(script, db, Path(tmp) / f"ws{i}-{len(times)}-{id(times)}"))
            direct.append(_direct(db))
    ours, one_by_one, floor = statistics.median(plans), statistics.median(calls), statistics.median(direct)
    report.add("plan of 4 independent queries, whole turn", ours, floor,
               "DuckDB direct, the 4 queries one after another into Arrow",
               peer=one_by_one, peer_name="the same 4 as run_sql calls one after another")
    report.note(f"{rows * 10:,}-row table; plan concurrency 4; each turn in a new workspace (no reuse); "
                f"wall time of the whole turn with the scripted model, kernel never started; measured after one "
                f"warm-up turn, the two kinds of turn alternating")
