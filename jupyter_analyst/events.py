"""Events: the single truth of what happened in a thread.

Every event is a small tagged model with a thread-scoped sequence number. The store
persists an event before anyone sees it; clients render by applying events in order and a
dropped connection resumes from the last sequence number it saw.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ._clock import utc_now
from .ledger import Ledger, Usage
from .receipts import Citation, DefinitionCitation, UnsupportedClaim
from .step_kinds import StepTool

#: The states of one turn (DESIGN.md, decision 4).
State = Literal["planning", "data_fetching", "analyzing", "presenting", "completed", "error"]

#: Why a tool call was not executed as asked, or what a guard did about it.
ReasonCode = Literal[
    "invalid_state",
    "duplicate_tool_call_skipped",
    "duplicate_artifact_prevented",
    "empty_python_payload_retried",
    "empty_payload_refused",
    "invalid_arguments",
    "unknown_tool",
    "step_limit_reached",
    "arguments_normalized",
    "unknown_name_refused",
    "invented_name_flagged",
    "unsupported_claim_flagged",
    "expectation_failed",
    "clarification_asked",
    "chat_mode",
    "plan_refused",
    "answer_cut_short",
    "model_refused",
    "context_file_invalid",
]


class _Event(BaseModel):
    # The fields' docstrings are their descriptions in the OpenAPI description, and so in
    # the panel's generated event types (src/model/api.generated.ts).
    model_config = ConfigDict(use_attribute_docstrings=True)

    seq: int = 0
    """Thread-scoped sequence number, assigned by the store when the event is persisted."""
    thread_id: str = ""
    """The thread the event belongs to."""
    turn_id: str = ""
    """The turn that produced the event."""
    ts: str = Field(default_factory=utc_now)
    """When the event was made (UTC)."""


class TurnStarted(_Event):
    type: Literal["turn_started"] = "turn_started"
    prompt: str
    """What the user asked."""
    model: str
    """The model answering (``jupyter-analyst-scripted`` for the scripted model)."""
    rerun: bool = False
    """Whether the user asked to re-execute steps that could be reused."""


class StateChanged(_Event):
    type: Literal["state"] = "state"
    from_state: State | None
    """The state left (``None`` at the start of a turn)."""
    to_state: State
    """The state entered."""


class TextDelta(_Event):
    type: Literal["text_delta"] = "text_delta"
    text: str
    """A piece of the model's streamed text."""


class ModelThinking(_Event):
    """The model has begun to think before it answers (a reasoning model's monologue, which is
    neither shown nor kept): told once per model call, so a long silence reads as work."""

    type: Literal["thinking"] = "thinking"


StartingWhat = Literal["engine", "sql_checker", "kernel"]


class Starting(_Event):
    type: Literal["starting"] = "starting"
    what: StartingWhat
    """What the turn waits for while it starts: ``engine`` (the analyst's code, loaded at the
    first turn of a server whose panel had not asked for it yet), ``sql_checker`` (the worker
    process that checks the model's SQL, at the first query of a process) or ``kernel`` (the
    thread's sandboxed Python kernel, when no running or warm one can be used). Told only when
    it has to start, so a long wait reads as what it is."""
    message: str
    """What a client says meanwhile, e.g. "Starting the sandboxed Python kernel…"."""


#: What a client says while each of them starts.
STARTING_MESSAGES: dict[str, str] = {
    "engine": "Loading the analyst (the server's first question)…",
    "sql_checker": "Starting the SQL checker…",
    "kernel": "Starting the sandboxed Python kernel…",
}


def starting(what: StartingWhat, *, thread_id: str = "", turn_id: str = "") -> Starting:
    """The event saying ``what`` starts, with its message.

    >>> starting("kernel").message
    'Starting the sandboxed Python kernel…'
    """
    return Starting(what=what, message=STARTING_MESSAGES[what], thread_id=thread_id, turn_id=turn_id)


class ToolCallStarted(_Event):
    type: Literal["tool_call"] = "tool_call"
    call_id: str
    """The tool call's id (reconciled from the stream)."""
    tool: str
    """The tool's name."""
    arguments: dict[str, Any]
    """The arguments after normalisation."""
    step_key: str | None = None
    """The step's logical key, when it has one."""


class ToolResult(_Event):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    """The tool call this answers."""
    tool: str
    """The tool's name."""
    status: Literal["ok", "error", "refused"]
    """``ok``; ``error`` when the tool ran and failed; ``refused`` when a guard stopped it."""
    reused: bool = False
    """True when the result came from an earlier identical step instead of running again."""
    result: dict[str, Any]
    """What the model was told."""
    artifact_ids: list[str] = []
    """Artifacts the step produced or reused."""
    duration_s: float = 0.0
    """Time spent executing (0 for a reused step)."""


