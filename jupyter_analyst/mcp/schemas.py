"""The tools' output schemas: the structured content of each result that did not fail, as a
client (and the SDK, which checks it) reads it. Open to more fields, so a result may say more
than its schema without breaking a client that validates."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..notebooks import ChangeStatus
from ..receipts import Citation, UnsupportedClaim


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class ArtifactOut(_Open):
    id: str
    name: str
    type: str
    mime: str
    size: int
    fingerprint: str
    uri: str


class StepOut(_Open):
    thread: str | None
    source: str | None = None
    tool: str
    status: str
    reused: bool
    result: dict[str, Any]
    artifacts: list[ArtifactOut]


class SandboxOut(_Open):
    """How a proposed code cell ran in the thread's sandboxed kernel."""

    status: Literal["ok", "error"]
    error: str | None = None
    output: str = ""
    figures: int = 0
    artifacts: list[str] = []


class ChangeOut(_Open):
    """One proposed change: the cell's source before and after, and their unified diff."""

    change_id: str
    op: Literal["insert", "replace", "delete"]
    cell_id: str | None
    after: str | None
    cell_type: Literal["code", "markdown"]
    reason: str
    status: ChangeStatus
    old_source: str | None
    """The cell's source now ("" for an insert; null when it cannot be read)."""
    new_source: str | None
    """What the cell would hold (null for a delete)."""
    diff: str
    """A unified diff of old_source to new_source."""
    sandbox: SandboxOut | None
    conflict: str | None = None


class ProposalOut(_Open):
    """Cells the model proposed for the notebook in one call, as a structured diff."""

    proposal_id: str
    turn_id: str
    notebook: str
    """The notebook's path relative to the server's notebook folder."""
    status: Literal["pending", "failed", "accepted", "rejected", "reverted", "withdrawn", "partly_decided"]
    failed: bool
    changes: list[ChangeOut]


class AskOut(_Open):
    thread: str
    source: str | None = None
    turn: str | None = None
    status: str
    answer: str | None = None
    artifacts: list[ArtifactOut]
    notebook: str | None = None
    citations: list[Citation] = []
    """The answer's numbers tied to the step results that hold them (spans index ``answer``)."""
    unsupported: list[UnsupportedClaim] = []
    """The answer's numbers and dates no result supports."""
    proposals: list[ProposalOut] = []
    """Cells the turn proposed for the notebook it worked beside (nothing changes until accepted)."""


class DecisionOut(_Open):
    """A proposal after a decision: each change with its status."""

    thread: str
    proposals: list[ProposalOut]


class RevertOut(_Open):
    """A turn's accepted changes undone: the notebook restored from its checkpoint."""

    thread: str
    turn_id: str
    notebook: str
    reverted: list[str]


class TableOut(_Open):
    name: str
    rows: int | None = None


class SourceOut(_Open):
    """A configured source, by name: never its path or URL."""

    name: str
    default: bool
    kind: str | None = None
    tables: list[TableOut]
    more_tables: int | None = None
    error: str | None = None


class SourcesOut(_Open):
    default: str | None
    sources: list[SourceOut]
    threads: list[dict[str, Any]]


class ThreadOut(_Open):
    thread: str
    title: str | None = None
    source: str | None = None
    last_activity: str | None = None
    running: bool


class ThreadsOut(_Open):
    threads: list[ThreadOut]


class ArtifactsOut(_Open):
    thread: str | None
    artifacts: list[ArtifactOut]


class StateOut(_Open):
    thread: str
    source: str | None = None
    title: str | None = None
    turns: list[dict[str, Any]]
    state: dict[str, Any]


class VerifyOut(_Open):
    thread: str
    verdict: str


class RestartOut(_Open):
    thread: str
    stopped: bool
