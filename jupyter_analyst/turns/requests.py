"""What a surface asks of a turn: a prompt for the model (:class:`TurnRequest`), or one query
the user runs themselves (:class:`SqlStepRequest`), and what such a step did (:class:`SqlStep`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, field_validator

from .._text import valid_text
from ..agent import StepOutcome, TurnSummary
from ..artifacts import Artifact
from ..errors import ConfigError
from ..notebooks import AttachedNotebook


class TurnRequest(BaseModel):
    """One prompt for one thread."""

    NO_SOURCE_HINT: ClassVar[str] = "pass --db PATH_OR_URL"

    prompt: str
    source: str | None = None
    thread_id: str | None = None
    rerun: bool = False
    user: str = "local"
    notebook: Path | None = None
    """Where the thread's audit notebook is written (its default place when absent)."""
    attached: AttachedNotebook | None = None
    """The user's notebook the turn works beside: its outline goes into the prompt, and the
    model reads its cells with ``read_cells``."""

    @field_validator("prompt")
    @classmethod
    def _valid_unicode(cls, prompt: str) -> str:
        # A terminal or a JSON body can carry lone surrogates, which nothing can store.
        return valid_text(prompt)

    def check(self) -> None:
        """Refuse a request that cannot make a turn, before anything opens.

        Raises:
            ConfigError: the prompt is empty.
        """
        if not self.prompt.strip():
            raise ConfigError("the prompt is empty", reason="empty_prompt", hint="pass --prompt TEXT")


class SqlStepRequest(BaseModel):
    """One query the user runs into a dataset ``name`` of a thread."""

    NO_SOURCE_HINT: ClassVar[str] = "pass --source SPEC or --thread ID"

    name: str
    sql: str
    source: str | None = None
    thread_id: str | None = None
    rerun: bool = False
    user: str = "local"

    @field_validator("sql")
    @classmethod
    def _valid_unicode(cls, sql: str) -> str:
        return valid_text(sql)

    @property
    def prompt(self) -> str:
        """How the turn is recorded: the magic's own words."""
        return f"%analyst_sql {self.name} << {self.sql.strip()}"

    @property
    def notebook(self) -> Path | None:
        """The thread's audit notebook is written in its default place."""
        return None

    @property
    def attached(self) -> AttachedNotebook | None:
        """No notebook of the user's is read: no model reads it."""
        return None

    def check(self) -> None:
        """Refuse an empty query, before anything opens.

        Raises:
            ConfigError: the query is empty.
        """
        if not self.sql.strip():
            raise ConfigError("the query is empty", reason="empty_payload", hint="write the SELECT after the name")

    def arguments(self) -> dict[str, Any]:
        """The ``run_sql`` call the user typed."""
        return {"sql": self.sql, "name": self.name}


class SqlStep(BaseModel):
    """What the step did: the turn's summary, and the dataset when it was made or reused."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    summary: TurnSummary
    result: dict[str, Any]
    """The step's result as the model would see it (rows, columns, sample, or the error)."""
    reused: bool = False
    dataset: Artifact | None = None

    @property
    def ok(self) -> bool:
        return self.summary.status == "completed" and self.dataset is not None

    @classmethod
    def of(cls, summary: TurnSummary, outcome: StepOutcome, *, notebook: Path | None) -> SqlStep:
        """The step as its turn ended: its dataset when the call succeeded."""
        dataset = next((a for a, _ in outcome.artifacts if a.type == "dataset"), None)
        return cls(
            summary=summary.model_copy(update={"notebook": str(notebook)}),
            result=outcome.public_result, reused=outcome.reused, dataset=dataset if outcome.status == "ok" else None,
        )
