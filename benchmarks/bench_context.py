"""Prompt size and context-assembly time on a long thread, vs sending the thread whole.

A synthetic 200-turn thread (each turn a query, its result with sample rows, an answer;
five artifacts per turn, so 1,000 in all) is built in a real workspace. At 20, 100 and
200 turns we time what the agent does before each model call (read the agent state, the
recent turns and the inventory from SQLite; shape and bound them) and estimate the
prompt's tokens, against the naive prompt: the system message with the whole inventory
and every message of the thread.

The tool block (the ``tools`` of every request, as JSON) is measured beside it: with every
tool offered, and as a thread's first request offers it (no notebook, no artifact yet),
against its size before it was made lean.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_analyst.agent.context import ContextBudget, ContextPack
from jupyter_analyst.agent.context.pack import estimate_tokens
from jupyter_analyst.agent.context.sections import RULES, schema_summary
from jupyter_analyst.agent.environment import ThreadEnvironment
from jupyter_analyst.agent.memory import ThreadMemory, TurnMemory
import jupyter_analyst.agent.tools  # noqa: F401 - registers the built-in tools
from jupyter_analyst.agent.spec import tool_schemas
from jupyter_analyst.agent_state import ActiveValue, Addition, StateDelta, StatePatch
from jupyter_analyst._clock import utc_now
from jupyter_analyst.cli.demo import build_sample_database
from jupyter_analyst.sql import open_source
from jupyter_analyst.store import Turn
from jupyter_analyst.workspace import Workspace

from .common import Report

CHECKPOINTS = (20, 100, 200)
ARTIFACTS_PER_TURN = 5
#: ``json.dumps`` of every tool's schema at commit f689565, before the tool block was made lean.
TOOL_BLOCK_BEFORE = 8_534


def _turn_messages(n: int) -> list[dict]:
    result = {
        "dataset": f"d{n}", "artifact_id": f"art_{n:016x}", "rows": 120,
        "columns": [{"name": c, "type": "DOUBLE"} for c in ("region", "month", "revenue", "orders")],
        "sample": [{"region": "North", "month": f"2025-{m:02d}", "revenue": 1000.5 + m, "orders": m} for m in range(1, 6)],
        "intent_note": f"from orders, regions; measures: revenue = SUM(o.revenue); by: region, month; {n} rows",
        "reused": False,
    }
    return [
        {"role": "user", "content": f"question {n}: revenue by region and month, filtered to segment {n}"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": f"call_{n}", "type": "function", "function": {
            "name": "run_sql",
            "arguments": json.dumps({"sql": f"SELECT region, month, SUM(revenue) FROM sales WHERE seg = {n} GROUP BY ALL",
                                     "name": f"d{n}"})}}]},
        {"role": "tool", "tool_call_id": f"call_{n}", "content": json.dumps(result)},
        {"role": "assistant", "content": f"In segment {n}, North leads with 1,234.5 (dataset `d{n}`, art_{n:016x})."},
    ]


def _grow(ws: Workspace, thread_id: str, start: int, stop: int) -> None:
    store, artifacts = ws.store, ws.artifacts
    for n in range(start, stop + 1):
        turn = store.start_turn(thread_id, f"question {n}")
        for message in _turn_messages(n):
            store.append_message(thread_id, turn.turn_id, message)
        store.end_turn(turn.turn_id, "completed", answer=f"answer {n}")
        for k in range(ARTIFACTS_PER_TURN):
            artifacts.add_bytes(f"turn {n} artifact {k}".encode(), thread_id=thread_id, name=f"t{n}-{k}.png",
                                type="image", mime="image/png", producer="python", source_call_id=f"call_{n}")
        charts = [
            Addition(section="entities", value={"id": f"artifact:art_{n:012x}{k:04x}", "kind": "artifact",
                                                "name": f"art_{n:012x}{k:04x}", "derived_from": [f"dataset:d{n}"],
                                                "detail": {"file": f"t{n}-{k}.png", "type": "image"}})
            for k in range(ARTIFACTS_PER_TURN)
        ]
        store.apply_state_delta(thread_id, StateDelta(
            add=[Addition(section="entities", value={"id": f"dataset:d{n}", "kind": "dataset", "name": f"d{n}",
                                                     "derived_from": ["table:orders"],
                                                     "detail": {"artifact_id": f"art_{n:016x}", "intent": "from orders"}}),
                 *charts],
            patch=StatePatch(active={"dataset": ActiveValue(value=f"d{n}", last_used=utc_now())}),
        ), origin="bench")


def _whole_prompt(ws: Workspace, runtime: ThreadEnvironment, thread_id: str) -> list[dict]:
    """The naive prompt: every message, the whole inventory."""
    source = runtime.source
    system = (RULES.format(dialect=source.dialect) + schema_summary(source.schema())
              + "\n".join(json.dumps(a.summary()) for a in ws.artifacts.list(thread_id)))
    return [{"role": "system", "content": system}, *ws.store.messages(thread_id), {"role": "user", "content": "next"}]


def bench_context(report: Report, *, rows: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-context-") as tmp:
        db = build_sample_database(Path(tmp) / "sales.duckdb")
        ws = Workspace(Path(tmp) / "ws")
        source = open_source(str(db))
        thread = ws.store.create_thread(user="bench", source=str(db), title="long thread")
        runtime = ThreadEnvironment(thread_id=thread.thread_id, source=source, artifacts=ws.artifacts,
                                workdir=ws.kernel_dir(thread.thread_id))
        before = "the tool block at f689565, every tool"
        report.add("tool block, every tool offered", len(json.dumps(tool_schemas())), TOOL_BLOCK_BEFORE, before,
                   unit="chars")
        report.add("tool block, a thread's first request (no notebook, no artifact)",
                   len(json.dumps(tool_schemas(runtime))), TOOL_BLOCK_BEFORE, before, unit="chars")
        done = 0
        for checkpoint in CHECKPOINTS:
            _grow(ws, thread.thread_id, done + 1, checkpoint)
            done = checkpoint
            nxt = Turn(turn_id="turn_bench", thread_id=thread.thread_id, number=checkpoint + 1, prompt="next",
                       status="running", started_at=utc_now())
            current = [{"role": "user", "content": "next"}]
            ours_t, whole_t = [], []
            tokens = whole_tokens = 0
            for _ in range(max(3, repeat)):
                t0 = time.perf_counter()
                messages, usage = opened_context(ws, runtime, nxt).messages(1, current)
                ours_t.append(time.perf_counter() - t0)
                tokens = usage.tokens
                t0 = time.perf_counter()
                whole = _whole_prompt(ws, runtime, thread.thread_id)
                whole_tokens = sum(estimate_tokens(json.dumps(m)) for m in whole)
                whole_t.append(time.perf_counter() - t0)
            report.add(f"prompt tokens, {checkpoint} turns / {checkpoint * ARTIFACTS_PER_TURN} artifacts",
                       tokens, whole_tokens, "the whole thread and inventory", unit="tok")
            report.add(f"context assembly, {checkpoint} turns", statistics.median(ours_t) * 1000,
                       statistics.median(whole_t) * 1000, "reading and serialising the whole thread", unit="ms")
        report.note("prompt tokens are estimated at 4 characters per token; ours must stay flat from 20 to 200 turns")
        report.note("the tool block is sent beside the prompt on every request and not counted in its tokens; "
                    "its budget is 5,000 characters with every tool offered")
        source.close()
        ws.close()


def _budget() -> ContextBudget:
    return ContextBudget()


def opened_context(ws: Workspace, runtime: ThreadEnvironment, turn: Turn) -> ContextPack:
    """What a turn does before its first model call: its memory opened, its earlier turns read."""
    memory = TurnMemory(ThreadMemory(ws.store, turn.thread_id), runtime, turn)
    context = ContextPack(runtime, memory, budget=_budget(), active_ttl_s=1e9)
    memory.open()
    context.load()
    return context