class StepOutput(_Event):
    type: Literal["step_output"] = "step_output"
    call_id: str
    """The running step (its tool call)."""
    stream: Literal["stdout", "stderr"]
    text: str
    """What the step printed on ``stream`` since the last of these events, as it came."""
    elapsed_s: float
    """Seconds since the step started."""
    omitted: int = 0
    """Characters it printed past what a step shows live: they reach its result only (kept
    head and tail there)."""


class StepProgress(_Event):
    type: Literal["step_progress"] = "step_progress"
    call_id: str
    """The running step (its tool call)."""
    percent: int = Field(ge=0, le=99)
    """How much of its query is done, as the engine estimates it (whole percent, rising; never
    100 before the step's result). Told only by an engine that estimates it (DuckDB)."""
    elapsed_s: float
    """Seconds since the query began to run."""


class ArtifactRecorded(_Event):
    type: Literal["artifact"] = "artifact"
    artifact_id: str
    """The artifact's inventory id."""
    name: str
    """Its dataset variable or file name."""
    artifact_type: str
    """``dataset``, ``image``, ``file`` or ``text``."""
    fingerprint: str
    """``sha256:`` of its bytes."""
    created: bool
    """False when an equivalent artifact already existed and was reused."""
    call_id: str | None = None
    """The tool call that recorded it (several run at once in a staged plan)."""


class Guarded(_Event):
    type: Literal["guard"] = "guard"
    reason: ReasonCode
    """The reason code; each is also counted."""
    message: str
    """A readable explanation."""
    call_id: str | None = None
    """The tool call concerned, if any."""


class AnswerReady(_Event):
    type: Literal["answer"] = "answer"
    text: str
    """The final answer shown to the user."""
    flagged: list[str] = []
    """Ids or names the answer cites that do not exist."""


#: How a turn ends. ``needs_input``: it ended with a question to the user (``clarify``); the
#: user's next message on the thread is taken as the answer. ``step_limited``: the turn used
#: every model call with tools it allows (``max_steps``) and its answer was asked for without
#: tools: it says what is unfinished. ``no_answer``: the model's last reply had no text (an
#: empty reply, or calls to tools when none were offered); the message says which.
#: ``budget_exhausted``: a budget (tokens or cost, per user, thread or server: budgets.py) was
#: spent before a model call; the message says what was spent, the limit and when it resets.
TurnEndStatus = Literal["completed", "needs_input", "step_limited", "no_answer", "budget_exhausted", "error",
                        "interrupted"]


class MetricSuggestion(BaseModel):
    """A measure a turn's SQL computed that the team's context folder does not define: what
    a person may save as a metric (nothing is written without their action)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    name: str
    """The name proposed for the metric (the query's alias for the measure, else its aggregate
    and expression): letters, digits and ``_``."""
    table: str
    """The table the measure is read from."""
    agg: str
    """Its aggregate, as dbt's semantic layer names it: ``sum``, ``count``, ``count_distinct``,
    ``average``, ``min``, ``max``."""
    expr: str
    """What it aggregates: a column or an SQL expression on the table's columns."""
    filters: list[str] = []
    """The conditions its rows were filtered by, as SQL on the table's columns (a period asked
    about, a condition on a date or time column, is left out: it is the question's, not the measure's)."""
    measure: str
    """The measure in one line of SQL terms: ``SUM(amount) FROM orders WHERE status = 'paid'``."""
    call_id: str
    """The query step it was read from."""
    dialect: str = "duckdb"
    """The SQL dialect ``expr`` and ``filters`` are written in (the source's)."""


class TurnEnded(_Event):
    type: Literal["turn_ended"] = "turn_ended"
    status: TurnEndStatus
    """How the turn ended: ``needs_input`` when it waits for the user's answer to a question,
    ``step_limited`` when its step budget ran out, ``no_answer`` when the model said nothing,
    ``budget_exhausted`` when a spending budget was reached before a model call."""
    message: str | None = None
    """Why, when it did not complete."""
    counters: dict[str, int] = {}
    """Reason-code and step counters for the turn."""
    ledger: Ledger | None = None
    """What the turn cost: model calls and tokens, cost where priced, steps run, what reuse
    saved (see jupyter_analyst/ledger.py). ``None`` for a turn closed without running to its
    end (its process was gone)."""
    citations: list[Citation] = []
    """The answer's numbers, dates and names tied to the step result that holds each (call
    id, artifact, row, column), or derived from two of them; spans index the answer's text."""
    unsupported: list[UnsupportedClaim] = []
    """The answer's numbers and dates that no result the thread holds supports (the model was
    told of them once, and kept them)."""
    definitions: list[DefinitionCitation] = []
    """The team's definitions (metrics, verified queries) the answer's queries followed."""
    suggestions: list[MetricSuggestion] = []
    """Measures the turn's SQL computed that the team's context folder does not define: each
    may be saved as a metric by a person (``jupyter analyst context add-metric``, or the
    panel's "Save as a definition"); nothing is written otherwise."""


