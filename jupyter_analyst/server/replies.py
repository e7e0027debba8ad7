"""What the API answers: one typed model per response body.

The OpenAPI description (``openapi/``) is generated from these and from the request
models in ``inputs.py``, so a body and its description cannot drift apart.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..budgets import BudgetLine, Spent
from ..events import Event
from ..ledger import Ledger
from ..artifacts import Artifact
from ..notebooks import ArtifactCheck, CheckStatus, ClaimStatus, ReansweredAnswer, VerifyVerdict
from ..step_kinds import StepTool
from ..store import Thread, Turn
from ..turns import ProposalView, RevertResult  # noqa: F401 - answers' models (openapi/operations.py)
from .inputs import ApiLimits


class Error(BaseModel):
    """Every refusal: what went wrong, a stable code to act on, and what to send instead."""

    model_config = ConfigDict(extra="allow")

    message: str
    """For a person."""
    reason: str | None
    """A stable code (see the list in the description of this API)."""
    hint: str | None
    """What to send instead, when there is something to say."""
    field: str | None = None
    """The refused field or parameter."""
    sources: list[str] | None = None
    """With ``unknown_source``: the configured names."""
    verification_id: str | None = None
    """With ``verify_in_progress``: the verification under way, to follow instead."""


class ModelInfo(BaseModel):
    """The model the server's turns use (never its key)."""

    configured: bool
    """``false``: turns are refused with ``no_model`` until one is set."""
    name: str | None
    base_url: str | None
    """Its endpoint, a URL's password masked."""
    scripted: bool
    """The offline scripted model (its replies are canned)."""
    hint: str | None
    """How to configure one, when none is."""


class ContextInfo(BaseModel):
    """The team's context folder, as far as a client offers to add to it."""

    configured: bool
    """A folder is set (``c.AnalystApp.context_dir``) or the default one (``context/`` beside
    the workspace) exists: a completed turn's answer may be verified into it (by its editors)."""


class ConfigReply(BaseModel):
    """``GET config``."""

    version: str
    model: ModelInfo
    sources: list[str]
    """The configured sources' names."""
    context: ContextInfo
    limits: ApiLimits


class SourceInfo(BaseModel):
    """A configured source: its name and whether it is a URL or a path (never either itself)."""

    name: str
    kind: Literal["url", "path"]


class SourcesReply(BaseModel):
    """``GET sources``."""

    sources: list[SourceInfo]


class TableEntry(BaseModel):
    """A table of a thread's source, as the model's outline lists it."""

    name: str
    rows: int | None
    """Its exact row count (or its engine's estimate: ``rows_estimated``); ``None`` when it was
    not counted in time."""
    rows_estimated: bool = False
    """Whether ``rows`` is the engine's catalogue estimate (a table past a million rows is not counted)."""


class TablesReply(BaseModel):
    """``GET threads/{thread_id}/tables``: what an empty thread offers to start from."""

    source: str | None
    """The source's configured name (``None`` for one the server shows no name of)."""
    tables: list[TableEntry]
    more: int
    """How many tables the source has beyond those listed (the model browses them too)."""
    suggestions: list[str]
    """Questions to start from: the scripted model's own, or ones built from the table names."""


class ThreadsReply(BaseModel):
    """``GET threads``: the caller's threads, the most recently active first."""

    threads: list[Thread]


class KernelInfo(BaseModel):
    """A thread's live kernel; a JupyterLab console attaches to it by its id (``/api/kernels/{id}``)."""

    id: str | None
    """Its id in the server's kernel manager."""
    state: str
    """Its execution state as the server sees it: idle, busy, starting."""
    last_activity: str | None
    """UTC, ISO 8601."""


class ThreadReply(Thread):
    """``GET threads/{thread_id}``."""

    turns: list[Turn]
    ledger: Ledger
    """What the thread's turns cost, summed (each turn's own is in ``turns``)."""
    active: bool
    """Whether a turn is running."""
    last_seq: int
    """The number of its last event (0 before any)."""
    kernel: KernelInfo | None
    """Its live kernel, or null when none runs (none started yet, or stopped after
    ``c.AnalystApp.kernel_idle`` seconds unused or past the ``max_kernels`` caps; the next
    Python step starts one)."""


class ThreadDeleted(BaseModel):
    """What deleting a thread removed."""

    thread_id: str
    artifacts: int
    """How many artifacts it held: gone from the inventory (their bytes stay in the content
    store, which addresses them by content and may hold them for other threads)."""


class EventsReply(BaseModel):
    """``GET threads/{thread_id}/events`` as JSON."""

    events: list[Event]


class CancelReply(BaseModel):
    """``POST threads/{thread_id}/cancel``."""

    cancelled: bool
    """Whether a running turn was stopped."""


class ArtifactsReply(BaseModel):
    """``GET threads/{thread_id}/artifacts``."""

    artifacts: list[Artifact]


class ExportReply(BaseModel):
    """``POST threads/{thread_id}/export``."""

    path: str
    """Where the notebook was written, in the caller's Jupyter folder."""
    cells: int
    artifacts: int
    """How many artifacts its manifest lists."""


