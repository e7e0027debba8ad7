"""The agent: the turn's loop (loop.py) and one call's pipeline (calls.py), over the tools
(tools/), the guards (guards/), the context pack (context/), the agent state's one owner
(memory/) and the thread's environment (environment/).

The names below are imported on first use: a process that only reads the scripted model's
name, or a budget's defaults, does not import the loop, the tools or the model's SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .context import STEP_BUDGET_MARKER, ContextBudget, state_summary
    from .environment import ThreadEnvironment
    from .guards import ANSWER_CHECK_MARKER
    from .eventlog import EventSink, EventWriter
    from .llm import SCRIPTED_MODEL, LLMClient, start_sdk_import
    from .loop import AgentLoop
    from .memory import SUMMARIZER_MARKER, ThreadMemory, summarize_turn
    from .spec import StepOutcome
    from .tools import ToolError, looks_only, result_models_by_tool, user_steps
    from .turn_record import USER_DRIVEN, TurnSummary

_HOME = {
    "AgentLoop": "loop",
    "TurnSummary": "turn_record",
    "USER_DRIVEN": "turn_record",
    "StepOutcome": "spec",
    "ToolError": "tools",
    "result_models_by_tool": "tools",
    "user_steps": "tools",
    "looks_only": "tools",
    "ThreadEnvironment": "environment",
    "ThreadMemory": "memory",
    "summarize_turn": "memory",
    "SUMMARIZER_MARKER": "memory",
    "LLMClient": "llm",
    "SCRIPTED_MODEL": "llm",
    "start_sdk_import": "llm",
    "EventWriter": "eventlog",
    "EventSink": "eventlog",
    "ContextBudget": "context",
    "state_summary": "context",
    "STEP_BUDGET_MARKER": "context",
    "ANSWER_CHECK_MARKER": "guards",
}

__all__ = [
    "ANSWER_CHECK_MARKER",
    "SCRIPTED_MODEL",
    "STEP_BUDGET_MARKER",
    "SUMMARIZER_MARKER",
    "USER_DRIVEN",
    "AgentLoop",
    "ContextBudget",
    "EventSink",
    "EventWriter",
    "LLMClient",
    "StepOutcome",
    "ThreadEnvironment",
    "ThreadMemory",
    "ToolError",
    "TurnSummary",
    "looks_only",
    "result_models_by_tool",
    "start_sdk_import",
    "state_summary",
    "summarize_turn",
    "user_steps",
]

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
