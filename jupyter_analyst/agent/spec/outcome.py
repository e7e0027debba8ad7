"""What a tool call is given and what it gives back: who calls, the step's plan, its outcome."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ...artifacts import Artifact
from ...errors import AnalystError
from ...ledger import StepCost
from ..._text import head_and_tail
from .shown import model_view

if TYPE_CHECKING:
    from ...sql import PreparedQuery
    from .early_run import EarlyRun

#: How much of a step's printed output the model is shown.
MODEL_TEXT_CAP = 4_000


@dataclass
class StepOutcome:
    """What one tool call did: its result for the model and what it left behind."""

    status: Literal["ok", "error", "refused"]
    result: dict[str, Any]
    reused: bool = False
    step_key: str | None = None
    artifacts: list[tuple[Artifact, bool]] = field(default_factory=list)
    duration_s: float = 0.0
    notebook_outputs: list[dict[str, Any]] = field(default_factory=list)
    cost: StepCost | None = None
    """An executed step's share of the model call that issued it, once its reply's steps are
    done (see jupyter_analyst/ledger.py)."""
    failure: AnalystError | None = None
    """A real failure (not a signal to retry): the step could not run for a reason the
    model cannot fix, such as a kernel that does not start or damaged stored data."""

    @property
    def public_result(self) -> dict[str, Any]:
        """The result as the model and the events see it (no ``_`` bookkeeping keys)."""
        return {k: v for k, v in self.result.items() if not k.startswith("_")}

    @property
    def model_result(self) -> dict[str, Any]:
        """The result as the model is sent it (see shown.py: rows as lists, no field twice)."""
        return model_view(self.public_result)

    @property
    def artifact_ids(self) -> list[str]:
        """Ids of the artifacts the step produced or reused."""
        return [a.artifact_id for a, _ in self.artifacts]

    def as_reused(self) -> StepOutcome:
        """The same outcome, marked as reused (a step asked for again within the turn)."""
        return StepOutcome(
            status=self.status,
            result={**without_verdict(self.result), "reused": True},
            reused=True,
            step_key=self.step_key,
            artifacts=[(a, False) for a, _ in self.artifacts],
            notebook_outputs=self.notebook_outputs,
        )


def without_verdict(result: dict[str, Any]) -> dict[str, Any]:
    """A step's result to be given again (reused): without the verdict on the expectation of
    the call that ran it, which belongs to that call; a call that states one gets its own.

    >>> without_verdict({"rows": 4, "expectation": {"status": "failed"}})
    {'rows': 4}
    """
    return {k: v for k, v in result.items() if k != "expectation"}


@dataclass(frozen=True)
class StepPlan:
    """What a call will do, worked out before it runs: its logical key and, for SQL, the
    checked query (prepared once, used for the key and for the execution) and the run of it
    that started while it was checked."""

    key: str | None = None
    query: PreparedQuery | None = None
    early: EarlyRun | None = None

    async def drop(self) -> None:
        """The call will not run (reused, or the turn stopped): an early run is interrupted and
        its staged file removed. Does nothing once the call has taken the run."""
        if self.early is not None:
            await self.early.drop()


@dataclass
class CallContext:
    """Who is calling: the turn, the call id, whether reuse is allowed, and where a step
    tells what it does while it runs."""

    thread_id: str
    turn_id: str
    call_id: str
    rerun: bool = False
    emit: Callable[[Any], Awaitable[Any]] | None = None
    """Emits an event of the turn (a running step's output); ``None`` where nobody follows."""


def clip(text: str, cap: int = MODEL_TEXT_CAP, *, how: str = "") -> str:
    """Shorten ``text`` for the model: its head and its tail (what is printed last is often
    the conclusion), the middle elided with its size and ``how`` to see it (shown.py).

    >>> clip("0123456789" * 10, 40)
    '012345678901234567890123[... 60 characters not shown ...]\\n4567890123456789'

    Text a marker would not shorten is sent whole:

    >>> clip("abcdef", 4)
    'abcdef'
    """
    return head_and_tail(text, cap, how=how)
