"""The frame every turn runs in, the model's (run.py) and the user's own step (user_step.py).

:func:`open_turn` resolves, in this order: the workspace (its blob store checked first) →
the thread (a new one is made once its source opens) → the turn (announced at once on a
thread that goes on) → the source (opened off the loop) → the environment (checked out of
``host.live``, or built). The body runs the turn with :meth:`TurnFrame.run`. On the way
out, in every case: the environment is checked in (kept only after a clean turn) or
closed, and the source closed; on a failure, an announced turn that the loop never took is
ended (:func:`_abandon`) and the audit notebook written with the turn marked; after a
clean turn, the audit notebook is written and becomes the active notebook.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from .. import sql
from ..agent import EventSink, EventWriter, ThreadEnvironment, ThreadMemory
from ..errors import AnalystError, ConfigError
from ..knowledge import load_team_context
from ..events import StartingWhat
from ..events import starting as starting_event
from ..notebooks import write_thread_notebook
from ..store import Thread, ThreadStore, Turn, renewing
from ..workspace import Workspace
from .config import AnalystConfig
from .host import TurnHost
from .life import TurnLife, abandoned_turn

if TYPE_CHECKING:
    from ..notebooks import AttachedNotebook
    from ..sql import DataSource

T = TypeVar("T")


class Ask(Protocol):
    """What a turn is asked with (a :class:`~.requests.TurnRequest` or a :class:`~.requests.SqlStepRequest`)."""

    NO_SOURCE_HINT: str
    prompt: str
    source: str | None
    thread_id: str | None
    user: str
    rerun: bool

    @property
    def notebook(self) -> Path | None: ...

    @property
    def attached(self) -> AttachedNotebook | None: ...


@dataclass
class TurnFrame:
    """One turn's resources, as :func:`open_turn` resolved them."""

    workspace: Workspace
    events: EventWriter
    prompt: str
    thread: Thread | None
    turn: Turn | None
    spec: str
    """The source, stored absolute: the thread goes on, and its notebook re-runs, from any folder."""
    life: TurnLife
    """How the turn's start and end are told."""
    lease_s: float | None
    source: DataSource | None = None
    environment: ThreadEnvironment | None = None
    running: bool = False
    """The loop has taken the turn over (it ends the turn itself, however it ends)."""
    keep: bool = True
    """Whether the environment's kernel may be kept: not after a turn cut in the middle."""
    data_version: str | None = None
    notebook: Path | None = None
    """The audit notebook, written once the turn is over."""

    @property
    def store(self) -> ThreadStore:
        return self.workspace.store

    async def run(self, body: Callable[[Turn], Awaitable[T]]) -> T:
        """Run the turn: started and told now when it was not yet (a new thread's), its
        lease renewed while ``body`` runs; a body cancelled or failed midway keeps nothing of
        its kernel (a step may have been cut in the middle)."""
        assert self.thread is not None and self.environment is not None
        if self.turn is None:
            self.turn = await asyncio.to_thread(
                self.store.start_turn, self.thread.thread_id, self.prompt, lease_s=self.lease_s
            )
            await self.events.append(self.life.started(self.turn))
        turn = self.turn
        events = self.events

        async def starting(what: StartingWhat) -> None:
            await events.append(starting_event(what, thread_id=turn.thread_id, turn_id=turn.turn_id))

        # What the turn waits for while it starts (its kernel, the SQL checker) is told as it starts.
        self.environment.on_starting = starting
        try:
            self.running = True
            async with renewing(self.store, self.turn, self.lease_s):
                return await body(self.turn)
        except BaseException:
            self.keep = False
            raise
        finally:
            self.environment.on_starting = None


@contextlib.asynccontextmanager
async def open_turn(
    request: Ask, config: AnalystConfig, host: TurnHost, *, speaker: str, on_event: EventSink | None = None,
    announced: Turn | None = None,
) -> AsyncIterator[TurnFrame]:
    """The turn's frame, resolved in the order the module says, closed however it ends.

    ``speaker``: the model that answers (or the user), as ``turn_started`` says it.
    ``announced``: the turn, already started and announced by the caller on the request's
    thread (the server does so while it answers the request).

    Raises:
        ConfigError: no source, an unknown thread, or an announced turn of another thread.
        SourceError: the source does not open.
    """
    workspace = Workspace.of(config)
    try:
        frame = await _resolve(request, config, workspace, on_event, announced, TurnLife(speaker, request.rerun))
        try:
            if frame.turn is not None and announced is None:
                await frame.events.append(frame.life.started(frame.turn))
            # Connecting (a DuckDB file: some 20 ms) runs off the event loop, which other turns share.
            # (The engines are imported by the first turn that opens a source, not at a server's start.)
            frame.source = await asyncio.to_thread(partial(sql.open_source, frame.spec, limits=config.engine))
            frame.thread = _thread_on(frame.store, frame.thread, request, frame.spec)
            frame.environment = await _environment(frame, config, host, request.attached)
            yield frame
        except BaseException as exc:
            await _on_failure(frame, request, exc)
            raise
        finally:
            if frame.environment is not None:
                await host.release(frame.environment, frame.thread.thread_id, keep=frame.keep)  # type: ignore[union-attr]
            if frame.source is not None:
                frame.data_version = data_version_of(frame.source)
                frame.source.close()
        assert frame.thread is not None and frame.turn is not None
        frame.notebook = await asyncio.to_thread(
            record_notebook, workspace, frame.thread.thread_id, frame.turn.turn_id, request.notebook, frame.data_version
        )
    finally:
        workspace.close()


