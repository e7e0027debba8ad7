"""What a thread's tools run against: its data source, query runner, inventory and kernel.

The kernel starts lazily: a turn whose steps are all reused never starts one. A kernel
that starts for a thread that already has history (a new process, a kernel culled or
dead) is rehydrated lazily: before a step executes, only the names it reads are restored
(a dataset reloaded from its Parquet artifact, the Python step that made a value run
again on its own recorded inputs). What each name holds is tracked as a binding (see
bindings.py). When what a step reads cannot be told from its code (``globals()``, a
magic, a name no step bound, a value changed in place by a later ``.append``), the whole
history is replayed instead, in order, each step on its own inputs; the kernel then holds
everything, as one that ran the thread from its start does.

A runtime may outlive a turn (the server keeps it, see live.py): each turn attaches its
own source and stores to it, and the kernel and what it holds carry over.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ...artifacts import ArtifactStore, StepRecord
from ..._disk import unavailable
from ...errors import AnalystError, DiskUnavailable, KernelError, StorageError
from ...kernel.outputs import OutputCaps
from ...sql.preparer import DEFAULT_MAX_CHARS, DEFAULT_TIMEOUT_S, SqlPreparer
from .bindings import Binding, inputs_of, is_dataset, python_bindings, replayed, unknown_reads
from ..dataflow import changed_by_methods, rebound_names
from ..dataflow import assigned_names

if TYPE_CHECKING:
    # Imported when used: a turn whose steps are all reused needs no kernel (jupyter_client)
    # and no query runner (pyarrow).
    from ...kernel import KernelLauncher, KernelPool, KernelSession, SandboxPolicy
    from ...notebooks.outline import AttachedNotebook
    from ...sql import DataSource, QueryRunner

log = logging.getLogger(__name__)


class ThreadEnvironment:
    """The live resources of one thread, shared by the turns that run on it."""

    def __init__(
        self,
        *,
        thread_id: str,
        source: DataSource,
        artifacts: ArtifactStore,
        workdir: Path,
        kernel_factory: Callable[[Path], KernelSession] | None = None,
        sandbox: SandboxPolicy | None = None,
        pool: KernelPool | None = None,
        launcher: KernelLauncher | None = None,
        query_timeout_s: float = 60.0,
        row_cap: int = 1_000_000,
        python_timeout_s: float = 120.0,
        output_caps: OutputCaps | None = None,
        datasets_root: Path | None = None,
        sql_max_chars: int = DEFAULT_MAX_CHARS,
        sql_prepare_timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.thread_id = thread_id
        #: The user's notebook the turn works beside (read when it started), if one is attached:
        #: its outline goes into the prompt, its cells are what ``read_cells`` reads.
        self.attached: AttachedNotebook | None = None
        self.source = source
        self.artifacts = artifacts
        self.workdir = workdir
        self._query_timeout_s = query_timeout_s
        self._row_cap = row_cap
        self._runner: QueryRunner | None = None
        #: Checks the model's SQL in worker processes, within a size and a time limit (the
        #: first query starts one: a turn without SQL starts no process).
        self.preparer = SqlPreparer(max_chars=sql_max_chars, timeout_s=sql_prepare_timeout_s)
        self.python_timeout_s = python_timeout_s
        self.output_caps = output_caps or OutputCaps()
        # The kernel reads its thread's datasets from a folder of its own, mounted read-only,
        # into which each blob is linked when loaded (never the whole blob store). Beside
        # the kernels' folders by default (see Workspace).
        datasets = datasets_root or workdir.parent / ".datasets"

        def local_kernel(wd: Path) -> KernelSession:
            from ...kernel import KernelSession

            return KernelSession(wd, launcher=launcher, sandbox=sandbox, datasets_root=datasets)

        self._kernel_factory = kernel_factory or local_kernel
        self._pool = pool
        self._kernel: KernelSession | None = None
        #: What the running kernel holds: name -> dataset fingerprint or Python step key.
        self.loaded: dict[str, Binding] = {}
        #: What the steps asked for so far say each name holds (loaded from the store).
        self._bindings: dict[str, Binding] | None = None
        #: One tool execution at a time per thread (DESIGN.md, decision 4).
        self.lock = asyncio.Lock()
        #: A dataset is checked against the thread's caps and stored by one step at a time, so
        #: queries that run together (a plan's) cannot each pass a cap they pass only together.
        self.storing = asyncio.Lock()
        self.kernel_restarts = 0
        #: Whether the running kernel holds the effects of the whole history: it started on a
        #: thread without history, or replayed it all. A kernel rehydrated lazily does not,
        #: so a step whose inputs cannot be told makes it replay everything first.
        self.kernel_complete = False
        #: Recorded step key -> the names its code changes through in-place methods.
        self._in_place: dict[str, set[str]] = {}
        self._python_names: set[str] | None = None
        #: Names that steps which could not run (no kernel) would have defined -> their call id.
        self.not_run: dict[str, str] = {}
        #: The dataset being loaded into the kernel after its query returned (see
        #: :meth:`dataset_fetched`); whatever uses the kernel next waits for it (:meth:`settle`).
        self._loading: asyncio.Task[None] | None = None
        #: A full or read-only workspace met by a background load: raised by the next settle.
        self._load_failure: DiskUnavailable | None = None

    @property
    def runner(self) -> QueryRunner:
        """Runs the thread's queries against its current source (made on first use)."""
        if self._runner is None:
            from ...sql import QueryRunner

            self._runner = QueryRunner(self.source, timeout_s=self._query_timeout_s, row_cap=self._row_cap)
        return self._runner

    @property
    def kernel_started(self) -> bool:
        """Whether a kernel is running for this thread."""
        return self._kernel is not None and self._kernel.is_started

    @property
    def kernel_id(self) -> str | None:
        """The running kernel's id in the server's kernel manager (``None`` for a local one)."""
        return self._kernel.kernel_id if self._kernel is not None and self._kernel.is_started else None

    async def kernel_alive(self) -> bool:
        """Whether the running kernel's process is still there (``False`` when none runs)."""
        return self.kernel_started and await self._kernel.is_alive()  # type: ignore[union-attr]

    def attach(self, *, source: DataSource, artifacts: ArtifactStore) -> None:
        """Run the next turn against ``source`` and ``artifacts`` (a kept runtime's new turn).

        The kernel and what it holds carry over; what the steps say each name holds is read
        from the store again, which is the truth whoever wrote it last.
        """
        self.source = source
        self.artifacts = artifacts
        self._runner = None  # made again, on the new source, by the next query
        self._bindings = None
        self._python_names = None
        self.not_run = {}

    def data_version(self) -> str:
        """The source's identity and data version, part of every SQL step key."""
        return f"{self.source.kind}:{self.source.spec}:{self.source.data_version()}"

    def dataset_ids(self) -> dict[str, str]:
        """The thread's datasets: name -> artifact id (the latest fetch into a name wins)."""
        out: dict[str, str] = {}
        for step in self.artifacts.steps(self.thread_id):
            if step.tool == "run_sql" and step.status == "ok" and step.artifact_ids:
                out[step.arguments["name"]] = step.artifact_ids[0]
        return out

    def python_names(self) -> set[str]:
        """Every name the thread's Python steps have defined in the kernel so far."""
        if self._python_names is None:
            self._python_names = set()
            for step in self.python_steps():
                self._python_names |= assigned_names(step.arguments["code"])
        return self._python_names

    def python_ran(self, code: str) -> None:
        """Remember the names a step that ran (even one that failed midway) may have defined."""
        names = assigned_names(code)
        self.python_names().update(names)
        for name in names:
            self.not_run.pop(name, None)

    def python_not_run(self, code: str, call_id: str) -> None:
        """Remember that a step could not run at all, so a later reader of its names is told why."""
        for name in assigned_names(code) - self.python_names():
            self.not_run[name] = call_id

    def python_steps(self) -> list[StepRecord]:
        """The thread's successful Python steps, in execution order."""
        return [
            s
            for s in self.artifacts.steps(self.thread_id)
            if s.tool == "run_python" and s.status == "ok"
        ]

    # ------------------------------------------------------------------ bindings

    def bindings(self) -> dict[str, Binding]:
        """What each name holds after the thread's steps, executed or reused, in order."""
        if self._bindings is None:
            stored = self.artifacts.bindings(self.thread_id)
            if not stored:  # a thread recorded before bindings were: its ledger tells
                steps = self.artifacts.steps(self.thread_id)
                ids = {a for s in steps if s.tool == "run_sql" for a in s.artifact_ids}
                stored = replayed(steps, {a: self.artifacts.get(a).fingerprint for a in ids})
            self._bindings = stored
        return self._bindings

    def _bind(self, updates: Mapping[str, Binding]) -> None:
        self.bindings().update(updates)
        self.artifacts.bind(self.thread_id, updates)

    async def dataset_fetched(self, name: str, fingerprint: str) -> None:
        """A query's dataset (run or reused) now is ``name``; a running kernel loads it.

        The kernel loads it in the background: the step's result goes back to the model
        while the kernel reads the file, and whatever uses the kernel next (a Python step,
        another load, a restart, the turn's end) waits for it first (:meth:`settle`). A load
        that fails leaves the name unloaded and the kernel not holding the whole history, so
        the next step that reads it loads it again, and fails loudly if it fails again.
        """
        self._bind({name: fingerprint})
        await self.settle()
        if self.kernel_started and self.loaded.get(name) != fingerprint:
            self.loaded.pop(name, None)  # what the kernel holds under this name is no longer its binding
            self._loading = asyncio.ensure_future(self._load_in_background(name, fingerprint))

    async def settle(self) -> None:
        """Wait until the datasets being loaded into the kernel are loaded (or failed to).

        Raises:
            DiskUnavailable: a background load found the workspace full or read-only (which
                ends the turn, as it would have in the step itself).
        """
        while (loading := self._loading) is not None:
            # ``wait`` neither raises the load's errors (it records them) nor cancels it when
            # the waiter is cancelled: another waiter still finds it running.
            await asyncio.wait({loading})
            if self._loading is loading:
                self._loading = None
        failure, self._load_failure = self._load_failure, None
        if failure is not None:
            raise failure

    async def _load_in_background(self, name: str, fingerprint: str) -> None:
        try:
            await self._load(name, fingerprint)
        except Exception as exc:  # noqa: BLE001 - recorded here; the next reader loads it again and fails loudly
            self.loaded.pop(name, None)
            self.kernel_complete = False
            if isinstance(exc, DiskUnavailable):
                self._load_failure = exc
            log.warning("dataset %s was not loaded into the kernel of %s: %s", name, self.thread_id, exc,
                        exc_info=not isinstance(exc, AnalystError))

    async def _stop_loading(self) -> None:
        """Cancel a background load (the kernel is going away) and wait for it to end."""
        loading, self._loading = self._loading, None
        self._load_failure = None  # the kernel it was for is going away
        if loading is not None:
            loading.cancel()
            await asyncio.wait({loading})

    def python_reused(self, code: str, key: str) -> None:
        """A reused Python step: the names it binds hold its values now, logically (the
        kernel is aligned when a later step reads them)."""
        self._bind(python_bindings(code, key))

    def python_executed(self, code: str, key: str | None, ok: bool) -> None:
        """A Python step ran in the kernel: on success its names hold its values; after a
        failure they hold something unknown, so a later reader aligns them again."""
        self.python_ran(code)
        if ok and key is not None:
            updates = python_bindings(code, key)
            self._bind(updates)
            self.loaded.update(updates)
        else:
            for name in rebound_names(code):
                self.loaded.pop(name, None)

    async def restore_inputs(self, code: str) -> dict[str, Binding]:
        """Make the running kernel hold what ``code`` reads, as its key says; returns those inputs.

        A kernel that does not hold the whole history replays all of it first when what
        the code reads cannot be told (see ``lazy_restore_refused``).
        """
        await self.settle()
        inputs = inputs_of(code, self.bindings())
        try:
            if not self.kernel_complete:
                why = self.lazy_restore_refused(code, inputs)
                if why is not None:
                    log.info("the kernel of %s replays the whole history: the step %s", self.thread_id, why)
                    await self._rehydrate()
            await self.align(inputs)
        except KernelError as exc:
            raise KernelError(
                f"the kernel died while the thread's datasets and earlier steps were restored in it: {exc.message}",
                reason="kernel_start_failed",
            ) from exc
        return inputs

    def lazy_restore_refused(self, code: str, inputs: Mapping[str, Binding]) -> str | None:
        """Why restoring only ``inputs`` (and, in turn, the recorded inputs of the steps
        that made them) would not give ``code`` what it reads; ``None`` when it would."""
        why = unknown_reads(code, self.bindings())
        if why is not None:
            return why
        changed: dict[str, set[str]] = {}  # name -> keys of the steps that change it in place
        for step in self.python_steps():
            if step.step_key not in self._in_place:  # each recorded step is parsed once
                self._in_place[step.step_key] = changed_by_methods(step.arguments["code"])
            for name in self._in_place[step.step_key]:
                changed.setdefault(name, set()).add(step.step_key)
        pending = list(inputs.items())
        seen: set[tuple[str, Binding]] = set()
        while pending:
            name, binding = pending.pop()
            if (name, binding) in seen:
                continue
            seen.add((name, binding))
            if changed.get(name, set()) - {binding}:
                return f"reads {name}, which a later step may have changed in place"
            if is_dataset(binding):
                continue
            step = self.artifacts.find_step(self.thread_id, binding)
            if step is None:
                return f"reads {name}, whose step is not recorded"
            recorded = step.result.get("_inputs") or {}
            why = unknown_reads(step.arguments["code"], recorded)
            if why is not None:
                return f"reads {name}, made by a step that {why[3:]}"
            pending.extend(recorded.items())
        return None

    async def align(self, inputs: Mapping[str, Binding], _seen: frozenset[str] = frozenset()) -> None:
        """Make the running kernel hold ``inputs`` (name -> binding) before a step reads them.

        A dataset is loaded from its Parquet artifact; a Python step's code is run again,
        after its own recorded inputs are aligned. Keys chain back to earlier steps only,
        so this ends; ``_seen`` guards against a damaged ledger all the same.
        """
        await self.settle()
        for name, binding in inputs.items():
            if self.loaded.get(name) == binding:
                continue
            if is_dataset(binding):
                await self._load(name, binding)
                continue
            step = self.artifacts.find_step(self.thread_id, binding)
            if step is None or binding in _seen:
                log.warning("cannot restore %s (%s) in the kernel of %s", name, binding, self.thread_id)
                continue
            await self._replay(step, _seen | {binding})

    async def _replay(self, step: StepRecord, seen: frozenset[str] = frozenset()) -> None:
        """Run a recorded Python step again, on the inputs it was recorded with."""
        assert self._kernel is not None
        await self.align(step.result.get("_inputs") or {}, seen)
        code = step.arguments["code"]
        result = await self._kernel.execute(code)
        for name in rebound_names(code):
            if result.status == "ok":
                self.loaded[name] = step.step_key
            else:
                self.loaded.pop(name, None)

    async def _load(self, name: str, fingerprint: str) -> None:
        assert self._kernel is not None
        # The kernel reads the file itself: its bytes are checked first (off the loop: a big
        # dataset takes a while to hash). Only the host writes blobs, by rename.
        blob = await asyncio.to_thread(self.artifacts.checked_blob, fingerprint, thread_id=self.thread_id)
        try:
            path = self._kernel.stage(fingerprint, blob)
        except OSError as exc:  # a copy into the kernel's datasets folder on a full disk
            raise unavailable(exc, self.artifacts.blobs.root) or StorageError(
                f"cannot make dataset {name} readable by the kernel: {exc}") from exc
        if not os.path.samefile(path, blob):
            # A copy (the datasets folder is on another file system): what the kernel reads is checked.
            await asyncio.to_thread(self.artifacts.checked_blob, fingerprint, thread_id=self.thread_id, copy=path)
        result = await self._kernel.load_dataset(name, path, fingerprint=fingerprint)
        if result.status == "ok":
            self.loaded[name] = fingerprint
        else:
            self.loaded.pop(name, None)

    # ------------------------------------------------------------------ the kernel

    async def kernel(self) -> KernelSession:
        """The thread's kernel, started on first use (rehydrated lazily, step by step).

        When it cannot be started, nothing of it is kept: the error goes to the caller, and
        the next call starts a kernel again.
        """
        await self.settle()
        if self._kernel is not None and self._kernel.is_started:
            return self._kernel
        try:
            if self._kernel is None and self._pool is not None:
                self._kernel = await self._pool.acquire(self.workdir)
            else:
                if self._kernel is None:
                    self._kernel = self._kernel_factory(self.workdir)
                await self._kernel.start()
        except BaseException:
            await self.discard_kernel()
            raise
        self._fresh_kernel()
        return self._kernel

    def _fresh_kernel(self) -> None:
        """A kernel that ran only its set-up: it holds nothing of the thread yet."""
        self.loaded = {}
        self.kernel_complete = not self.bindings()

    async def restart_kernel(self) -> None:
        """Replace a dead kernel with a fresh one, rehydrated lazily (none is kept if it fails)."""
        self.kernel_restarts += 1
        await self.settle()
        if self._kernel is not None:
            try:
                await self._kernel.restart()
            except BaseException:
                await self.discard_kernel()
                raise
            self._fresh_kernel()

    async def discard_kernel(self) -> None:
        """Stop the kernel and forget what it held; the next step starts a new one."""
        await self._stop_loading()
        kernel, self._kernel = self._kernel, None
        self.loaded = {}
        self.kernel_complete = False
        if kernel is not None:
            await kernel.shutdown()

    async def _rehydrate(self) -> None:
        """Datasets first, then every recorded Python step in order, each on its own inputs.

        A dataset whose stored bytes are damaged is left out (and what depends on it): a
        step that reads it fails loudly when its inputs are aligned, naming the artifact.
        """
        await self.settle()
        self.loaded = {}
        self.kernel_complete = False
        for name, artifact_id in self.dataset_ids().items():
            try:
                await self._load(name, self.artifacts.get(artifact_id).fingerprint)
            except StorageError as exc:
                log.warning("%s not restored in the kernel of %s: %s", name, self.thread_id, exc)
        for step in self.python_steps():
            try:
                await self._replay(step)
            except StorageError as exc:
                log.warning("step %s not replayed in the kernel of %s: %s", step.call_id, self.thread_id, exc)
        self.kernel_complete = True

    async def close(self) -> None:
        """Stop the kernel (the source is its opener's to close)."""
        await self.discard_kernel()
