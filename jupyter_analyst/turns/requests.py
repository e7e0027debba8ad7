"""What a surface asks of a turn: a prompt for the model (:class:`TurnRequest`), one query
the user runs themselves (:class:`SqlStepRequest`) or one call of a named tool
(:class:`ToolStepRequest`), and what such a step did (:class:`SqlStep`, :class:`ToolStep`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

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


class _StepRequest(BaseModel):
    """What every step the user (or a client agent) asks for has: a thread or a source to make
    one on, and no notebook of theirs read (no model reads it)."""

    source: str | None = None
    thread_id: str | None = None
    rerun: bool = False
    user: str = "local"

    @property
    def notebook(self) -> Path | None:
        """The thread's audit notebook is written in its default place."""
        return None

    @property
    def attached(self) -> AttachedNotebook | None:
        """No notebook of the user's is read: no model reads it."""
        return None


class SqlStepRequest(_StepRequest):
    """One query the user runs into a dataset ``name`` of a thread."""

    NO_SOURCE_HINT: ClassVar[str] = "pass --source SPEC or --thread ID"

    name: str
    sql: str

    @field_validator("sql")
    @classmethod
    def _valid_unicode(cls, sql: str) -> str:
        return valid_text(sql)

    @property
    def prompt(self) -> str:
        """How the turn is recorded: the magic's own words."""
        return f"%analyst_sql {self.name} << {self.sql.strip()}"

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


class ToolStepRequest(_StepRequest):
    """One call of a named tool into a thread, asked for by the user or a client agent."""

    NO_SOURCE_HINT: ClassVar[str] = "pass a source, or a thread that has one"

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    beside: bool = False
    """A look-up run beside the thread's running turn (an MCP host's parallel calls): its own
    turn opens without closing that one, which is live, not left by a dead process."""

    @property
    def prompt(self) -> str:
        """How the turn is recorded: the call, as it was asked for.

        >>> ToolStepRequest(tool="describe_table", arguments={"table": "orders"}).prompt
        'describe_table {"table": "orders"}'
        """
        return valid_text(f"{self.tool} {json.dumps(self.arguments, ensure_ascii=False, default=str)}")

    def check(self) -> None:
        """Refuse a tool that cannot be asked for, before anything opens.

        Raises:
            ConfigError: the tool's spec says no user may ask for it (``user_step``): it
                speaks to the model's own work (a plan, a question), or there is no such tool.
        """
        from ..agent import user_steps

        asked = user_steps()
        if self.tool not in asked:
            raise ConfigError(f"no step runs the tool {self.tool!r}", reason="unknown_tool",
                              hint="one of " + ", ".join(asked))


class ToolStep(BaseModel):
    """What a named tool's step did: the turn's summary, the call's result and its artifacts."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    summary: TurnSummary
    thread_id: str
    status: str
    """The call's: ``ok``, ``error`` or ``refused``."""
    result: dict[str, Any]
    """The call's result, every field of it (or the error, with the guard's message)."""
    shown: dict[str, Any] = Field(default_factory=dict)
    """The result as the model is sent it: a dataset's rows as lists, its floats and long
    values as the agent shows them, no field said twice (the agent's ``model_view``)."""
    reused: bool = False
    artifacts: list[Artifact] = Field(default_factory=list)
    """The artifacts the step made or reused (datasets, charts, files)."""

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.summary.status == "completed"

    @property
    def error(self) -> str | None:
        """The refusal's or failure's message, as the guard or the tool said it."""
        if self.ok:
            return None
        error = self.result.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        summary_error = self.summary.error or {}
        return str(summary_error.get("message") or f"the step ended {self.summary.status}")

    @classmethod
    def of(cls, summary: TurnSummary, outcome: StepOutcome, *, thread_id: str, notebook: Path | None) -> ToolStep:
        return cls(
            summary=summary.model_copy(update={"notebook": str(notebook)}), thread_id=thread_id,
            status=outcome.status, result=outcome.public_result, shown=outcome.model_result,
            reused=outcome.reused,
            artifacts=[artifact for artifact, _ in outcome.artifacts],
        )
