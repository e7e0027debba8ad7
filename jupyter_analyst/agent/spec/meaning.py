"""What a tool's result means, in the words each reader of it takes: the facts an ``expect``
is checked against (:class:`Observed`), what a step adds to the agent state
(:class:`StepSeen` in, :data:`StateChange` out) and how a finished call is named.

A tool says these through the hooks of its :class:`~.contract.ToolSpec`; the guards, the
memory, the summarizer and the context read the hooks, and none of them names a tool.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...agent_state import Addition, Entity

if TYPE_CHECKING:
    from ...agent_state import ActiveValue, AgentState
    from ...artifacts import Artifact


@dataclass(frozen=True)
class Observed:
    """The structured facts of one step's result that expectations are checked against."""

    artifact_ids: tuple[str, ...] = ()
    artifact_types: tuple[str, ...] = ()
    count: int | None = None
    """Rows for a dataset query; the number of artifacts made for a Python step."""
    columns: tuple[str, ...] | None = None

    @property
    def structured(self) -> bool:
        return bool(self.artifact_ids) or self.count is not None or self.columns is not None


@dataclass(frozen=True)
class StepSeen:
    """A call that ran ``ok``, as the agent state takes it in (what ``remembers`` reads)."""

    state: AgentState
    arguments: Mapping[str, Any]
    result: Mapping[str, Any]
    artifacts: Sequence[Artifact]
    source_label: str
    now: str
    datasets: Callable[[], Iterable[str]]
    """The thread's dataset names (read from the store only when a tool asks)."""

    @property
    def source_id(self) -> str:
        return f"source:{self.source_label}"


#: What a call adds to the agent state: entities (and other additions), and the active
#: values it moves (``None`` clears one).
StateChange = tuple[list[Addition], dict[str, "ActiveValue | None"]]


def failed_mark(result: Mapping[str, Any]) -> str:
    """`` (failed)`` after a finished call's name when its result is an error."""
    return " (failed)" if "error" in result else ""


def entity(kind: str, name: str, *, derived_from: Iterable[str] = (), **detail: Any) -> Addition:
    """The addition of an entity of the agent state (``dataset:revenue``) and its sources.

    >>> entity("table", "orders", derived_from=["source:sales"], rows=4).value["id"]
    'table:orders'
    """
    value = Entity(id=f"{kind}:{name}", kind=kind, name=name, derived_from=list(derived_from), detail=detail)  # type: ignore[arg-type]
    return Addition(section="entities", value=value.model_dump())
