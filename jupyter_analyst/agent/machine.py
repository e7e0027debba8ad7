"""The guarded state machine of one turn.

``planning -> data_fetching | analyzing | presenting | completed``;
``data_fetching -> analyzing | presenting | error``;
``analyzing -> presenting | data_fetching | error``;
``presenting -> completed | analyzing | error``;
``error -> planning | completed``.

Each tool's spec names the state it runs in (see spec/contract.py): tools that only read
metadata (``list_tables``, ``describe_table``, ``list_artifacts``) do not move the machine;
``run_sql`` needs ``data_fetching`` and ``run_python`` needs ``analyzing``. A tool whose
state cannot be reached from the current one is refused with ``invalid_state`` and never
executed.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import AnalystError
from ..events import State

TRANSITIONS: Mapping[State, frozenset[State]] = {
    "planning": frozenset({"data_fetching", "analyzing", "presenting", "completed"}),
    "data_fetching": frozenset({"analyzing", "presenting", "error"}),
    "analyzing": frozenset({"presenting", "data_fetching", "error"}),
    "presenting": frozenset({"completed", "analyzing", "error"}),
    "error": frozenset({"planning", "completed"}),
    "completed": frozenset(),
}

TERMINAL: frozenset[State] = frozenset({"completed"})


class InvalidTransition(AnalystError):
    """A move the state machine does not allow."""

    reason = "invalid_state"


def allowed(from_state: State, to_state: State) -> bool:
    """Whether ``from_state -> to_state`` is a legal move (staying put always is, but in ``completed``).

    >>> allowed("planning", "data_fetching"), allowed("presenting", "data_fetching")
    (True, False)
    >>> allowed("analyzing", "analyzing")
    True
    """
    if from_state in TERMINAL:
        return False
    return to_state == from_state or to_state in TRANSITIONS[from_state]


class TurnStateMachine:
    """The current state of one turn and the moves it has made."""

    def __init__(self) -> None:
        self.state: State = "planning"
        self.history: list[State] = ["planning"]

    def can_enter(self, to_state: State) -> bool:
        """Whether the machine may move to ``to_state`` now."""
        return allowed(self.state, to_state)

    def enter(self, to_state: State) -> tuple[State, State] | None:
        """Move to ``to_state``; returns ``(from, to)``, or ``None`` when already there.

        Raises:
            InvalidTransition: when the move is not allowed.
        """
        if to_state == self.state and self.state not in TERMINAL:
            return None
        if not allowed(self.state, to_state):
            raise InvalidTransition(
                f"cannot go from {self.state} to {to_state}",
                hint=f"allowed from {self.state}: {', '.join(sorted(TRANSITIONS[self.state])) or 'nothing'}",
            )
        previous = self.state
        self.state = to_state
        self.history.append(to_state)
        return previous, to_state

    def may_run(self, target: State | None, *, replan: bool = False) -> bool:
        """Whether a tool that runs in ``target`` (``None``: any state, without a move) may run
        now; with ``replan``, a failed step (the ``error`` state) is first planned past, as a
        plan's next step is."""
        if self.state in TERMINAL:
            return False
        state: State = "planning" if replan and self.state == "error" else self.state
        return target is None or allowed(state, target)
