"""What a tool's result holds: one pydantic model per tool (its spec's ``result_model``), and
the one model of a call that was refused or failed before it could say more.

A result is built as a dict by its tool (``StepOutcome.result``) and sent as it is, to the
model and in the ``tool_result`` event; its model says what that dict holds, for the panel
(the OpenAPI document's components, the panel's generated types) and for the tests, which
validate every result of real turns against it (tests/agent/tools/test_result_models.py): a model
that drifts from the code that builds the result fails there. Models refuse keys they do
not name, so a field added to a result must be added to its model.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ...agent_state import ExpectationStatus
from ..spec import registered, spec_of


class ResultModel(BaseModel):
    """A tool's result: exactly the keys its tool writes."""

    model_config = ConfigDict(extra="forbid")


class ExpectationVerdict(ResultModel):
    """The verdict on the ``expect`` of the call (guards/expectations.py), added to its result."""

    status: ExpectationStatus
    rule: str | None
    """The rule that decided (``ids``, ``type``, ``count``, ``columns``); none when none could be compared."""
    detail: str


class ToolErrorDetail(BaseModel):
    """An error as the model is told it (``AnalystError.to_dict()``)."""

    # Keys beside these are what locates the error, and vary with it (an error's ``context``).
    model_config = ConfigDict(extra="allow")

    reason: str
    """A reason code (errors.py)."""
    message: str
    hint: str | None = None
    suggestions: list[str] | None = None
    """The nearest real names, for a name the model got wrong."""


class ToolError(ResultModel):
    """The result of a call that was refused, or failed before its tool could say more: its
    error alone (a tool that ran and failed may say what it did, in its own model: a Python
    step's output, a plan's steps)."""

    error: ToolErrorDetail
    expectation: ExpectationVerdict | None = None


def result_models_by_tool() -> dict[str, type[BaseModel]]:
    """The result model of every registered tool that has one, by tool name."""
    return {spec.name: spec.result_model for spec in registered() if spec.result_model is not None}


def result_model_for(tool: str, status: str, result: dict[str, Any]) -> type[BaseModel] | None:
    """The model ``result`` of a ``status`` call of ``tool`` is an instance of: its tool's,
    or :class:`ToolError` for a call that did not run or failed with nothing more to say;
    ``None`` for a tool without one.

    >>> result_model_for("run_sql", "refused", {"error": {"reason": "invalid_state", "message": "no"}}).__name__
    'ToolError'
    >>> result_model_for("run_sql", "ok", {}).__name__
    'RunSqlResult'
    """
    if status != "ok" and set(result) <= {"error", "expectation"}:
        return ToolError
    spec = spec_of(tool)
    return spec.result_model if spec is not None else None
