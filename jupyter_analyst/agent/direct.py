"""A turn the user drives: one tool call they typed (``%analyst_sql`` in their notebook),
through the same guards, reuse, events and memory as a call the model makes.

Nothing here asks a model. The call goes through :meth:`AgentLoop._handle`, the path every
model call takes (payload and name checks, state machine, planning with the SQL guard and
its unknown-name suggestions, reuse by step key, inventory, expectations), so the thread's
history and notebook show it as a step like any other, and a later turn of the model sees
the dataset it made.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Literal

from ..store import Turn
from .._clock import new_id
from ..events import AnswerReady, StateChanged, TurnEnded, TurnStarted
from .llm import ToolCall
from .loop import AgentLoop
from .turn_record import TurnRun, TurnSummary, TurnTrace
from .machine import TurnStateMachine
from .tools import StepOutcome
from .memory.thread_memory import TurnMemory

#: What a user-driven turn records as its "model": no model spoke in it.
USER_DRIVEN = "user"


async def run_user_call(
    loop: AgentLoop, turn: Turn, tool: str, arguments: dict[str, Any], *, rerun: bool = False
) -> tuple[TurnSummary, TurnTrace, StepOutcome]:
    """Run ``tool`` with ``arguments`` as the one step of ``turn``; every event is persisted
    before it is emitted, as in :meth:`AgentLoop.run`.

    Returns the turn's summary, its trace (for the notebook) and the call's outcome; a
    refused or failed call ends the turn with status ``error`` and its message.
    """
    started = time.perf_counter()
    memory = await asyncio.to_thread(
        TurnMemory, loop.store, loop.runtime, turn, budget=loop.budget, active_ttl_s=loop.active_ttl_s
    )
    run = TurnRun(turn, TurnStateMachine(), memory, rerun)
    machine, counters, trace = run.machine, run.counters, run.trace
    conversation: list[dict[str, Any]] = []
    await loop._remember(turn, conversation, {"role": "user", "content": turn.prompt})
    await loop.emit(turn, TurnStarted(prompt=turn.prompt, model=USER_DRIVEN, rerun=rerun))
    await loop.emit(turn, StateChanged(from_state=None, to_state="planning"))
    await asyncio.to_thread(memory.open)
    # Recorded as a call in the conversation, so the model's next turn sees what was fetched.
    call, args, problem = loop._normalise_call(ToolCall(id=new_id("call"), name=tool, arguments=json.dumps(arguments)))
    await loop._remember(turn, conversation, {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": call.id, "type": "function", "function": {"name": tool, "arguments": call.arguments}}],
    })
    outcome = await loop._handle(run, call, args, problem)
    await loop._remember(turn, conversation, {
        "role": "tool", "tool_call_id": call.id, "content": json.dumps(outcome.public_result, default=str),
    })
    await loop.runtime.settle()
    status: Literal["completed", "error"] = "completed" if outcome.status == "ok" else "error"
    answer = step_line(tool, outcome)
    if status == "completed":
        await loop._enter(turn, machine, "presenting")
        await loop.emit(turn, AnswerReady(text=answer))
        await loop._enter(turn, machine, "completed")
    elif machine.can_enter("error"):
        await loop._enter(turn, machine, "error")
    error = outcome.result.get("error") if status == "error" else None
    message = error.get("message") if isinstance(error, dict) else None
    await loop.emit(turn, TurnEnded(status=status, message=message, counters=dict(counters)))
    await asyncio.to_thread(loop.store.end_turn, turn.turn_id, status, answer=answer if status == "completed" else None)
    summary = TurnSummary(
        thread_id=turn.thread_id, turn_id=turn.turn_id, status=status,
        answer=answer if status == "completed" else "", model=USER_DRIVEN, transitions=machine.history,
        tool_calls={"executed": counters["executed"], "reused": counters["reused"], "blocked": counters["blocked"]},
        artifacts={"created": len(trace.created), "reused": len(trace.reused),
                   "total": loop.runtime.artifacts.count(turn.thread_id)},
        counters=dict(counters), timings={"total_s": round(time.perf_counter() - started, 4), "llm_s": 0.0},
        error=error if isinstance(error, dict) else None,
    )
    return summary, trace, outcome


def step_line(tool: str, outcome: StepOutcome) -> str:
    """One line saying what the step left behind, the turn's answer.

    >>> step_line("run_sql", StepOutcome(status="ok", result={"dataset": "revenue", "rows": 4}, reused=True))
    '`revenue`: 4 rows (reused)'
    """
    if outcome.status != "ok":
        error = outcome.result.get("error")
        return str(error.get("message")) if isinstance(error, dict) else f"{tool} did not run"
    if tool == "run_sql":
        how = "reused" if outcome.reused else "executed"
        return f"`{outcome.result.get('dataset')}`: {outcome.result.get('rows')} rows ({how})"
    return f"{tool} done"
