"""The tool contract: one :class:`ToolSpec` per tool, in one registry.

A spec is everything the engine knows about a tool, in one place (as an openai-agents
``FunctionTool`` is): the schema the model is given, the turn state it runs in, the argument
a bare string stands for and the names models use for its arguments, the checks of its
payload, and how it runs. The argument normaliser, the state machine's check, the call
pipeline and the tool box all read the spec; none keeps a table of its own.

The descriptions are prompts: the model reads them on every call to decide what to call
and how, so each says once what its tool is for, what it returns and what it refuses, and
nothing the system message's rules say already (facts come from tools, finished work is
reused). A schema holds only what applies to its tool, and a tool is offered only where it
can be used (``offered``).

A tool is added by registering its spec (:func:`register`); the built-in ones are
registered by the package, in the order the model is shown them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ...events import Event, ReasonCode, State
from ...step_kinds import StepKind

if TYPE_CHECKING:
    import asyncio
    from collections import Counter

    from pydantic import BaseModel

    from ...agent_state import StateDelta
    from ...errors import AnalystError
    from ..environment import ThreadEnvironment
    from ...artifacts import Artifact
    from ...errors import InvalidArguments
    from ...receipts import Evidence
    from ..llm import ToolCall
    from .meaning import Observed, StateChange, StepSeen
    from .outcome import CallContext, StepOutcome, StepPlan  # noqa: F401 - named in the aliases below

#: The checks a step's ``expect`` may hold, each written once; a tool offers those that
#: apply to its results (see :func:`expect_schema`). The normaliser reads them all for any
#: tool (guards/expectations.py compares what applies).
EXPECT_FIELDS: dict[str, dict[str, Any]] = {
    "rows": {"type": "integer", "description": "exact row count"},
    "columns": {"type": "array", "items": {"type": "string"}, "description": "columns it must have"},
    "count": {"type": "integer", "description": "exact number of figures and files made"},
    "artifact_type": {"type": "string", "enum": ["dataset", "image", "file", "text"]},
    "artifact_ids": {"type": "array", "items": {"type": "string"}, "description": "artifact ids it must make or reuse"},
}


def expect_schema(*fields: str) -> dict[str, Any]:
    """The ``expect`` argument of a tool whose results can be checked, with ``fields`` of
    :data:`EXPECT_FIELDS`.

    >>> sorted(expect_schema("rows")["properties"])
    ['rows']
    """
    return {
        "type": "object",
        "description": "checked against the result",
        "properties": {name: EXPECT_FIELDS[name] for name in fields},
    }


class CallHost(Protocol):
    """What a tool that runs its own course (``clarify``, ``plan``) is given by the call
    pipeline: its call, the turn's counters and state, and the pipeline's own moves."""

    call: ToolCall
    counters: Counter[str]
    state: State
    turn_number: int
    """The thread's turn the call is made in."""
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
    recorded_as: StepKind | None = None
    """The kind of step its calls are recorded as (``step_kinds.py``: a query, a code step),
    which the layers below the agent read from a step's record without this spec."""
    user_step: bool = False
    """A user or a client agent may ask for one call of it by name, a turn of its own
    (``turns.run_tool_step``: the MCP tools, ``%analyst_sql``): it fetches or computes. A tool
    that speaks to the model's own work (a plan, a question, a search of that work) is not."""
    looks_only: bool = False
    """It reads only the source's schema and the store, never the kernel nor the data: a call
    asked for by name runs beside the thread's running step, on an environment of its own."""
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
    offered: Callable[[ThreadEnvironment], bool] | None = None
    """Whether the model is offered the tool on a request of this thread (``None``: always).
    A tool that could do nothing there (read a notebook when none is attached) costs every
    request its schema; one that is not offered still runs when called (it says why not)."""
    result_model: type[BaseModel] | None = None
    """What an ``ok`` result of the tool holds (result_models.py); its refusals and failures are a
    ``ToolError``. The panel's types are generated from it (the OpenAPI document)."""

    # What the tool's result means. Each hook is read where the product once asked for the
    # tool by name; ``None``: the tool's calls mean nothing there.
    asks: bool = False
    """The call ends the turn with a question to the user: its call and result are left out
    of what is shown again (the answer that follows asks the question)."""
    invented: Callable[[ThreadEnvironment, dict[str, Any]], InvalidArguments | None] | None = None
    """Why the call names something that does not exist (a table, a Python name), if it
    does: the call is refused before it runs. Blocking: it may read the thread's steps."""
    observed: Callable[[Mapping[str, Any], Sequence[Artifact]], Observed] | None = None
    """What an ok result's ``expect`` is checked against (rows and columns, artifacts made)."""
    remembers: Callable[[StepSeen], StateChange] | None = None
    """What an ok result adds to the agent state (entities, the active dataset)."""
    summarized: Callable[[Mapping[str, Any]], str | None] | None = None
    """The call as the summarizer's transcript names it, from its arguments (``run_sql →
    revenue``); ``None`` from the hook or no hook: the tool and its plain arguments."""
    finished: Callable[[Mapping[str, Any], Mapping[str, Any]], list[str]] | None = None
    """The steps a call finished, from its arguments and result, as the next turn's
    opening line counts them (a plan: each of its steps); no hook: the tool, once."""
    evidence: Callable[[str, Mapping[str, Any]], Sequence[Evidence]] | None = None
    """What an ok result showed the model that an answer may cite, from its call id and
    result (``cited.py``: a table's rows as sent, a row count, printed text); no hook or an
    empty list: nothing of it supports a number the answer states."""
    answered: Callable[[StepOutcome], str] | None = None
    """A user-driven turn's answer when the call was its one step and ran ok (no hook:
    "<tool> done")."""

    def __post_init__(self) -> None:
        if (self.run is None) == (self.drive is None):
            raise ValueError(f"tool {self.name!r} needs exactly one of run and drive")
        if self.recorded_as is not None and (self.recorded_as.tool != self.name or not self.step):
            raise ValueError(f"tool {self.name!r} is no step of the kind {self.recorded_as.tool!r} records")

    @property
    def allowed(self) -> frozenset[str]:
        """The argument names the normaliser keeps."""
        return frozenset(self.properties) | self.extra_keys

    def schema(self) -> dict[str, Any]:
        """The OpenAI ``tools`` entry of type ``function``."""
        # No ``additionalProperties: false``: the normaliser drops keys the tool does not
        # know (and counts it), so saying so costs every request and changes nothing.
        parameters: dict[str, Any] = {"type": "object", "properties": dict(self.properties)}
        if self.required:
            parameters["required"] = list(self.required)
        return {"type": "function", "function": {"name": self.name, "description": self.description,
                                                 "parameters": parameters}}


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


def tool_schemas(environment: ThreadEnvironment | None = None) -> list[dict[str, Any]]:
    """The ``tools`` of a model call: the schema of every registered tool, or, for a request
    of ``environment``'s thread, of those offered there. Blocking (a tool's condition may
    read the source's schema): call it off the event loop."""
    return [spec.schema() for spec in registered()
            if environment is None or spec.offered is None or spec.offered(environment)]


def tool_states() -> dict[str, State | None]:
    """The state each registered tool runs in (``None``: any, without a move)."""
    return {spec.name: spec.state for spec in registered()}
