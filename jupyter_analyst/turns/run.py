"""The public entry point: run one turn of a thread, as the CLI and the server do.

>>> AnalystConfig(workspace=".analyst").max_steps
16
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from functools import partial
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, field_validator

from ..agent.eventlog import EventWriter
from ..events import Event, TurnEnded, TurnStarted
from .live import LiveThreads
from ..agent.llm import LLMClient
from ..agent.loop import AgentLoop, TurnSummary
from ..agent.context.pack import ContextBudget
from ..agent.environment.thread import ThreadEnvironment
from .host import BackgroundWork
from ..agent.memory import ThreadMemory, summarize_turn
from ..store import ThreadStore, Turn
from ..errors import AnalystError, ConfigError
from ..kernel import SandboxPolicy
from ..kernel.outputs import OutputCaps
from ..store import renewing
from ..notebooks.export import write_thread_notebook
from ..notebooks.outline import AttachedNotebook
from ..sql import absolute_spec, open_source
from ..sql.preparer import DEFAULT_MAX_CHARS, DEFAULT_TIMEOUT_S
from ..sql.sealed import EngineLimits
from .._text import valid_text
from ..workspace import Workspace

if TYPE_CHECKING:
    from ..kernel import KernelLauncher, KernelPool
    from ..sql import DataSource

DEFAULT_MODEL = "gpt-4o-mini"
NO_MODEL_HINT = "set OPENAI_API_KEY (and OPENAI_BASE_URL for other servers), or try `jupyter analyst demo`"


class ModelSettings(BaseModel):
    """Which OpenAI-compatible endpoint and model answer."""

    model: str
    base_url: str | None = None
    api_key: str | None = None
    summary_model: str | None = None
    """The (cheaper) model of the end-of-turn summarizer; the main model when unset."""

    @classmethod
    def resolve(
        cls, *, model: str | None = None, base_url: str | None = None, api_key: str | None = None,
        summary_model: str | None = None,
    ) -> ModelSettings:
        """Flags first, then ``OPENAI_*`` variables; a clear error when nothing is configured."""
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None and base_url is None:
            raise ConfigError("no model is configured", reason="no_model", hint=NO_MODEL_HINT)
        # Local servers (vLLM, Ollama, llama.cpp) accept any key; the SDK insists on one.
        return cls(
            model=model or os.environ.get("OPENAI_MODEL") or DEFAULT_MODEL,
            base_url=base_url,
            api_key=api_key or "not-needed",
            summary_model=summary_model or os.environ.get("ANALYST_SUMMARY_MODEL") or None,
        )


class AnalystConfig(BaseModel):
    """Settings of the engine shared by the CLI and the server."""

    workspace: Path | str = ".analyst"
    store: str | None = None
    """The database of threads, events and the inventory: ``None`` for the workspace's own
    SQLite file, or a ``postgresql://`` URL shared by several processes."""
    blobs: str | None = None
    """Where artifacts' bytes are kept: ``None`` for the workspace folder, or an
    ``s3://bucket/prefix`` URL (read through a verified cache in the workspace)."""
    blobs_endpoint: str | None = None
    """The S3 API's address for ``blobs`` (MinIO, Ceph...); default: ``AWS_ENDPOINT_URL`` or AWS."""
    max_steps: int = 16
    plan_concurrency: int = Field(default=4, ge=1, le=16,
                                  description="Queries of a staged plan's parallel stage that run at once.")
    context: ContextBudget = ContextBudget()
    """What each model call may carry: tokens, recent turns and messages, summary size."""
    active_ttl_s: float = 1_800.0
    """How long the active source, dataset and notebook stay authoritative without use."""
    summarizer: bool = True
    """Whether a model call after each turn updates the agent state and the rolling summary."""
    query_timeout_s: float = 60.0
    engine: EngineLimits = EngineLimits()
    """What a source's engine may use while it runs queries (DuckDB's memory, threads, spill)."""
    row_cap: int = 1_000_000
    python_timeout_s: float = 120.0
    sql_max_chars: int = Field(
        default=DEFAULT_MAX_CHARS, gt=0,
        description="Longer SQL from the model is refused unparsed (reason sql_too_large).",
    )
    sql_prepare_timeout_s: float = Field(
        default=DEFAULT_TIMEOUT_S, gt=0,
        description="Checking one query (parse, guard, qualify) may take this long, in a worker "
                    "process off the event loop; past it the query is refused (reason sql_too_complex).",
    )
    sandbox: SandboxPolicy = SandboxPolicy()
    outputs: OutputCaps = OutputCaps()
    """How much a step, and a thread in all, may add to the inventory."""
    turn_lease_s: float = Field(default=30.0, ge=1.0, description=(
        "On a shared (PostgreSQL) store: how long a running turn's lease lasts; its process renews it every "
        "third of that, and a turn whose lease ran out is closed as interrupted (see store/leases.py)."))


