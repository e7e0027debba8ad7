"""What made an artifact: the code or SQL of the step that produced it.

After a few turns the step that drew a chart has left the model's context, and "redo the
chart from the first question" needs its code. The step ledger keeps every step's arguments,
and an artifact keeps its step's key, so ``list_artifacts`` and ``find`` can hand the code
back when asked (``with_code: true``) and search it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...artifacts import Artifact, StepRecord
from ...step_kinds import CODE_STEP, StepKind, step_kind
from ..spec import clip
from .result_models import ResultModel

#: Characters of one step's code or SQL handed back.
CODE_CHARS = 4_000
#: How many artifacts' code one call hands back (the newest of those it lists).
CODE_ITEMS = 5
#: What ``with_code`` says in a tool's schema.
CODE_PROPERTY = {"type": "boolean", "description": "also the code or SQL that made each"}


def wants_code(value: Any) -> bool:
    """Whether a ``with_code`` argument asks for the code (``true``, ``"true"``, ``1``, ``"yes"``).

    >>> wants_code(True), wants_code("true"), wants_code("no"), wants_code(None)
    (True, True, False, False)
    """
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return value is True or value == 1


def steps_by_key(steps: Iterable[StepRecord]) -> dict[str, StepRecord]:
    """The thread's recorded steps by their key (the first record of a key is the one kept)."""
    return {s.step_key: s for s in steps}


def step_text(step: StepRecord | None) -> str:
    """The code or SQL of a step, for searching (empty when there is none)."""
    if step is None:
        return ""
    return _kind(step).text(step.arguments)


def made_by(artifact: Artifact, steps: dict[str, StepRecord]) -> dict[str, Any]:
    """The producing step of ``artifact`` as the model is given it: its tool and its code or SQL."""
    step = steps.get(artifact.logical_key or "")
    if step is None:
        return {"made_by": "no recorded step (its code is not known)"}
    return {"made_by": step.tool, _kind(step).payload: clip(step_text(step), CODE_CHARS)}


def _kind(step: StepRecord) -> StepKind:
    """The kind of ``step``; a step of a tool that records none kept its text as ``code``."""
    return step_kind(step.tool) or CODE_STEP


class MadeBy(ResultModel):
    """What :func:`made_by` adds to an artifact listed or found, when its code is asked for."""

    made_by: str | None = None
    """The tool of the step that made it, or that no step is recorded."""
    sql: str | None = None
    code: str | None = None
