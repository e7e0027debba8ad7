"""What a thread's tools run against: its data source, query runner, inventory and kernel.

The kernel starts lazily: a turn whose steps are all reused never starts one. When it does
start for a thread that already has history, it is rehydrated first: every dataset the
thread fetched is reloaded from its Parquet artifact and the recorded Python steps are
replayed in order, so the variables the model expects exist again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from ..artifacts import ArtifactStore, StepRecord
from ..kernel import KernelLauncher, KernelPool, KernelSession, SandboxPolicy
from ..sql import DataSource, QueryRunner
from .names import assigned_names


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
    ) -> None:
        self.thread_id = thread_id
        self.source = source
        self.artifacts = artifacts
        self.workdir = workdir
        self.runner = QueryRunner(source, timeout_s=query_timeout_s, row_cap=row_cap)
        self.python_timeout_s = python_timeout_s
        # The kernel reads datasets straight from the blob store, mounted read-only.
        self._kernel_factory = kernel_factory or (
            lambda wd: KernelSession(wd, launcher=launcher, sandbox=sandbox, readable=[artifacts.blobs.dir])
        )
        self._pool = pool
        self._kernel: KernelSession | None = None
        #: Datasets loaded into the running kernel: variable name -> fingerprint.
        self.loaded: dict[str, str] = {}
        #: One tool execution at a time per thread (DESIGN.md, decision 4).
        self.lock = asyncio.Lock()
        self.kernel_restarts = 0
        self._python_names: set[str] | None = None

    @property
    def kernel_started(self) -> bool:
        """Whether a kernel is running for this thread."""
        return self._kernel is not None and self._kernel.is_started

    def data_version(self) -> str:
        """The source's identity and data version, part of every SQL step key."""
        return f"{self.source.kind}:{self.source.spec}:{self.source.data_version()}"

    def datasets(self) -> dict[str, tuple[str, Path]]:
        """The thread's datasets as recorded in the ledger: name -> (fingerprint, Parquet path).

        A later fetch into the same name wins, as it would in the kernel.
        """
        out: dict[str, tuple[str, Path]] = {}
        for step in self.artifacts.steps(self.thread_id):
            if step.tool != "run_sql" or step.status != "ok" or not step.artifact_ids:
                continue
            artifact = self.artifacts.get(step.artifact_ids[0])
            out[step.arguments["name"]] = (artifact.fingerprint, self.artifacts.blob_path(artifact))
        return out

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
        self.python_names().update(assigned_names(code))

    def python_steps(self) -> list[StepRecord]:
        """The thread's successful Python steps, in execution order."""
        return [
            s
            for s in self.artifacts.steps(self.thread_id)
            if s.tool == "run_python" and s.status == "ok"
        ]

    async def kernel(self) -> KernelSession:
        """The thread's kernel, started and rehydrated on first use."""
        if self._kernel is None and self._pool is not None:
            self._kernel = await self._pool.acquire(self.workdir)
            await self._rehydrate()
            return self._kernel
        if self._kernel is None:
            self._kernel = self._kernel_factory(self.workdir)
        if not self._kernel.is_started:
            await self._kernel.start()
            await self._rehydrate()
        return self._kernel

    async def restart_kernel(self) -> None:
        """Replace a dead kernel with a fresh, rehydrated one."""
        self.kernel_restarts += 1
        if self._kernel is not None:
            await self._kernel.restart()
            await self._rehydrate()

    async def _rehydrate(self) -> None:
        assert self._kernel is not None
        datasets = self.datasets()
        await self._kernel.rehydrate(
            [(name, path) for name, (_, path) in datasets.items()],
            [step.arguments["code"] for step in self.python_steps()],
        )
        self.loaded = {name: fp for name, (fp, _) in datasets.items()}

    async def ensure_dataset(self, name: str, fingerprint: str, path: Path) -> None:
        """Make ``name`` hold this dataset in the kernel, if a kernel is running.

        Without a running kernel nothing happens now: the dataset is loaded when the
        kernel starts, from the ledger.
        """
        if not self.kernel_started or self.loaded.get(name) == fingerprint:
            return
        kernel = await self.kernel()
        result = await kernel.load_dataset(name, path)
        if result.status == "ok":
            self.loaded[name] = fingerprint

    async def close(self) -> None:
        """Stop the kernel and release the source."""
        if self._kernel is not None:
            await self._kernel.shutdown()
            self._kernel = None
        self.loaded.clear()
