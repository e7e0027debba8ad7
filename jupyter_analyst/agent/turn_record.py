"""What one turn is made of while it runs, and what it did: the summary the CLI prints,
the trace the notebook is made from, and the state its calls share."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from ..store import Turn
from ..events import State
from .machine import TurnStateMachine
from .tools import StepOutcome
from .memory.thread_memory import TurnMemory


class TurnSummary(BaseModel):
    """What a turn did, as the CLI prints it with ``--json``."""

    thread_id: str
    turn_id: str
    status: Literal["completed", "error", "interrupted"]
    answer: str
    model: str
    transitions: list[State]
    tool_calls: dict[str, int]
    artifacts: dict[str, int]
    counters: dict[str, int]
    timings: dict[str, float] = {}
    notebook: str | None = None
    error: dict[str, Any] | None = None


@dataclass
class StepTrace:
    """One executed or reused SQL/Python step, kept for the notebook."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    outcome: StepOutcome
    state: State


@dataclass
class TurnTrace:
    """Everything a turn did, in order, for the summary and the notebook."""

    steps: list[StepTrace] = field(default_factory=list)
    created: set[str] = field(default_factory=set)
    reused: set[str] = field(default_factory=set)


@dataclass
class TurnRun:
    """What one turn's calls share: its state machine, counters, trace and memory."""

    turn: Turn
    machine: TurnStateMachine
    memory: TurnMemory
    rerun: bool
    counters: Counter[str] = field(default_factory=Counter)
    trace: TurnTrace = field(default_factory=TurnTrace)
    turn_keys: dict[str, StepOutcome] = field(default_factory=dict)
    """Step keys run in this turn -> their outcome."""
    empty_retries: set[str] = field(default_factory=set)
    """Tools that already had their one guided retry for an empty payload."""
    remembering: asyncio.Lock = field(default_factory=asyncio.Lock)
    """The turn's memory is read and written by one call at a time (a plan's queries run together)."""

    async def remember(self, method: Any, /, *args: Any, **kwargs: Any) -> Any:
        """``method(*args, **kwargs)`` of the turn's memory, off the event loop, one at a time."""
        async with self.remembering:
            return await asyncio.to_thread(method, *args, **kwargs)
