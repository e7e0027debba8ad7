"""The public entry point for a step the user runs themselves: ``run_sql`` into a thread.

The ``%analyst_sql`` magic calls it; so could any other surface. It is a turn like
:func:`~jupyter_analyst.analysis.run_turn`'s (the thread and source resolved the same way,
events persisted, the thread's audit notebook rewritten), whose one step the user typed instead
of a model: same guard, same unknown-name suggestions, same Parquet artifact and
fingerprint, same reuse by step key.
"""

from __future__ import annotations

import asyncio
from functools import partial
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from ..agent.turn_record import USER_DRIVEN
from ..agent.eventlog import EventWriter
from ..events import Event
from ..agent.loop import AgentLoop, TurnSummary
from ..agent.environment.thread import ThreadEnvironment
from .run import AnalystConfig, data_version_of, record_notebook
from ..artifacts import Artifact
from ..errors import ConfigError
from ..sql import absolute_spec, open_source
from .._text import valid_text
from ..workspace import Workspace


class SqlStepRequest(BaseModel):
    """One query the user runs into a dataset ``name`` of a thread."""

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


async def run_sql_step(
    request: SqlStepRequest,
    *,
    config: AnalystConfig,
    on_event: Callable[[Event], Awaitable[None] | None] | None = None,
) -> SqlStep:
    """Run the user's query as one turn of its thread (made on ``request.source`` when
    no thread is given); no kernel starts and no model is asked.

    Raises:
        ConfigError: no thread and no source, or an unknown thread.
        SourceError: the source does not open.
    """
    if not request.sql.strip():
        raise ConfigError("the query is empty", reason="empty_payload", hint="write the SELECT after the name")
    workspace = Workspace.of(config)
    try:
        store = workspace.store
        thread = store.get_thread(request.thread_id, user=request.user) if request.thread_id else None
        spec = request.source or (thread.source if thread else None)
        if not spec:
            raise ConfigError("no data source given", reason="no_source", hint="pass --source SPEC or --thread ID")
        spec = absolute_spec(spec)
        source = await asyncio.to_thread(partial(open_source, spec, limits=config.engine))
        runtime: ThreadEnvironment | None = None
        try:
            if thread is None:
                thread = store.create_thread(user=request.user, source=spec, title=request.prompt[:80])
            elif thread.source != spec:
                store.set_thread_source(thread.thread_id, spec)
            runtime = ThreadEnvironment(
                thread_id=thread.thread_id, source=source, artifacts=workspace.artifacts,
                workdir=workspace.kernel_dir(thread.thread_id), datasets_root=workspace.datasets_root,
                output_caps=config.outputs, query_timeout_s=config.query_timeout_s, row_cap=config.row_cap,
                sql_max_chars=config.sql_max_chars, sql_prepare_timeout_s=config.sql_prepare_timeout_s,
            )
            loop = AgentLoop(
                store=store, environment=runtime, llm=None, model=USER_DRIVEN, budget=config.context,
                active_ttl_s=config.active_ttl_s, events=EventWriter(store, on_event),
            )
            turn = await asyncio.to_thread(store.start_turn, thread.thread_id, request.prompt)
            summary, _trace, outcome = await loop.run_call(
                turn, "run_sql", {"sql": request.sql, "name": request.name}, rerun=request.rerun
            )
        finally:
            if runtime is not None:
                await runtime.close()
            data_version = data_version_of(source)
            source.close()
        notebook = await asyncio.to_thread(record_notebook, workspace, thread.thread_id, turn.turn_id, None, data_version)
    finally:
        workspace.close()
    dataset = next((a for a, _ in outcome.artifacts if a.type == "dataset"), None)
    return SqlStep(
        summary=summary.model_copy(update={"notebook": str(notebook)}),
        result=outcome.public_result, reused=outcome.reused, dataset=dataset if outcome.status == "ok" else None,
    )
