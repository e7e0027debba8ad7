"""Every allowed and every forbidden transition of the turn state machine."""

from itertools import product
from typing import get_args

import pytest

from jupyter_analyst.agent.spec.contract import tool_states
from jupyter_analyst.events import State
from jupyter_analyst.agent.machine import (
    TRANSITIONS,
    InvalidTransition,
    TurnStateMachine,
    allowed,
)

STATES: tuple[str, ...] = get_args(State)

# The table of DESIGN.md, written out independently of the implementation.
EXPECTED = {
    ("planning", "data_fetching"), ("planning", "analyzing"), ("planning", "presenting"),
    ("planning", "completed"),
    ("data_fetching", "analyzing"), ("data_fetching", "presenting"), ("data_fetching", "error"),
    ("analyzing", "presenting"), ("analyzing", "data_fetching"), ("analyzing", "error"),
    ("presenting", "completed"), ("presenting", "analyzing"), ("presenting", "error"),
    ("error", "planning"), ("error", "completed"),
}
PAIRS = [(a, b) for a, b in product(STATES, STATES) if a != b]


def machine_in(state: str) -> TurnStateMachine:
    m = TurnStateMachine()
    m.state = state  # type: ignore[assignment]
    return m


def test_table_matches_design():
    declared = {(a, b) for a, targets in TRANSITIONS.items() for b in targets}
    assert declared == EXPECTED


@pytest.mark.parametrize(("src", "dst"), sorted(EXPECTED))
def test_allowed_transition(src, dst):
    m = machine_in(src)
    assert m.enter(dst) == (src, dst)
    assert m.state == dst


@pytest.mark.parametrize(("src", "dst"), sorted(set(PAIRS) - EXPECTED))
def test_forbidden_transition_refused(src, dst):
    m = machine_in(src)
    with pytest.raises(InvalidTransition) as info:
        m.enter(dst)
    assert info.value.reason == "invalid_state"
    assert m.state == src, "a refused move leaves the state as it was"


def test_staying_put_is_not_a_move_but_completed_is_final():
    m = TurnStateMachine()
    assert m.enter("planning") is None
    m.enter("completed")
    assert not allowed("completed", "completed")
    assert not m.may_run(None)  # not even a tool that runs in any state (list_tables)


def test_history_records_moves_in_order():
    m = TurnStateMachine()
    for s in ("data_fetching", "analyzing", "data_fetching", "error", "planning", "presenting", "completed"):
        m.enter(s)
    assert m.history == [
        "planning", "data_fetching", "analyzing", "data_fetching", "error", "planning", "presenting",
        "completed",
    ]


@pytest.mark.parametrize("state", [s for s in STATES if s != "completed"])
def test_which_tools_may_run(state):
    m = machine_in(state)
    for tool, target in tool_states().items():
        expected = target is None or target == state or (state, target) in EXPECTED
        assert m.may_run(target) is expected, (state, tool)