class VerifyReply(BaseModel):
    """A finished verification's report: ``jupyter analyst verify --json``'s."""

    notebook: str | None
    """The verified notebook's path in the caller's folder, or null for a fresh export."""
    source: str | None
    """The thread's source, by configured name."""
    verdict: VerifyVerdict
    """``verified``: every artifact matched; ``not_verified``: one differs or is missing, or a
    cell failed; ``nothing_to_verify``: the notebook records no artifact (nothing was run)."""
    checks: list[ArtifactCheck]
    error: str | None
    """The execution error, when a cell failed (the checks say what it left missing)."""
    counts: dict[CheckStatus, int]
    """How many checks have each status."""
    ok: bool
    """``verdict`` is ``verified``."""


class ReanswerReply(BaseModel):
    """A finished re-answer: ``jupyter analyst verify --reanswer --json``'s answers restated."""

    notebook: str | None
    """The re-answered notebook's path in the caller's folder, or null for a fresh export."""
    source: str | None
    """The thread's source, by configured name."""
    answers: list[ReansweredAnswer]
    """Each answer of the notebook restated: ``answer`` with today's values, ``marked`` with each
    changed number written ``new (was old)``, and its ``claims`` (each cited number then and now,
    ``changed``, ``unchanged``, ``gone`` or ``not_rechecked``, and where it stands in ``answer``).
    The text around the cited numbers is as the model wrote it: not re-checked."""
    counts: dict[ClaimStatus, int]
    """How many claims have each status."""
    output: str | None
    """Where the re-answered notebook was written in the caller's folder (beside the verified
    notebook, or the default export's path); null when it was not."""
    output_refused: str | None
    """Why it was not written, when it was not."""


class Verification(BaseModel):
    """``POST threads/{thread_id}/verify`` (202, at once) and ``GET
    threads/{thread_id}/verifications/{verification_id}``: one re-execution of the thread's
    notebook, followed until it is done."""

    verification_id: str
    thread_id: str
    kind: Literal["verify", "reanswer"]
    """``reanswer``: started with ``reanswer``; once done, ``reanswer`` holds the answers restated."""
    status: Literal["queued", "running", "done", "failed"]
    """``queued``: waiting for a free slot (a few run at once per server); ``running``: the
    notebook is being re-executed; ``done``: ``report`` says what it reproduced; ``failed``:
    no report could be made, ``error`` says why. Ask again after ``Retry-After`` seconds
    until ``done`` or ``failed``."""
    notebook: str | None
    """The verified notebook's path in the caller's folder, or null for a fresh export."""
    source: str | None
    """The thread's source, by configured name."""
    created_at: str
    """UTC, ISO 8601."""
    started_at: str | None
    finished_at: str | None
    report: VerifyReply | None
    """Once ``done``: the report, as ``jupyter analyst verify --json`` makes it."""
    reanswer: ReanswerReply | None
    """Once a re-answer is ``done``: the answers restated on today's data."""
    error: Error | None
    """Once ``failed``: why there is no report."""


class StepCell(BaseModel):
    """``GET threads/{thread_id}/steps/{call_id}/cell``."""

    tool: StepTool
    call_id: str
    name: str | None
    """The dataset's name, for SQL."""
    source: str
    """The cell's code."""
    setup: str
    """Code that opens the thread's source with the runtime helper, as exported notebooks do."""


class Preview(BaseModel):
    """``GET artifacts/{artifact_id}/preview``: a notebook output's MIME bundle."""

    data: dict[str, Any] = Field(description="MIME type -> content (text, or base64 for images)")
    metadata: dict[str, Any]
    """For a dataset: ``{rows, columns, shown}``."""


class BudgetReply(BaseModel):
    """``GET budget``: what the caller may still spend, budget by budget."""

    user: str
    limited: bool
    """Whether the server has budgets at all (``false``: nothing is limited, ``budgets`` is empty)."""
    timezone: str
    """The zone whose midnight ends a day."""
    budgets: list[BudgetLine]
    """Each budget that applies to the caller (the server's, their own, the thread's when asked)."""
    exhausted: bool
    """The caller's next model call would be refused."""
    message: str | None
    """What a refused turn says (what was spent, the limit, when it resets), when ``exhausted``."""


class UserSpending(Spent):
    """What one user's model calls spent on the day, with their budgets as they stand."""

    user: str
    budgets: list[BudgetLine]
    """The user's own and the server's daily and total budgets (not their threads')."""


class SpendingReply(BaseModel):
    """``GET budget/users``: each user's spending on one day (for the server's administrators)."""

    day: str
    """The day, YYYY-MM-DD, in ``timezone``."""
    timezone: str
    starts_at: str
    """Its start and end, ISO-8601 UTC."""
    ends_at: str
    users: list[UserSpending]
    """Every user who made a model call that day, by name."""
    total: Spent


class ProposalsReply(BaseModel):
    """``GET threads/{thread_id}/proposals``: the cells the model proposed, oldest first."""

    proposals: list[ProposalView]

