"""The one owner of a thread's memory as stored: its agent state and its messages.

Everything that reads or changes the agent state, or the messages sent to the model, goes
through :class:`ThreadMemory`: the turn as it runs (see turn_memory.py), the summarizer
after it, the turn's close once its notebook is written. Nothing else in the agent asks
the store for them. Every call blocks on the store: call it off the event loop.
"""

from __future__ import annotations

from typing import Any

from ...agent_state import AgentState, StateDelta
from ...ledger import Usage
from ...store import ThreadStore, Turn
from .observations import turn_closed


class ThreadMemory:
    """The agent state and the messages of one thread."""

    def __init__(self, store: ThreadStore, thread_id: str) -> None:
        self._store = store
        self.thread_id = thread_id

    def state(self, *, recent: int | None = None) -> AgentState:
        """The agent state; ``recent``: only the newest entities of each kind (what a prompt shows)."""
        return self._store.agent_state(self.thread_id, recent=recent)

    def apply(self, delta: StateDelta, *, origin: str, turn_id: str | None = None) -> AgentState:
        """Apply ``delta`` in one transaction, on top of the latest state; the new state (with
        the entities the delta touched)."""
        return self._store.apply_state_delta(self.thread_id, delta, origin=origin, turn_id=turn_id)

    def add_summarizer_usage(self, turn_id: str, usage: Usage) -> None:
        """What the end-of-turn summarizer's call cost, added to the turn's ledger."""
        self._store.add_summarizer_usage(turn_id, usage)

    def close_turn(self, turn_id: str, *, notebook: str) -> AgentState:
        """The turn's notebook, written, becomes the active notebook."""
        return self.apply(turn_closed(notebook=notebook), origin="turn", turn_id=turn_id)

    def turn(self, number: int) -> Turn | None:
        """The thread's turn ``number`` (its status and answer), if there is one."""
        return self._store.turn_numbered(self.thread_id, number)

    def append_message(self, turn_id: str, message: dict[str, Any]) -> None:
        """Keep one message of a turn (an OpenAI-style dict), in order."""
        self._store.append_message(self.thread_id, turn_id, message)

    def turn_messages(self, *, turns: int, after_turn: int, before_turn: int) -> dict[int, list[dict[str, Any]]]:
        """The messages of the last ``turns`` turns numbered above ``after_turn`` and below
        ``before_turn``, by turn number, in order."""
        rows = self._store.recent_turn_messages(
            self.thread_id, turns=turns, after_turn=after_turn, before_turn=before_turn
        )
        grouped: dict[int, list[dict[str, Any]]] = {}
        for number, message in rows:
            grouped.setdefault(number, []).append(message)
        return grouped

    def message_chars(self, *, after_turn: int, through_turn: int) -> int:
        """How many characters the messages of turns ``after_turn+1 .. through_turn`` hold."""
        return self._store.message_chars(self.thread_id, after_turn=after_turn, through_turn=through_turn)
