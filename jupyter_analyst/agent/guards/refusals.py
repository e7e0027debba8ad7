"""The guards a tool call passes before it runs, each a deterministic check that either lets
it through or says why not (a :class:`Refusal`: the reason code and the error the model is
told). The call pipeline asks them in DESIGN decision 4's order: the call could be read,
its payload is there and sane, the names it reads exist (names.py), the turn can move to
the state it runs in.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import AnalystError, InvalidArguments
from ...events import ReasonCode
from ..spec import ToolSpec

if TYPE_CHECKING:
    from ..machine import TurnStateMachine


@dataclass(frozen=True)
class Refusal:
    """Why a call does not run: its reason code (counted, and told as a ``guard`` event) and
    the error the model is given as the call's result."""

    reason: ReasonCode
    error: AnalystError


def unreadable(problem: AnalystError) -> Refusal:
    """A call whose tool is unknown or whose arguments could not be read."""
    return Refusal("unknown_tool" if problem.reason == "unknown_tool" else "invalid_arguments", problem)


def payload_refusal(
    spec: ToolSpec, args: dict[str, Any], retried: set[str], counters: Counter[str]
) -> Refusal | None:
    """A step sent without its payload (one guided retry per tool and turn, then a plain
    refusal), or a payload no analysis could handle, or names that would clobber Python or
    the kernel: refused before anything parses the payload or binds a name."""
    payload = spec.payload if spec.step else None
    if payload and not str(args.get(payload) or "").strip():
        if spec.name not in retried:
            retried.add(spec.name)
            counters[f"{spec.name}_empty_retry"] += 1
            return Refusal(spec.empty_reason, InvalidArguments(
                f"{spec.name} was called with an empty '{payload}'",
                reason="empty_payload",
                hint=f"call {spec.name} again with the full {payload} in the '{payload}' argument",
            ))
        return Refusal("empty_payload_refused", InvalidArguments(
            f"{spec.name} was called with an empty '{payload}' again", reason="empty_payload",
        ))
    try:
        if spec.check is not None:
            spec.check(args)
    except InvalidArguments as exc:
        return Refusal("invalid_arguments", exc)
    return None


def state_refusal(machine: TurnStateMachine, spec: ToolSpec, *, in_plan: bool) -> Refusal | None:
    """A tool whose state the turn cannot move to now (a plan's step after a failed one is
    first planned again), told as what happened and what to do, not as the machine's states."""
    if machine.may_run(spec.state, replan=in_plan):
        return None
    return Refusal("invalid_state", AnalystError(
        f"{spec.name} was not run: {_WHY_NOT.get(machine.state, 'the turn is past the point where it can run')}",
        reason="invalid_state",
        hint=_WHAT_NOW.get(machine.state, "answer with what you have, or ask for it in a new message"),
    ))


#: Why a step cannot run, by the turn's state, in the model's terms.
_WHY_NOT: dict[str, str] = {
    "error": "the step before it in this turn failed, and the turn had not moved on",
    "presenting": "the turn is already giving its answer",
    "completed": "the turn has ended",
}
#: What the model can do about it.
_WHAT_NOW: dict[str, str] = {
    "error": "read the failed step's error, then call it again in your next reply",
    "presenting": "answer with what you have; further steps belong to a new message",
    "completed": "answer with what you have; further steps belong to a new message",
}
