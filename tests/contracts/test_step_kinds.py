"""The kinds of recorded step (``step_kinds.py``, below the agent) and the tools that record
them (their specs' ``recorded_as``) agree: a step's record is read as what its tool made."""

from __future__ import annotations

from typing import get_args

import pytest

import jupyter_analyst.agent.tools  # noqa: F401 - registers the built-in tools
from jupyter_analyst.agent.spec import ToolSpec, registered
from jupyter_analyst.step_kinds import QUERY_STEP, STEP_KINDS, STEP_TOOLS, StepTool, step_kind


def test_each_kind_is_recorded_by_the_registered_tool_of_its_name():
    recording = {spec.name: spec.recorded_as for spec in registered() if spec.recorded_as is not None}
    assert recording == dict(STEP_KINDS)
    assert STEP_TOOLS == get_args(StepTool)


def test_a_kinds_arguments_are_its_tools():
    for spec in registered():
        kind = step_kind(spec.name)
        assert (kind is not None) == (spec.recorded_as is not None), spec.name
        if kind is None:
            continue
        assert spec.step and spec.payload == kind.payload and kind.payload in spec.required
        if kind.dataset_argument is not None:
            assert kind.dataset_argument in spec.required


def test_a_spec_recording_another_tools_kind_is_refused():
    with pytest.raises(ValueError, match="'toy' is no step"):
        ToolSpec(name="toy", description="", step=True, recorded_as=QUERY_STEP, run=lambda *a: None)
