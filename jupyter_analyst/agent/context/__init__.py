"""The context pack: what every model call is sent, within a budget (pack.py), and the
system message's sections (sections.py), among them the agent state as the model reads it."""

from .pack import ContextBudget, ContextPack, answers_only, compact_value, well_formed
from .previous import offered_next
from .sections import STATE_ENTRIES, STEP_BUDGET_MARKER, state_summary, step_budget_note, turn_span

__all__ = [
    "STATE_ENTRIES", "STEP_BUDGET_MARKER", "ContextBudget", "ContextPack", "answers_only", "compact_value",
    "offered_next", "state_summary", "step_budget_note", "turn_span", "well_formed",
]