class ContextUsage(_Event):
    type: Literal["context_usage"] = "context_usage"
    call: int
    """The model call of the turn this prompt was for (1, 2, ...)."""
    tokens: int
    """The prompt's estimated size in tokens (four characters each)."""
    budget: int
    """The token budget it was held to."""
    parts: dict[str, int]
    """Tokens per part: rules, team, date, summary, pinned, notebook, state, history, current."""
    messages: int
    """Messages sent."""
    turns: list[int]
    """Earlier turns sent as messages."""
    dropped_turns: int
    """Earlier turns left out to stay within the budget."""
    summarized_through: int
    """The last turn the rolling summary covers (0 for none)."""
    assembly_ms: float
    """Time spent assembling the prompt."""
    prompt_tokens: int | None = None
    """The prompt's size in tokens as the model server counted it (its ``usage``). Told in a
    second ``context_usage`` of the same call once the reply is in; ``None`` before, and when
    the server reports no usage."""
    completion_tokens: int | None = None
    """The reply's size in tokens as the model server counted it; ``None`` as ``prompt_tokens``."""


class PlanStepView(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    id: str
    """The step's id in the plan (what other steps' ``inputs`` name)."""
    call_id: str
    """The call id its own ``tool_call`` and ``tool_result`` events carry."""
    tool: StepTool
    """The tool the step calls."""
    summary: str
    """What it does in a few words (the dataset a query makes, a code's first line)."""
    inputs: list[str] = []
    """The steps it needs."""


class PlanStageView(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    mode: Literal["parallel", "sequence"]
    """``parallel``: the stage's queries run together; ``sequence``: its steps run in order."""
    steps: list[PlanStepView]
    """The stage's steps, in the order they start."""


class PlanMade(_Event):
    type: Literal["plan"] = "plan"
    call_id: str
    """The ``plan`` call this is the checked plan of."""
    goal: str = ""
    """What the plan is for, as the model put it."""
    stages: list[PlanStageView]
    """The stages, in the order they run."""


class PlanStepChanged(_Event):
    type: Literal["plan_step"] = "plan_step"
    call_id: str
    """The ``plan`` call the step belongs to."""
    step_id: str
    """The step's id in the plan."""
    step_call_id: str
    """The call id of the step's own events."""
    status: Literal["running", "ok", "error", "refused", "skipped"]
    """``running`` when it starts; then how it ended. ``skipped``: a step it needs did not succeed."""
    reused: bool = False
    """True when an earlier identical step's result was used."""
    message: str | None = None
    """Why it did not succeed."""


class MemoryUpdated(_Event):
    type: Literal["memory"] = "memory"
    origin: Literal["summarizer"]
    """What changed the agent state off the hot path."""
    status: Literal["applied", "failed"]
    """Whether the change was applied."""
    version: int = 0
    """The agent state's version after the change."""
    changes: dict[str, int] = {}
    """How many entries were added, updated, removed and fields patched."""
    summarized_through: int = 0
    """The last turn the rolling summary covers after the change."""
    message: str | None = None
    """Why it failed."""
    usage: Usage | None = None
    """What the summarizer's call cost (added to its turn's ledger); ``None`` when none was sent."""


Event = Annotated[
    TurnStarted
    | StateChanged
    | TextDelta
    | ModelThinking
    | Starting
    | ToolCallStarted
    | ToolResult
    | StepOutput
    | StepProgress
    | ArtifactRecorded
    | Guarded
    | AnswerReady
    | TurnEnded
    | ContextUsage
    | MemoryUpdated
    | PlanMade
    | PlanStepChanged,
    Field(discriminator="type"),
]
"""Every event, discriminated by ``type``."""

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(data: str | bytes | dict[str, Any]) -> Event:
    """Rebuild an event from its stored JSON.

    >>> parse_event('{"type": "text_delta", "text": "hi", "seq": 3}').seq
    3
    """
    if isinstance(data, dict):
        return EVENT_ADAPTER.validate_python(data)
    return EVENT_ADAPTER.validate_json(data)


# ---------------------------------------------------------------------- the SSE frame codec


def format_event(event: Event) -> str:
    """One SSE frame.

    >>> from jupyter_analyst.events import TextDelta
    >>> format_event(TextDelta(seq=7, text="hi")).splitlines()[:2]
    ['id: 7', 'event: text_delta']
    """
    return f"id: {event.seq}\nevent: {event.type}\ndata: {event.model_dump_json()}\n\n"


def error_frame(reason: str, message: str) -> str:
    """A final frame saying why a stream ended without its turn's end."""
    return f"event: error\ndata: {json.dumps({'message': message, 'reason': reason, 'hint': None})}\n\n"


def parse_events(body: str) -> list[dict]:
    """The events of an SSE body (for clients and tests).

    >>> parse_events('id: 1\\nevent: x\\ndata: {"seq": 1}\\n\\n: heartbeat\\n\\n')
    [{'seq': 1}]
    """
    out = []
    for frame in body.split("\n\n"):
        data = [line[6:] for line in frame.splitlines() if line.startswith("data: ")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out
