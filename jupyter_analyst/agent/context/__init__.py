"""The context pack: what every model call is sent, within a budget (pack.py), and the
system message's sections (sections.py), among them the agent state as the model reads it."""

from .pack import ContextBudget, ContextPack, estimate_tokens
from .sections import state_summary

__all__ = ["ContextBudget", "ContextPack", "estimate_tokens", "state_summary"]
