"""A "continue" turn's non-LLM time vs the first turn's, on the demo's scripted conversation."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from pathlib import Path

from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
from jupyter_analyst.cli.demo import DEMO_SCRIPT, FIRST_PROMPT, build_sample_database
from jupyter_analyst.testing import ScriptedModelServer

from .common import Report


def _non_llm(summary) -> float:
    return summary.timings["total_s"] - summary.timings["llm_s"]


def bench_continue(report: Report, *, rows: int, repeat: int) -> None:
    firsts, seconds = [], []
    with tempfile.TemporaryDirectory(prefix="bench-continue-") as tmp, ScriptedModelServer(DEMO_SCRIPT) as server:
        db = build_sample_database(Path(tmp) / "sales.duckdb")
        model = ModelSettings(model="jupyter-analyst-scripted", base_url=server.base_url, api_key="x")
        for i in range(max(1, repeat // 2)):
            config = AnalystConfig(workspace=Path(tmp) / f"ws{i}")
            first = asyncio.run(run_turn(TurnRequest(prompt=FIRST_PROMPT, source=str(db)), config=config, model=model))
            second = asyncio.run(
                run_turn(TurnRequest(prompt="continue", thread_id=first.thread_id), config=config, model=model)
            )
            assert second.tool_calls["executed"] == 0 and second.artifacts["created"] == 0
            firsts.append(_non_llm(first))
            seconds.append(_non_llm(second))
    report.add("'continue' turn, non-LLM time", statistics.median(seconds), statistics.median(firsts),
               "first turn, non-LLM time (includes the kernel start)")
