"""The tool contract: one :class:`ToolSpec` per tool, in one registry.

A spec is everything the engine knows about a tool, in one place (as an openai-agents
``FunctionTool`` is): the schema the model is given, the turn state it runs in, the argument
a bare string stands for and the names models use for its arguments, the checks of its
payload, and how it runs. The argument normaliser, the state machine's check, the call
pipeline and the tool box all read the spec; none keeps a table of its own.

The descriptions are prompts: the model reads them to decide what to call and how, so they
say what each tool is for, what it returns, and that finished work is reused, not redone.

A tool is added by registering its spec (:func:`register`); the built-in ones are
registered by the package, in the order the model is shown them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ...events import Event, ReasonCode, State

if TYPE_CHECKING:
    import asyncio
    from collections import Counter

    from ...agent_state import StateDelta
    from ...errors import AnalystError
    from ..environment import ThreadEnvironment
    from ..llm import ToolCall
    from .outcome import CallContext, StepOutcome, StepPlan

#: The ``expect`` argument of the tools whose results can be checked (run_sql, run_python).
EXPECT: dict[str, Any] = {
    "type": "object",
    "description": (
        "Optional: what you expect the step to produce. It is checked against the real result and "
        "any mismatch is reported back to you, so state only what you are sure of."
    ),
    "properties": {
        "rows": {"type": "integer", "minimum": 0, "description": "the exact number of rows expected"},
        "count": {
            "type": "integer", "minimum": 0,
            "description": "the exact number of artifacts a Python step should make (charts, files)",
        },
        "columns": {
            "type": "array", "items": {"type": "string"},
            "description": "column names the result must have",
        },
        "artifact_type": {
            "type": "string", "enum": ["dataset", "image", "file", "text"],
            "description": "the kind of artifact the step must produce",
        },
        "artifact_ids": {
            "type": "array", "items": {"type": "string"},
            "description": "ids of existing artifacts the step is expected to reuse or produce",
        },
    },
    "additionalProperties": False,
}


class CallHost(Protocol):
    """What a tool that runs its own course (``clarify``, ``plan``) is given by the call
    pipeline: its call, the turn's counters and state, and the pipeline's own moves."""

    call: ToolCall
    counters: Counter[str]
    state: State
    concurrency: int
    """How many queries of a plan's parallel stage run at once."""
    lock: asyncio.Lock
    """The thread's lock on tool execution (a plan holds it for all its steps)."""

    async def emit(self, event: Event) -> Event: ...

    async def guard(self, reason: ReasonCode, message: str) -> None: ...

    async def refuse(self, reason: ReasonCode, error: AnalystError) -> StepOutcome: ...

    async def remember(self, delta: StateDelta) -> None: ...

    async def step(self, call: ToolCall, arguments: dict[str, Any]) -> StepOutcome: ...


#: Runs one checked and planned call against the thread (sync or async).
Run = Callable[["ThreadEnvironment", dict[str, Any], "CallContext", "StepPlan"],
               "StepOutcome | Awaitable[StepOutcome]"]
#: Works out a step's plan (its logical key) before it runs; may refuse with ``ToolRetry``.
Plan = Callable[["ThreadEnvironment", dict[str, Any]], Awaitable["StepPlan"]]
#: Takes the call over from the pipeline (``clarify``, ``plan``).
Drive = Callable[[CallHost, dict[str, Any]], Awaitable["StepOutcome"]]


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its schema, the state it needs, how its arguments read, and how it runs.

    Exactly one of ``run`` (the pipeline checks, plans, reuses or runs it, and reports it)
    and ``drive`` (the tool runs its own course through a :class:`CallHost`) is given.
    """

    name: str
    description: str
    properties: Mapping[str, Any] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    state: State | None = None
    """The turn state the tool runs in; ``None``: any state but the last, without a move."""
    payload: str | None = None
    """The argument a bare string stands for (``"SELECT 1"`` sent as the whole arguments)."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """Argument names models use for the canonical ones (``query`` for ``sql``)."""
    extra_keys: frozenset[str] = frozenset()
    """Keys read beside the schema's properties (a plan's bare ``steps``)."""
    step: bool = False
    """A step of the analysis: planned with a logical key, reused, recorded for the
    notebook; its payload may not be empty (one guided retry), and a plan may hold it."""
    empty_reason: ReasonCode = "empty_payload_refused"
    """The reason code of the first refusal of an empty payload (a step's)."""
    check: Callable[[dict[str, Any]], None] | None = None
    """Refuses (``InvalidArguments``) a payload no analysis could handle, before anything parses it."""
    plan: Plan | None = None
    run: Run | None = None
    drive: Drive | None = None
    named: Callable[[ThreadEnvironment], None] | None = None
    """Called as soon as the model has named the tool, before its arguments are in."""
    reused: Callable[[ThreadEnvironment, dict[str, Any], StepOutcome], Awaitable[None]] | None = None
    """What a reused step's names hold now, as if it had run."""

    def __post_init__(self) -> None:
        if (self.run is None) == (self.drive is None):
            raise ValueError(f"tool {self.name!r} needs exactly one of run and drive")

    @property
    def allowed(self) -> frozenset[str]:
        """The argument names the normaliser keeps."""
        return frozenset(self.properties) | self.extra_keys

    def schema(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry of type ``function``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {
                    "type": "object", "properties": dict(self.properties), "required": list(self.required),
                    "additionalProperties": False,
                },
            },
        }


_REGISTRY: dict[str, ToolSpec] = {}


def register(spec: ToolSpec) -> ToolSpec:
    """Offer ``spec``'s tool to the model, after those registered before it.

    Raises:
        ValueError: a tool of that name is registered already.
    """
    if spec.name in _REGISTRY:
        raise ValueError(f"a tool named {spec.name!r} is registered already")
    _REGISTRY[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Withdraw a tool (a test's, say); nothing happens when there is none by that name."""
    _REGISTRY.pop(name, None)


def spec_of(name: str) -> ToolSpec | None:
    """The registered tool called ``name``, if there is one."""
    return _REGISTRY.get(name)


def registered() -> Iterator[ToolSpec]:
    """Every registered tool, in the order the model is shown them."""
    return iter(list(_REGISTRY.values()))


def tool_schemas() -> list[dict[str, Any]]:
    """The ``tools`` of a model call: every registered tool's schema."""
    return [spec.schema() for spec in registered()]


def tool_states() -> dict[str, State | None]:
    """The state each registered tool runs in (``None``: any, without a move)."""
    return {spec.name: spec.state for spec in registered()}
