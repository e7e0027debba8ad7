"""A running SQL step's progress, told while it runs: rising, bounded, kept with the thread,
said by no engine without an estimate, and never in the way of a stop."""

from __future__ import annotations

import asyncio
import io
import time

import duckdb
import pytest

from jupyter_analyst.agent.tools import live_progress
from jupyter_analyst.agent.tools.live_progress import LiveProgress
from jupyter_analyst.progress import ProgressPrinter
from jupyter_analyst.sql import QueryProgress
from jupyter_analyst.store import ThreadStore
from jupyter_analyst.testing import ScriptedModelServer, TurnRunner, sql_step, text_step as say
from jupyter_analyst.testing.slow_queries import ENDLESS, JOIN, build_join_db


@pytest.fixture(scope="module")
def join_db(tmp_path_factory):
    return build_join_db(tmp_path_factory.mktemp("progress") / "join.duckdb")


@pytest.fixture
def often(monkeypatch):
    """Progress read every 50 ms from the query's first 100 ms (every 0.5 s from 1 s by default)."""
    monkeypatch.setattr(live_progress, "EVERY_S", 0.05)
    monkeypatch.setattr(live_progress, "AFTER_S", 0.1)


def test_only_a_rise_of_the_engines_estimate_is_told_and_no_estimate_says_nothing():
    estimates = iter([-1.0, 3.2, 3.9, 2.0, 17.5, -1.0, 99.97, 100.0])
    told = []

    async def emit(event):
        told.append(event)

    async def run():
        progress = QueryProgress()
        progress.watch(lambda: next(estimates, 100.0))
        live = LiveProgress(emit, "call_1", progress, every_s=0.001, after_s=0.0)
        while len(told) < 3:
            await asyncio.sleep(0.001)
        await live.close()
        progress.unwatch()
        count = len(told)
        await asyncio.sleep(0.01)
        assert len(told) == count, "nothing is told once the step has ended"

    asyncio.run(run())
    assert [e.percent for e in told] == [3, 17, 99]
    assert all(e.call_id == "call_1" and e.type == "step_progress" and e.elapsed_s >= 0 for e in told)


def test_a_long_query_is_seen_rising_before_its_result_and_the_thread_keeps_it(tmp_path, join_db, often):
    with ScriptedModelServer({"turns": [{"steps": [sql_step(JOIN, "by_k"), say("[scripted] done")]}]}) as server:
        a = TurnRunner(tmp_path / "ws", server, join_db)
        summary = a.run("how many pairs per k?")
    assert summary.status == "completed", summary.error
    kinds = [e.type for e in a.events]
    progress = a.of_type("step_progress")
    (call,) = a.of_type("tool_call")
    (result,) = a.of_type("tool_result")
    assert result.status == "ok" and result.result["rows"] == 1000
    # Told as it ran: rising, the first long before the step's result, all of this step.
    assert len(progress) >= 3 and kinds.index("step_progress") < kinds.index("tool_result")
    percents = [e.percent for e in progress]
    assert percents == sorted(set(percents)) and percents[-1] >= 50 and percents[-1] <= 99, percents
    assert [e.elapsed_s for e in progress] == sorted(e.elapsed_s for e in progress)
    assert {e.call_id for e in progress} == {call.call_id}
    # Persisted like any event: a reload shows how far it got.
    store = ThreadStore(tmp_path / "ws" / "analyst.sqlite3")
    try:
        kept = store.events(summary.thread_id, types=["step_progress"])
    finally:
        store.close()
    assert [(e.seq, e.percent) for e in kept] == [(e.seq, e.percent) for e in progress]
    # The CLI's progress lines say it, a line for each tenth of the query it reaches.
    out = io.StringIO()
    printer = ProgressPrinter(out)
    for event in a.events:
        printer(event)
    said = [line.strip() for line in out.getvalue().splitlines() if line.strip().startswith("running ")]
    firsts = [e for i, e in enumerate(progress) if i == 0 or e.percent // 10 > progress[i - 1].percent // 10]
    assert said == [f"running {e.elapsed_s:.0f} s, {e.percent} % done" for e in firsts]


def test_stop_during_a_query_that_tells_progress_ends_the_turn_at_once(tmp_path, join_db, often):
    from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn

    seen: list = []

    async def scenario() -> float:
        told = asyncio.Event()

        def on_event(event) -> None:
            seen.append(event)
            if event.type == "step_progress":
                told.set()

        with ScriptedModelServer({"turns": [{"steps": [sql_step(ENDLESS, "forever"), say()]}]}) as server:
            model = ModelSettings(model="jupyter-analyst-scripted", base_url=server.base_url, api_key="x")
            task = asyncio.create_task(run_turn(
                TurnRequest(prompt="count forever", source=str(join_db)),
                config=AnalystConfig(workspace=tmp_path / "ws", summarizer=False), model=model, on_event=on_event))
            await asyncio.wait_for(told.wait(), timeout=60)
            stopped = time.perf_counter()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            return time.perf_counter() - stopped

    took = asyncio.run(scenario())
    assert took < 5.0, f"the stop took {took:.1f} s"
    assert seen[-1].type == "turn_ended" and seen[-1].status == "interrupted"
    assert not [e for e in seen if e.type == "tool_result"]
    told = [e for e in seen if e.type == "step_progress"]
    assert told and all(e.percent == 0 for e in told)  # hours of work: none of it done, truly
    staged = tmp_path / "ws" / "artifacts" / ".incoming"
    assert not staged.is_dir() or not [p for p in staged.iterdir() if p.suffix == ".parquet"]
    duckdb.connect(str(join_db)).close()  # nothing still runs a query on it
