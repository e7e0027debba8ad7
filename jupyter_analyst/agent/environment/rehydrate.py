"""What the running kernel holds, and how it is brought to what the thread's steps say.

A kernel that starts for a thread that already has history (a new process, a kernel culled
or dead) is rehydrated lazily: before a step executes, only the names it reads are restored
(a dataset reloaded from its Parquet artifact, the Python step that made a value run again
on its own recorded inputs). When what a step reads cannot be told from its code
(``globals()``, a magic, a name no step bound, a value changed in place by a later
``.append``), the whole history is replayed instead, in order, each step on its own inputs;
the kernel then holds everything, as one that ran the thread from its start does.

A query's dataset is loaded into a running kernel in the background: whatever uses the
kernel next waits for it (:meth:`Rehydration.settle`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from ..._disk import unavailable
from ...errors import AnalystError, DiskUnavailable, KernelError, StorageError
from ..dataflow import changed_by_methods, rebound_names
from .bindings import Binding, NameLedger, inputs_of, is_dataset, unknown_reads

if TYPE_CHECKING:
    from ...artifacts import ArtifactStore, StepRecord
    from ...kernel import KernelSession


class RehydratedThread(Protocol):
    """What rehydration reads of its thread (a ``ThreadEnvironment``, which holds the
    rehydration: it never imports it back): the thread, its artifacts and names, its kernel."""

    thread_id: str
    artifacts: ArtifactStore
    ledger: NameLedger

    @property
    def kernel_session(self) -> KernelSession | None: ...

    def bindings(self) -> dict[str, Binding]: ...

    def dataset_ids(self) -> dict[str, str]: ...

log = logging.getLogger(__name__)


class Rehydration:
    """The running kernel of one thread: what it holds, and what it is still loading."""

    def __init__(self, environment: RehydratedThread) -> None:
        self._env = environment
        #: What the running kernel holds: name -> dataset fingerprint or Python step key.
        self.loaded: dict[str, Binding] = {}
        #: Whether the running kernel holds the effects of the whole history: it started on a
        #: thread without history, or replayed it all. A kernel rehydrated lazily does not,
        #: so a step whose inputs cannot be told makes it replay everything first.
        self.complete = False
        #: Recorded step key -> the names its code changes through in-place methods.
        self._in_place: dict[str, set[str]] = {}
        #: The dataset being loaded into the kernel after its query returned; whatever uses
        #: the kernel next waits for it (:meth:`settle`).
        self._loading: asyncio.Task[None] | None = None
        #: A full or read-only workspace met by a background load: raised by the next settle.
        self._load_failure: DiskUnavailable | None = None

    @property
    def _kernel(self) -> KernelSession:
        kernel = self._env.kernel_session
        assert kernel is not None
        return kernel

    def fresh(self, *, complete: bool) -> None:
        """A kernel that ran only its set-up (``complete``: the thread has no history)."""
        self.loaded = {}
        self.complete = complete

    # ------------------------------------------------------------------ background loads

    def load_later(self, name: str, fingerprint: str) -> None:
        """Load ``name``'s dataset into the running kernel in the background (see :meth:`settle`)."""
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
            self.complete = False
            if isinstance(exc, DiskUnavailable):
                self._load_failure = exc
            log.warning("dataset %s was not loaded into the kernel of %s: %s", name, self._env.thread_id, exc,
                        exc_info=not isinstance(exc, AnalystError))

    async def stop(self) -> None:
        """The kernel is going away: a background load is cancelled (and awaited), and
        nothing is held any more."""
        loading, self._loading = self._loading, None
        self._load_failure = None  # the kernel it was for is going away
        if loading is not None:
            loading.cancel()
            await asyncio.wait({loading})
        self.fresh(complete=False)

    # ------------------------------------------------------------------ restoring inputs

    async def restore_inputs(self, code: str) -> dict[str, Binding]:
        """Make the running kernel hold what ``code`` reads, as its key says; returns those inputs.

        A kernel that does not hold the whole history replays all of it first when what
        the code reads cannot be told (see :meth:`lazy_restore_refused`).
        """
        await self.settle()
        inputs = inputs_of(code, self._env.bindings())
        try:
            if not self.complete:
                why = self.lazy_restore_refused(code, inputs)
                if why is not None:
                    log.info("the kernel of %s replays the whole history: the step %s", self._env.thread_id, why)
                    await self.replay_all()
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
        why = unknown_reads(code, self._env.bindings())
        if why is not None:
            return why
        changed = self._changed_in_place()
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
            step = self._env.artifacts.find_step(self._env.thread_id, binding)
            if step is None:
                return f"reads {name}, whose step is not recorded"
            recorded = step.result.get("_inputs") or {}
            why = unknown_reads(step.arguments["code"], recorded)
            if why is not None:
                return f"reads {name}, made by a step that {why[3:]}"
            pending.extend(recorded.items())
        return None

    def _changed_in_place(self) -> dict[str, set[str]]:
        """Name -> the keys of the recorded steps that change it through in-place methods."""
        changed: dict[str, set[str]] = {}
        for step in self._env.ledger.python_steps():
            if step.step_key not in self._in_place:  # each recorded step is parsed once
                self._in_place[step.step_key] = changed_by_methods(step.arguments["code"])
            for name in self._in_place[step.step_key]:
                changed.setdefault(name, set()).add(step.step_key)
        return changed

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
            step = self._env.artifacts.find_step(self._env.thread_id, binding)
            if step is None or binding in _seen:
                log.warning("cannot restore %s (%s) in the kernel of %s", name, binding, self._env.thread_id)
                continue
            await self._replay(step, _seen | {binding})

    async def _replay(self, step: StepRecord, seen: frozenset[str] = frozenset()) -> None:
        """Run a recorded Python step again, on the inputs it was recorded with."""
        await self.align(step.result.get("_inputs") or {}, seen)
        code = step.arguments["code"]
        result = await self._kernel.execute(code)
        for name in rebound_names(code):
            if result.status == "ok":
                self.loaded[name] = step.step_key
            else:
                self.loaded.pop(name, None)

    async def _load(self, name: str, fingerprint: str) -> None:
        kernel, artifacts, thread_id = self._kernel, self._env.artifacts, self._env.thread_id
        # The kernel reads the file itself: its bytes are checked first (off the loop: a big
        # dataset takes a while to hash). Only the host writes blobs, by rename.
        blob = await asyncio.to_thread(artifacts.checked_blob, fingerprint, thread_id=thread_id)
        try:
            path = kernel.stage(fingerprint, blob)
        except OSError as exc:  # a copy into the kernel's datasets folder on a full disk
            raise unavailable(exc, artifacts.blobs.root) or StorageError(
                f"cannot make dataset {name} readable by the kernel: {exc}") from exc
        if not os.path.samefile(path, blob):
            # A copy (the datasets folder is on another file system): what the kernel reads is checked.
            await asyncio.to_thread(artifacts.checked_blob, fingerprint, thread_id=thread_id, copy=path)
        result = await kernel.load_dataset(name, path, fingerprint=fingerprint)
        if result.status == "ok":
            self.loaded[name] = fingerprint
        else:
            self.loaded.pop(name, None)

    async def replay_all(self) -> None:
        """Datasets first, then every recorded Python step in order, each on its own inputs.

        A dataset whose stored bytes are damaged is left out (and what depends on it): a
        step that reads it fails loudly when its inputs are aligned, naming the artifact.
        """
        await self.settle()
        self.fresh(complete=False)
        thread_id = self._env.thread_id
        for name, artifact_id in self._env.dataset_ids().items():
            try:
                await self._load(name, self._env.artifacts.get(artifact_id).fingerprint)
            except StorageError as exc:
                log.warning("%s not restored in the kernel of %s: %s", name, thread_id, exc)
        for step in self._env.ledger.python_steps():
            try:
                await self._replay(step)
            except StorageError as exc:
                log.warning("step %s not replayed in the kernel of %s: %s", step.call_id, thread_id, exc)
        self.complete = True
