"""A refusal tells the model what happened and what to do, in its terms, not the machine's."""

from __future__ import annotations

import pytest

from jupyter_analyst.agent.guards import state_refusal
from jupyter_analyst.agent.machine import TurnStateMachine
import jupyter_analyst.agent.tools  # noqa: F401 - registers the built-in tools
from jupyter_analyst.agent.spec import spec_of


@pytest.mark.parametrize("path", [["data_fetching", "error"], ["presenting"], ["presenting", "completed"]])
def test_a_state_refusal_says_what_to_do(path):
    machine = TurnStateMachine()
    for state in path:
        machine.enter(state)
    refusal = state_refusal(machine, spec_of("run_sql"), in_plan=False)
    assert refusal is not None and refusal.reason == "invalid_state"
    error = refusal.error.to_dict()
    assert error["message"].startswith("run_sql was not run: ")
    assert error["hint"] and ("call it again" in error["hint"] or "answer with what you have" in error["hint"])
    # No internal wording: states and moves of the machine are not the model's concern.
    for internal in ("data_fetching", "cannot move to", "the turn is error", machine.state + " and"):
        assert internal not in error["message"] + error["hint"]
