"""What a thread's tools run against: its data source, query runner, inventory and kernel.

The kernel starts lazily: a turn whose steps are all reused never starts one. When it does
start for a thread that already has history, it is rehydrated first: every dataset the
thread fetched is reloaded from its Parquet artifact and the recorded Python steps are
replayed in order, each on the inputs it was recorded with, so the variables the model
expects exist again. What each name holds is tracked as a binding (see bindings.py), and
a step's inputs are aligned before it executes.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ..artifacts import ArtifactStore, StepRecord
from ..disk import unavailable
from ..errors import KernelError, StorageError
from ..kernel.outputs import OutputCaps
from ..sql.preparer import DEFAULT_MAX_CHARS, DEFAULT_TIMEOUT_S, SqlPreparer
from .bindings import Binding, is_dataset, python_bindings, replayed
from .dataflow import rebound_names
from .names import assigned_names

if TYPE_CHECKING:
    # Imported when used: a turn whose steps are all reused needs no kernel (jupyter_client)
    # and no query runner (pyarrow).
    from ..kernel import KernelLauncher, KernelPool, KernelSession, SandboxPolicy
    from ..sql import DataSource, QueryRunner

log = logging.getLogger(__name__)


class ThreadRuntime:
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
        self.source = source
        self.artifacts = artifacts
        self.workdir = workdir
        self._query_limits = (query_timeout_s, row_cap)
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
            from ..kernel import KernelSession

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
        self.kernel_restarts = 0
        self._python_names: set[str] | None = None
        #: Names that steps which could not run (no kernel) would have defined -> their call id.
        self.not_run: dict[str, str] = {}

    @cached_property
    def runner(self) -> QueryRunner:
        """Runs the thread's queries (made on first use)."""
        from ..sql import QueryRunner

        timeout_s, row_cap = self._query_limits
        return QueryRunner(self.source, timeout_s=timeout_s, row_cap=row_cap)

    @property
    def kernel_started(self) -> bool:
        """Whether a kernel is running for this thread."""
        return self._kernel is not None and self._kernel.is_started

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
        """A query's dataset (run or reused) now is ``name``; a running kernel loads it."""
        self._bind({name: fingerprint})
        if self.kernel_started and self.loaded.get(name) != fingerprint:
            await self._load(name, fingerprint)

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

    async def align(self, inputs: Mapping[str, Binding], _seen: frozenset[str] = frozenset()) -> None:
        """Make the running kernel hold ``inputs`` (name -> binding) before a step reads them.

        A dataset is loaded from its Parquet artifact; a Python step's code is run again,
        after its own recorded inputs are aligned. Keys chain back to earlier steps only,
        so this ends; ``_seen`` guards against a damaged ledger all the same.
        """
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
        result = await self._kernel.load_dataset(name, path)
        if result.status == "ok":
            self.loaded[name] = fingerprint
        else:
            self.loaded.pop(name, None)

    # ------------------------------------------------------------------ the kernel

    async def kernel(self) -> KernelSession:
        """The thread's kernel, started and rehydrated on first use.

        When it cannot be started (or dies while it is rehydrated), nothing of it is kept:
        the error goes to the caller, and the next call starts a kernel again.
        """
        if self._kernel is not None and self._kernel.is_started:
            return self._kernel
        try:
            if self._kernel is None and self._pool is not None:
                self._kernel = await self._pool.acquire(self.workdir)
            else:
                if self._kernel is None:
                    self._kernel = self._kernel_factory(self.workdir)
                await self._kernel.start()
            try:
                await self._rehydrate()
            except KernelError as exc:
                raise KernelError(
                    f"the kernel died while the thread's datasets and earlier steps were restored in it: "
                    f"{exc.message}", reason="kernel_start_failed",
                ) from exc
        except BaseException:
            await self._discard_kernel()
            raise
        return self._kernel

    async def restart_kernel(self) -> None:
        """Replace a dead kernel with a fresh, rehydrated one (none is kept if that fails)."""
        self.kernel_restarts += 1
        if self._kernel is not None:
            try:
                await self._kernel.restart()
                await self._rehydrate()
            except BaseException:
                await self._discard_kernel()
                raise

    async def _discard_kernel(self) -> None:
        kernel, self._kernel = self._kernel, None
        self.loaded = {}
        if kernel is not None:
            await kernel.shutdown()

    async def _rehydrate(self) -> None:
        """Datasets first, then every recorded Python step in order, each on its own inputs.

        A dataset whose stored bytes are damaged is left out (and what depends on it): a
        step that reads it fails loudly when its inputs are aligned, naming the artifact.
        """
        self.loaded = {}
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

    async def close(self) -> None:
        """Stop the kernel and release the source."""
        if self._kernel is not None:
            await self._kernel.shutdown()
            self._kernel = None
        self.loaded.clear()
