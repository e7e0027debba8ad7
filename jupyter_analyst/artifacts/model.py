"""The inventory's records: artifacts and executed steps."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from ..errors import AnalystError
from ..ledger import StepCost

ArtifactType = Literal["dataset", "image", "file", "text"]
Producer = Literal["sql", "python"]


class ArtifactNotFound(AnalystError):
    """No artifact with that id."""

    reason = "artifact_not_found"


class Artifact(BaseModel):
    """One inventory row: a dataset, chart or file a step produced."""

    artifact_id: str
    thread_id: str
    name: str
    type: ArtifactType
    mime: str
    created_at: str
    source_call_id: str | None = None
    producer: Producer
    logical_key: str | None = None
    fingerprint: str
    size: int

    def summary(self) -> dict[str, Any]:
        """A compact form for the model: what it can name and use (its fingerprint, time and
        size in bytes tell a model nothing it can act on)."""
        return {"id": self.artifact_id, "name": self.name, "type": self.type}


class StepRecord(BaseModel):
    """One executed SQL or Python step, kept so an identical step can be reused."""

    thread_id: str
    step_key: str
    tool: str
    call_id: str
    turn_id: str
    arguments: dict[str, Any]
    status: Literal["ok", "error"]
    result: dict[str, Any]
    artifact_ids: list[str]
    created_at: str
    duration_s: float
    cost: StepCost | None = None
    """Its share of the model call that issued it (see jupyter_analyst/ledger.py); ``None``
    until its reply's steps are done, and for steps recorded before the ledger."""
