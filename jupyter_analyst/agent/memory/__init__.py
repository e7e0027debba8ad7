"""How the agent state changes: the one owner of a thread's state and messages
(:class:`ThreadMemory`), a turn's view of them (:class:`TurnMemory`), the deterministic
updates tool results imply, and the summarizer after the turn."""

from .summarizer import MARKER as SUMMARIZER_MARKER
from .summarizer import summarize_turn
from .thread_memory import ThreadMemory
from .turn_memory import TurnMemory

__all__ = ["SUMMARIZER_MARKER", "ThreadMemory", "TurnMemory", "summarize_turn"]
