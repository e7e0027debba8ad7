"""The magics' binding to the engine: which workspace and thread a kernel works on, and the
engine's public functions run from a cell.

A kernel has one current thread: made on first use on ``--source`` (or by
``%analyst use``), chosen with ``--thread``. The workspace is ``--workspace``, else
``$JUPYTER_ANALYST_WORKSPACE``, else ``.analyst`` in the kernel's folder, as for the CLI.

Datasets enter the user's namespace from their Parquet artifacts, re-hashed as they are
read: damaged bytes are refused, never loaded.
"""

from __future__ import annotations

import asyncio
import os
import queue
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..step_kinds import is_query_step
from ..errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from ..events import Event
    from ..turns import AnalystConfig, ModelSettings, TurnSummary
    from ..artifacts import Artifact
    from ..turns import SqlStep
    from ..notebooks import AttachedNotebook, VerifyReport
    from ..workspace import Workspace

T = TypeVar("T")

#: Where a kernel's workspace is when no ``--workspace`` is given.
WORKSPACE_ENV = "JUPYTER_ANALYST_WORKSPACE"


@dataclass
class AskResult:
    """What ``%%ask`` leaves behind: the turn's summary and the datasets it made or reused."""

    summary: TurnSummary
    datasets: dict[str, Artifact]
    """Dataset name -> its artifact (the latest fetch into a name wins)."""
    artifacts: list[Artifact]
    """Every artifact the turn recorded, in order (made or reused)."""