async def _resolve(
    request: Ask, config: AnalystConfig, workspace: Workspace, on_event: EventSink | None, announced: Turn | None,
    life: TurnLife,
) -> TurnFrame:
    """The workspace's blob store, the thread, the source's spec, and the turn when it is
    announced: by the caller, or here on a thread that goes on (a new thread is made only
    once its source has opened)."""
    # The blob store first (off the loop: an object store is asked over the network), so
    # one that cannot be used is a clear error before the turn starts, not in its middle.
    await asyncio.to_thread(lambda: workspace.artifacts)
    store = workspace.store
    events = EventWriter(store, on_event)
    thread = store.get_thread(request.thread_id, user=request.user) if request.thread_id else None
    spec = request.source or (thread.source if thread else None)
    if not spec:
        raise ConfigError("no data source given", reason="no_source", hint=request.NO_SOURCE_HINT)
    spec = sql.absolute_spec(spec)
    if announced is not None and (thread is None or announced.thread_id != thread.thread_id):
        raise ConfigError("the announced turn is not of the request's thread", reason="turn_mismatch")
    # A turn opened here holds a lease on a shared store (one announced by a server holds
    # the server's): another process neither starts a turn under it nor cuts it.
    lease_s = config.turn_lease_s if announced is None and workspace.store_url is not None else None
    turn = announced
    if turn is None and thread is not None:
        # A thread that goes on: its turn starts, and says so, before the source is
        # connected, so a client sees it begin at once.
        turn = await asyncio.to_thread(store.start_turn, thread.thread_id, request.prompt, lease_s=lease_s,
                                       beside=getattr(request, "beside", False))
    return TurnFrame(workspace=workspace, events=events, prompt=request.prompt, thread=thread, turn=turn,
                     spec=spec, life=life, lease_s=lease_s)


def _thread_on(store: ThreadStore, thread: Thread | None, request: Ask, spec: str) -> Thread:
    """The request's thread on ``spec``: made now when the request names none."""
    if thread is None:
        return store.create_thread(user=request.user, source=spec, title=request.prompt[:80])
    if thread.source != spec:
        store.set_thread_source(thread.thread_id, spec)
    return thread


async def _environment(
    frame: TurnFrame, config: AnalystConfig, host: TurnHost, attached: AttachedNotebook | None
) -> ThreadEnvironment:
    """The thread's environment, kept by the host or built, on this turn's source."""
    thread, source, workspace = frame.thread, frame.source, frame.workspace
    assert thread is not None and source is not None
    environment = await host.environment(
        thread, partial(build_environment, config, workspace, thread.thread_id, source, host)
    )
    if environment.source is not source:
        # A kept environment: this turn's source (the thread's may have changed) and stores.
        # No source stays open between turns: nothing holds a lock on the database file,
        # or reads it at the version it had when the kernel started.
        environment.attach(source=source, artifacts=workspace.artifacts)
    # This turn's notebook, as read when it started (a kept environment had the last turn's).
    environment.attached = attached
    environment.proposals = workspace.store
    # Where the thread's proposals for it stand (pending ones are said nowhere else).
    environment.proposal_notes = ""
    if attached is not None and not attached.problem:
        from .notebook_changes import proposal_notes

        environment.proposal_notes = await asyncio.to_thread(
            proposal_notes, workspace.store, thread.thread_id, attached.path)
    # The team's context folder, as it is now (read off the loop; parsed only when it changed).
    environment.team = await asyncio.to_thread(
        load_team_context, config.context_folder(frame.workspace.root), digests=frame.workspace.root / "context-digests")
    environment.team_readings = frame.workspace.root / "context-digests" / "readings"
    return environment


def build_environment(
    config: AnalystConfig, workspace: Workspace, thread_id: str, source: DataSource, host: TurnHost
) -> ThreadEnvironment:
    """A thread's environment as the settings and the host say."""
    return ThreadEnvironment(
        thread_id=thread_id,
        source=source,
        artifacts=workspace.artifacts,
        workdir=workspace.kernel_dir(thread_id),
        datasets_root=workspace.datasets_root,
        output_caps=config.outputs,
        query_timeout_s=config.query_timeout_s,
        row_cap=config.row_cap,
        python_timeout_s=config.python_timeout_s,
        sql_max_chars=config.sql_max_chars,
        sql_prepare_timeout_s=config.sql_prepare_timeout_s,
        sql_checks=workspace.checks_dir,
        sandbox=config.sandbox,
        launcher=host.launcher,
        pool=host.pool,
    )


async def _on_failure(frame: TurnFrame, request: Ask, exc: BaseException) -> None:
    """A turn cut or failed: ended when the loop never took it, and in the notebook, marked."""
    if frame.turn is not None and not frame.running:  # announced, but the loop never took it over
        await _abandon(frame.events, frame.store, frame.turn, exc)
    if frame.thread is not None and frame.turn is not None:
        # A notebook that cannot be written now does not hide why the turn ended.
        with contextlib.suppress(Exception):
            await asyncio.to_thread(
                write_thread_notebook, frame.store, frame.workspace.artifacts, frame.thread.thread_id,
                request.notebook or frame.workspace.notebook_path(frame.thread.thread_id),
                data_version=data_version_of(frame.source),
            )


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
    ended = abandoned_turn(turn, exc)
    with contextlib.suppress(AnalystError):  # the first error is the one to tell
        await events.append(ended)
        await asyncio.to_thread(store.end_turn, turn.turn_id, ended.status)