class TurnRequest(BaseModel):
    """One prompt for one thread."""

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


async def run_turn(
    request: TurnRequest,
    *,
    config: AnalystConfig,
    model: ModelSettings,
    on_event: Callable[[Event], Awaitable[None] | None] | None = None,
    launcher: KernelLauncher | None = None,
    pool: KernelPool | None = None,
    background: BackgroundWork | None = None,
    live: LiveThreads | None = None,
    turn: Turn | None = None,
) -> TurnSummary:
    """Run one turn end to end: resolve the thread and source, loop, write the notebook.

    ``launcher`` decides where kernels start (the Jupyter server passes its own kernel
    manager's); by default they start on this machine. A long-running process passes a
    warm ``pool`` so a new thread's first Python step does not wait for a kernel, and
    ``live`` to keep each thread's runtime, its kernel included, from one turn to the
    next; without it the kernel stops when the turn ends. A turn cancelled or failed
    midway keeps nothing of its kernel (a step may have been cut in the middle).

    ``turn``: the turn, already started and announced by the caller on the request's
    thread (the server does so while it answers the request: its client sees the turn begin
    at once, see :meth:`ThreadStore.announce_turn`).

    After ``done``, the summarizer updates the agent state: in ``background`` when given (the
    call returns as soon as the turn is done, and the next turn may start at once), else
    before returning.
    """
    if not request.prompt.strip():
        raise ConfigError("the prompt is empty", reason="empty_prompt", hint="pass --prompt TEXT")
    workspace = Workspace.of(config)
    try:
        # The blob store first (off the loop: an object store is asked over the network), so
        # one that cannot be used is a clear error before the turn starts, not in its middle.
        await asyncio.to_thread(lambda: workspace.artifacts)
        store = workspace.store
        if request.thread_id:
            thread = store.get_thread(request.thread_id, user=request.user)
        else:
            thread = None
        spec = request.source or (thread.source if thread else None)
        if not spec:
            raise ConfigError("no data source given", reason="no_source", hint="pass --db PATH_OR_URL")
        # Stored absolute: the thread goes on, and its notebook re-runs, from any folder.
        spec = absolute_spec(spec)
        events = EventWriter(store, on_event)
        if turn is not None and (thread is None or turn.thread_id != thread.thread_id):
            raise ConfigError("the announced turn is not of the request's thread", reason="turn_mismatch")
        announced_here = turn is None and thread is not None
        # A turn opened here holds a lease on a shared store (one announced by a server
        # holds the server's): another process neither starts a turn under it nor cuts it.
        lease_s = config.turn_lease_s if turn is None and workspace.store_url is not None else None
        if announced_here:
            # A thread that goes on: its turn starts, and says so, before the source is
            # connected, so a client sees it begin at once. (A new thread is made only once
            # its source has opened.)
            turn = await asyncio.to_thread(store.start_turn, thread.thread_id, request.prompt, lease_s=lease_s)
        source: DataSource | None = None
        data_version: str | None = None
        llm: LLMClient | None = None
        runtime: ThreadEnvironment | None = None
        keep = True
        running = False
        try:
            if turn is not None and announced_here:
                await events.append(TurnStarted(
                    thread_id=turn.thread_id, turn_id=turn.turn_id, prompt=turn.prompt, model=model.model,
                    rerun=request.rerun,
                ))
            # Connecting (a DuckDB file: some 20 ms) runs off the event loop, which other turns share.
            source = opened = await asyncio.to_thread(partial(open_source, spec, limits=config.engine))
            if thread is None:
                thread = store.create_thread(user=request.user, source=spec, title=request.prompt[:80])
            elif thread.source != spec:
                store.set_thread_source(thread.thread_id, spec)
            thread_id = thread.thread_id

            def build() -> ThreadEnvironment:
                return ThreadEnvironment(
                    thread_id=thread_id,
                    source=opened,
                    artifacts=workspace.artifacts,
                    workdir=workspace.kernel_dir(thread_id),
                    datasets_root=workspace.datasets_root,
                    output_caps=config.outputs,
                    query_timeout_s=config.query_timeout_s,
                    row_cap=config.row_cap,
                    python_timeout_s=config.python_timeout_s,
                    sql_max_chars=config.sql_max_chars,
                    sql_prepare_timeout_s=config.sql_prepare_timeout_s,
                    sandbox=config.sandbox,
                    launcher=launcher,
                    pool=pool,
                )

            llm = LLMClient(model=model.model, base_url=model.base_url, api_key=model.api_key)
            runtime = build() if live is None else await live.checkout(thread_id, thread.user, build)
            if runtime.source is not source:
                # A kept runtime: this turn's source (the thread's may have changed) and stores.
                # No source stays open between turns: nothing holds a lock on the database
                # file, or reads it at the version it had when the kernel started.
                runtime.attach(source=source, artifacts=workspace.artifacts)
            # This turn's notebook, as read when it started (a kept runtime had the last turn's).
            runtime.attached = request.attached
            loop = AgentLoop(
                store=store,
                environment=runtime,
                llm=llm,
                model=model.model,
                emit=on_event,
                max_steps=config.max_steps,
                plan_concurrency=config.plan_concurrency,
                budget=config.context,
                active_ttl_s=config.active_ttl_s,
                events=events,
            )
            announced = turn is not None
            if turn is None:
                turn = store.start_turn(thread_id, request.prompt, lease_s=lease_s)
            try:
                running = True
                async with renewing(store, turn, lease_s):
                    summary, _trace = await loop.run(turn, rerun=request.rerun, announced=announced)
            except BaseException:
                keep = False  # cancelled or failed midway: a step may have been cut in the middle
                raise
        except BaseException as exc:
            if turn is not None and not running:  # announced, but the loop never took it over
                await _abandon(events, store, turn, exc)
            if thread is not None and turn is not None:
                # The interrupted or failed turn is in the notebook too, marked; a notebook
                # that cannot be written now does not hide why the turn ended.
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(
                        write_thread_notebook, store, workspace.artifacts, thread.thread_id,
                        request.notebook or workspace.notebook_path(thread.thread_id),
                        data_version=data_version_of(source),
                    )
            raise
        finally:
            if live is not None and runtime is not None:
                await live.checkin(thread.thread_id, keep=keep)  # type: ignore[union-attr]
            elif runtime is not None:
                await runtime.close()
            if llm is not None:
                await llm.aclose()
            if source is not None:
                data_version = data_version_of(source)
                source.close()
        notebook = await asyncio.to_thread(
            record_notebook, workspace, thread.thread_id, turn.turn_id, request.notebook, data_version
        )
    finally:
        workspace.close()
    if config.summarizer and summary.status == "completed":
        job = _summarize(config, model, turn, on_event)
        if background is not None:
            background.spawn(job)
        else:
            await job
    return summary.model_copy(update={"notebook": str(notebook)})


