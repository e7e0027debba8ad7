"""What a thread's tools run against: its data source, query runner, inventory and kernel.

The kernel starts lazily: a turn whose steps are all reused never starts one, and a kernel
that starts for a thread with history is brought to it lazily, step by step (see
rehydrate.py). What each name holds is kept by the thread's :class:`NameLedger` (see
bindings.py). :class:`ThreadEnvironment` holds the resources and the kernel's life, and
hands the tools one surface over the ledger and the rehydration.

An environment may outlive a turn (the server keeps it, see turns/live.py): each turn
attaches its own source and stores to it, and the kernel and what it holds carry over.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...artifacts import ArtifactStore
from ...events import StartingWhat
from ...kernel import OutputCaps
from ...sql import DEFAULT_MAX_CHARS, DEFAULT_TIMEOUT_S, SqlPreparer
from ..dataflow import rebound_names
from .bindings import Binding, NameLedger, python_bindings
from .rehydrate import Rehydration

if TYPE_CHECKING:
    # Imported when used: a turn whose steps are all reused needs no kernel (jupyter_client)
    # and no query runner (pyarrow).
    from ...kernel import KernelLauncher, KernelPool, KernelSession, SandboxPolicy
    from ...knowledge import TeamContext
    from ...notebooks import AttachedNotebook
    from ...sql import DataSource, QueryRunner


class ProposalKeeper(Protocol):
    """Where a thread's proposals for its notebook are kept (the thread store)."""

    def record_proposal(self, thread_id: str, turn_id: str, proposal_id: str, notebook: str,
                        body: dict[str, Any]) -> None: ...

    def proposal(self, thread_id: str, proposal_id: str) -> dict[str, Any] | None: ...

    def decisions(self, thread_id: str, proposal_id: str | None = None) -> list[dict[str, Any]]: ...

    def decide(self, thread_id: str, proposal_id: str, change_ids: list[str], decision: str, user: str) -> None: ...


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
        sql_checks: Path | None = None,
    ) -> None:
        self.thread_id = thread_id
        #: The user's notebook the turn works beside (read when it started), if one is attached:
        #: its outline goes into the prompt, its cells are what ``read_cells`` reads.
        self.attached: AttachedNotebook | None = None
        #: What the team's context folder defines (read when the turn started), if there is one:
        #: its rules and index go into the prompt, ``find`` searches it, ``run_sql`` is compared with it.
        self.team: TeamContext | None = None
        #: Where what the turns' SQL says of the team's definitions is kept, by the folder's
        #: digest and the SQL (a reused query is not parsed again), set by the turn.
        self.team_readings: Path | None = None
        #: Where proposed cells for the attached notebook are kept, set by the turn: a
        #: proposal changes nothing until a person accepts it from there.
        self.proposals: ProposalKeeper | None = None
        #: The thread's proposals for that notebook and where each stands (pending, accepted,
        #: rejected, withdrawn), in a line or two for the prompt, set by the turn.
        self.proposal_notes: str = ""
        self.source = source
        self.artifacts = artifacts
        self.workdir = workdir
        self._query_timeout_s = query_timeout_s
        self._row_cap = row_cap
        self._runner: QueryRunner | None = None
        #: Checks the model's SQL in worker processes, within a size and a time limit (the
        #: first query starts one: a turn without SQL starts no process), keeping its checks
        #: in ``sql_checks`` (a turn whose queries were all checked before starts none).
        self.preparer = SqlPreparer(max_chars=sql_max_chars, timeout_s=sql_prepare_timeout_s, kept=sql_checks)
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
        #: One tool execution at a time per thread (DESIGN.md, decision 4).
        self.lock = asyncio.Lock()
        #: A dataset is checked against the thread's caps and stored by one step at a time, so
        #: queries that run together (a plan's) cannot each pass a cap they pass only together.
        self.storing = asyncio.Lock()
        self.kernel_restarts = 0
        #: What the thread's steps say each name holds (see bindings.py).
        self.ledger = NameLedger(thread_id, artifacts)
        #: What the running kernel holds, and how it is brought to the ledger (see rehydrate.py).
        self.rehydration = Rehydration(self)
        #: Told what the running turn waits for while it starts (the kernel, the SQL checker):
        #: set by the turn (turns/frame.py) while it runs, so its client can say it.
        self.on_starting: Callable[[StartingWhat], Awaitable[None]] | None = None

    def warm_sql(self, *, side_by_side: bool) -> None:
        """A query is coming: start the SQL checker's workers and the source's engine worker
        (a DuckDB source's, see ``sql/engine_process.py``) now, without waiting for them."""
        self.preparer.warm(side_by_side=side_by_side)
        warm_engine = getattr(self.source, "warm_engine", None)  # a source that has a worker to start
        if warm_engine is not None:
            warm_engine()

    @property
    def runner(self) -> QueryRunner:
        """Runs the thread's queries against its current source (made on first use)."""
        if self._runner is None:
            from ...sql import QueryRunner

            self._runner = QueryRunner(self.source, timeout_s=self._query_timeout_s, row_cap=self._row_cap)
        return self._runner

    def attach(self, *, source: DataSource, artifacts: ArtifactStore) -> None:
        """Run the next turn against ``source`` and ``artifacts`` (a kept environment's new turn).

        The kernel and what it holds carry over; what the steps say each name holds is read
        from the store again, which is the truth whoever wrote it last.
        """
        self.source = source
        self.artifacts = artifacts
        self._runner = None  # made again, on the new source, by the next query
        self.ledger = NameLedger(self.thread_id, artifacts)

    def data_version(self) -> str:
        """The source's identity and data version, part of every SQL step key."""
        return f"{self.source.kind}:{self.source.spec}:{self.source.data_version()}"

    # ------------------------------------------------------------------ names (the ledger's)

    def bindings(self) -> dict[str, Binding]:
        """What each name holds after the thread's steps, executed or reused, in order."""
        return self.ledger.bindings()

    def dataset_ids(self) -> dict[str, str]:
        """The thread's datasets: name -> artifact id (the latest fetch into a name wins)."""
        return self.ledger.dataset_ids()

    def python_names(self) -> set[str]:
        """Every name the thread's Python steps have defined in the kernel so far."""
        return self.ledger.python_names()

    @property
    def not_run(self) -> dict[str, str]:
        """Names that steps which could not run (no kernel) would have defined -> their call id."""
        return self.ledger.not_run

    def python_not_run(self, code: str, call_id: str) -> None:
        """Remember that a step could not run at all, so a later reader of its names is told why."""
        self.ledger.python_not_run(code, call_id)

    async def dataset_fetched(self, name: str, fingerprint: str) -> None:
        """A query's dataset (run or reused) now is ``name``; a running kernel loads it.

        The kernel loads it in the background: the step's result goes back to the model
        while the kernel reads the file, and whatever uses the kernel next (a Python step,
        another load, a restart, the turn's end) waits for it first (:meth:`settle`). A load
        that fails leaves the name unloaded and the kernel not holding the whole history, so
        the next step that reads it loads it again, and fails loudly if it fails again.
        """
        self.ledger.bind({name: fingerprint})
        await self.settle()
        if self.kernel_started and self.loaded.get(name) != fingerprint:
            self.rehydration.load_later(name, fingerprint)

    def python_reused(self, code: str, key: str) -> None:
        """A reused Python step: the names it binds hold its values now, logically (the
        kernel is aligned when a later step reads them)."""
        self.ledger.bind(python_bindings(code, key))

    def python_executed(self, code: str, key: str | None, ok: bool) -> None:
        """A Python step ran in the kernel: on success its names hold its values; after a
        failure they hold something unknown, so a later reader aligns them again."""
        self.ledger.python_ran(code)
        if ok and key is not None:
            updates = python_bindings(code, key)
            self.ledger.bind(updates)
            self.loaded.update(updates)
        else:
            for name in rebound_names(code):
                self.loaded.pop(name, None)

    # ------------------------------------------------------------------ the kernel's contents (rehydration's)

    @property
    def loaded(self) -> dict[str, Binding]:
        """What the running kernel holds: name -> dataset fingerprint or Python step key."""
        return self.rehydration.loaded

    @property
    def kernel_complete(self) -> bool:
        """Whether the running kernel holds the effects of the whole history."""
        return self.rehydration.complete

    async def settle(self) -> None:
        """Wait until the datasets being loaded into the kernel are loaded (or failed to)."""
        await self.rehydration.settle()

    async def restore_inputs(self, code: str) -> dict[str, Binding]:
        """Make the running kernel hold what ``code`` reads, as its key says; returns those inputs."""
        return await self.rehydration.restore_inputs(code)

    def lazy_restore_refused(self, code: str, inputs: Mapping[str, Binding]) -> str | None:
        """Why restoring only ``inputs`` would not give ``code`` what it reads (``None``: it would)."""
        return self.rehydration.lazy_restore_refused(code, inputs)

    # ------------------------------------------------------------------ the kernel

    @property
    def kernel_session(self) -> KernelSession | None:
        """The thread's kernel session, started or not (``None`` when there is none)."""
        return self._kernel

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

    async def kernel(self) -> KernelSession:
        """The thread's kernel, started on first use (rehydrated lazily, step by step).

        When it cannot be started, nothing of it is kept: the error goes to the caller, and
        the next call starts a kernel again.
        """
        await self.settle()
        if self._kernel is not None and self._kernel.is_started:
            return self._kernel
        if self._kernel is not None or self._pool is None or not self._pool.serves(self.workdir):
            await self.starting("kernel")  # no warm kernel for it: one starts now (seconds)
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
        # A kernel that ran only its set-up: it holds nothing of the thread yet.
        self.rehydration.fresh(complete=not self.bindings())
        return self._kernel

    async def starting(self, what: StartingWhat) -> None:
        """Tell the running turn that ``what`` starts now (nothing when no turn listens)."""
        if self.on_starting is not None:
            await self.on_starting(what)

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
            self.rehydration.fresh(complete=not self.bindings())

    async def discard_kernel(self) -> None:
        """Stop the kernel and forget what it held; the next step starts a new one."""
        await self.rehydration.stop()
        kernel, self._kernel = self._kernel, None
        if kernel is not None:
            await kernel.shutdown()

    async def close(self) -> None:
        """Stop the kernel (the source is its opener's to close)."""
        await self.discard_kernel()