class MagicSession:
    """One kernel's workspace and current thread."""

    def __init__(self) -> None:
        self.workspace: Path | None = None
        self.thread_id: str | None = None
        self.source: str | None = None
        self.sandbox = True

    # ------------------------------------------------------------------ where

    def workspace_path(self, override: str | None = None) -> Path:
        """``override``, else the one chosen before, else ``$JUPYTER_ANALYST_WORKSPACE``, else ``.analyst``."""
        chosen = override or self.workspace or os.environ.get(WORKSPACE_ENV) or ".analyst"
        return Path(chosen).expanduser().absolute()

    def use(self, *, workspace: str | None = None, thread: str | None = None, source: str | None = None) -> None:
        """Make ``thread`` (checked to exist) or a new thread on ``source`` the current one."""
        if workspace:
            self.workspace = self.workspace_path(workspace)
        if thread:
            self.read(lambda ws: ws.store.get_thread(thread))
            self.thread_id, self.source = thread, source
        elif source:
            # The next step starts a thread on it (a thread needs a first step to be made).
            self.thread_id, self.source = None, source

    def target(self, *, thread: str | None, source: str | None) -> tuple[str | None, str | None]:
        """The thread and source a step runs on: the options, else the current ones.

        A ``--source`` without ``--thread`` that differs from the current thread's starts a
        new thread on it.
        """
        if thread:
            return thread, source
        if source is None:
            if self.thread_id is None and self.source is None:
                raise ConfigError("no thread and no data source yet", reason="no_source",
                                  hint="pass --source SPEC (or %analyst use --source SPEC / --thread ID)")
            return self.thread_id, self.source
        from ..sql import absolute_spec

        current = self.read(lambda ws: ws.store.get_thread(self.thread_id).source) if self.thread_id else None
        return (self.thread_id if current == absolute_spec(source) else None), source

    def config(self, workspace: str | None = None, **settings: Any) -> AnalystConfig:
        """The engine's settings for a step of this kernel."""
        from ..turns import AnalystConfig
        from ..kernel import SandboxPolicy

        return AnalystConfig(workspace=self.workspace_path(workspace), sandbox=SandboxPolicy(enabled=self.sandbox),
                             **settings)

    def read(self, read: Callable[[Workspace], T], workspace: str | None = None) -> T:
        """What ``read`` takes from the workspace (opened and closed again)."""
        from ..workspace import Workspace

        ws = Workspace(self.workspace_path(workspace))
        try:
            return read(ws)
        finally:
            ws.close()

    # ------------------------------------------------------------------ steps

    def sql(self, name: str, sql: str, *, thread: str | None, source: str | None, workspace: str | None,
            rerun: bool = False) -> SqlStep:
        """Run the user's query as a step of the current (or given) thread, which it makes current."""
        from ..turns import SqlStepRequest, run_sql_step

        thread_id, spec = self.target(thread=thread, source=source)
        request = SqlStepRequest(name=name, sql=sql, source=spec, thread_id=thread_id, rerun=rerun)
        step = in_worker(lambda emit: run_sql_step(request, config=self.config(workspace), on_event=emit))
        self.thread_id, self.source = step.summary.thread_id, None
        return step

    def ask(self, prompt: str, *, thread: str | None, source: str | None, workspace: str | None,
            model: ModelSettings, rerun: bool = False, summarizer: bool = True,
            on_event: Callable[[Event], None] | None = None, attached: AttachedNotebook | None = None) -> AskResult:
        """Run one turn of the current (or given) thread, which it makes current; ``on_event``
        is called in this (the cell's) thread as each event arrives; ``attached`` is the
        notebook the turn works beside."""
        from ..events import ArtifactRecorded, ToolResult
        from ..turns import TurnRequest, run_turn

        thread_id, spec = self.target(thread=thread, source=source)
        request = TurnRequest(prompt=prompt, source=spec, thread_id=thread_id, rerun=rerun, attached=attached)
        seen: list[Event] = []

        def handle(event: Event) -> None:
            seen.append(event)
            if on_event is not None:
                on_event(event)

        config = self.config(workspace, summarizer=summarizer)
        summary = in_worker(lambda emit: run_turn(request, config=config, model=model, on_event=emit), handle)
        self.thread_id, self.source = summary.thread_id, None
        mine = [e for e in seen if e.turn_id == summary.turn_id]
        fetched = {
            e.result["dataset"]: e.artifact_ids[0]
            for e in mine
            if isinstance(e, ToolResult) and is_query_step(e.tool) and e.status == "ok" and e.artifact_ids
        }
        recorded = list(dict.fromkeys(e.artifact_id for e in mine if isinstance(e, ArtifactRecorded)))

        def artifacts(ws: Workspace) -> tuple[dict[str, Artifact], list[Artifact]]:
            return ({n: ws.artifacts.get(a) for n, a in fetched.items()}, [ws.artifacts.get(a) for a in recorded])

        datasets, made = self.read(artifacts, workspace)
        return AskResult(summary=summary, datasets=datasets, artifacts=made)

    # ------------------------------------------------------------------ the workspace

    def current(self, thread: str | None) -> str:
        """The thread a ``%analyst`` report is about: ``thread``, else the current one."""
        chosen = thread or self.thread_id
        if chosen is None:
            raise ConfigError("no current thread", reason="no_thread",
                              hint="run %analyst_sql or %%ask first, or pass --thread ID")
        self.read(lambda ws: ws.store.get_thread(chosen))
        return chosen

    def verify(self, notebook: str | None, *, thread: str | None, workspace: str | None) -> VerifyReport:
        """Re-execute ``notebook`` (by default the thread's own audit notebook, kept current
        after every turn) in the sandbox against the thread's source, and compare its
        fingerprints with its manifest. The source is the thread's (``--thread``, else the
        current one), else the one chosen with ``%analyst use --source``: never what the
        notebook itself names."""
        from ..notebooks import verify_notebook

        def run() -> VerifyReport:
            if notebook is not None:
                chosen = thread or self.thread_id
                source = (self.read(lambda ws: ws.store.get_thread(chosen).source, workspace) if chosen
                          else self.source)
                return verify_notebook(Path(notebook), source=source)
            chosen = self.current(thread)
            path, source = self.read(lambda ws: (ws.notebook_path(chosen), ws.store.get_thread(chosen).source),
                                     workspace)
            if not path.exists():
                raise ConfigError(f"thread {chosen} has no notebook yet", reason="notebook_not_found",
                                  hint="it is written at the end of the thread's first turn")
            return verify_notebook(path, source=source)

        # Papermill drives its own event loop: off the cell's.
        return in_worker(lambda emit: asyncio.to_thread(run))

    # ------------------------------------------------------------------ data

    def load(self, artifact: Artifact, workspace: str | None = None) -> pd.DataFrame:
        """The dataset's DataFrame, from its Parquet blob re-hashed first.

        Raises:
            StorageError: the blob is missing or its bytes no longer match the fingerprint.
        """
        from ..kernel import read_dataset

        path = self.read(lambda ws: ws.artifacts.checked_blob(artifact.fingerprint, thread_id=artifact.thread_id),
                         workspace)
        return read_dataset(str(path))

    def image(self, artifact: Artifact, workspace: str | None = None) -> bytes:
        """An image artifact's bytes, checked against its fingerprint."""
        return self.read(lambda ws: ws.artifacts.read_bytes(artifact.artifact_id), workspace)


_DONE = object()


def in_worker(
    start: Callable[[Callable[[Event], None]], Coroutine[Any, Any, T]],
    on_event: Callable[[Event], None] | None = None,
) -> T:
    """Run the engine's coroutine to completion from a cell.

    A kernel's cell already runs inside an event loop, so the coroutine gets a loop of its
    own in a worker thread. Its events come back to this thread through a queue and are
    handed to ``on_event`` here, where displays belong to the running cell.
    """
    events: queue.Queue[Any] = queue.Queue()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(start(events.put))
        except BaseException as exc:  # re-raised in the cell's thread
            box["error"] = exc
        finally:
            events.put(_DONE)

    worker = threading.Thread(target=target, name="analyst-magic", daemon=True)
    worker.start()
    while (event := events.get()) is not _DONE:
        if on_event is not None:
            on_event(event)
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