def record_notebook(
    workspace: Workspace, thread_id: str, turn_id: str, notebook: Path | None, data_version: str | None
) -> Path:
    """After a turn: the thread's audit notebook made whole from the store (the same form as
    `jupyter analyst export`, so `verify` takes it as it is), and the turn closed on it in
    the agent state. Blocking: call off the event loop."""
    path = notebook or workspace.notebook_path(thread_id)
    write_thread_notebook(workspace.store, workspace.artifacts, thread_id, path, data_version=data_version)
    ThreadMemory(workspace.store, thread_id).close_turn(turn_id, notebook=str(path))
    return path


def data_version_of(source: DataSource | None) -> str | None:
    """The source's version as the turn leaves it (a file's size and time: a stat), for
    the notebook's summary; ``None`` when it cannot be told (the file is gone)."""
    if source is None:
        return None
    try:
        return source.data_version()
    except AnalystError:
        return None


async def _abandon(events: EventWriter, store: ThreadStore, turn: Turn, exc: BaseException) -> None:
    """End a turn that was announced but could not start (its source did not open, say):
    ``turn_ended`` says why, and the turn is closed, as the loop closes the turns it ran."""
    status: Literal["error", "interrupted"] = "interrupted" if isinstance(exc, asyncio.CancelledError) else "error"
    message = "cancelled by the user" if status == "interrupted" else str(exc)
    with contextlib.suppress(AnalystError):  # the first error is the one to tell
        await events.append(TurnEnded(thread_id=turn.thread_id, turn_id=turn.turn_id, status=status, message=message))
        await asyncio.to_thread(store.end_turn, turn.turn_id, status)


async def _summarize(
    config: AnalystConfig, model: ModelSettings, turn: Turn, on_event: Callable[[Event], Awaitable[None] | None] | None
) -> None:
    """The end-of-turn summarizer, with its own store connection and model client."""
    workspace = Workspace.of(config)
    llm = LLMClient(model=model.summary_model or model.model, base_url=model.base_url, api_key=model.api_key)
    try:
        await summarize_turn(ThreadMemory(workspace.store, turn.thread_id), turn, llm, budget=config.context,
                             events=EventWriter(workspace.store, on_event))
    finally:
        await llm.aclose()
        workspace.close()
