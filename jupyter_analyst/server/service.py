"""Turns of the server's threads: run in the background, one at a time per thread, with their
events fanned out to any number of listeners.

A turn is not tied to the request that started it: a dropped stream leaves it running, and
a client resumes from the last sequence number it saw. A thread's kernel lives from one
turn to the next (see turns/live.py), within the idle time and the caps the server sets.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from datetime import date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from .. import _clock
from .._text import masked, valid_text
from ..budgets import Spent, refusal
from .._version import __version__
from ..errors import AnalystError, ConfigError
from ..events import Event, starting
from ..kernel import KernelLauncher, KernelPool, KernelSession
from ..sql import absolute_spec
from ..store import Thread, ThreadBusy, Turn, TurnLeases
from ..turns import TurnLife, abandoned_turn, cut_turn
from ..workspace import Workspace
from .catalog import SourceCatalog
from .lazy_engine import EngineLoader, import_engine_warm
from .verifications import Verifications

if TYPE_CHECKING:
    from ..turns import AnalystConfig, BackgroundWork, LiveThreads, ModelSettings, TurnSummary
    from ..notebooks import AttachedNotebook
    from .event_feed import EventFeed
    from .replies import BudgetReply, SpendingReply


#: How long a turn waits for the imports begun with the engine (then it imports what it needs itself).
WARM_WAIT_S = 60.0

#: How a server gets a model (the sidebar's banner and a refused turn say it).
NO_MODEL_HINT = ("set OPENAI_API_KEY (and OPENAI_BASE_URL for other servers) in the server's environment, or "
                 "c.AnalystApp.api_key / model_base_url / model, then restart the server")


class ThreadService:
    """Starts turns, tracks the active one per thread, and streams their events."""

    def __init__(
        self,
        *,
        config: AnalystConfig,
        model: ModelSettings | None,
        sources: dict[str, str],
        allow_any_source: bool = False,
        jupyter_mcp_tools: bool = False,
        jupyter_mcp_wait_s: float = 600.0,
        launcher: KernelLauncher | None = None,
        pool_size: int = 0,
        pool_idle_s: float = 600.0,
        kernel_idle_s: float = 1_800.0,
        max_kernels: int = 32,
        max_kernels_per_user: int = 8,
        budget_admins: frozenset[str] = frozenset(),
    ) -> None:
        self.config = config
        #: Who may read every user's spending, besides the server's owner (c.AnalystApp.budget_admins).
        self.budget_admins = budget_admins
        self.model = model
        #: What clients may open: configured sources by name (any path or URL only if allowed).
        self.catalog = SourceCatalog(sources, allow_any=allow_any_source)
        #: Whether the analyst's tools in Jupyter's own MCP server may run (see AnalystApp.jupyter_mcp_tools).
        self.jupyter_mcp_tools = jupyter_mcp_tools
        #: How long one of those tools' steps waits for the thread's running turn.
        self.jupyter_mcp_wait_s = jupyter_mcp_wait_s
        self.launcher = launcher
        self.workspace = Workspace.of(config)
        # Opened now: a blob store that cannot be used (no bucket, no credentials, server
        # down) stops the start with its error, not a turn later.
        self.workspace.artifacts  # noqa: B018
        #: On a shared store, the leases of the turns this server runs (see store/leases.py).
        self.leases: TurnLeases | None = None
        if self.workspace.store_url is None:
            # Nothing runs yet: a turn still marked running was cut by a crash of the last server.
            self.workspace.store.interrupt_running()
        else:
            # Another server may be running a turn marked running: only those whose lease ran out are cut.
            self.leases = TurnLeases(self.workspace.store, config.turn_lease_s, self._publish, cut_turn)
            self.leases.sweep()
        #: On a shared store, events other processes write (see event_feed.py).
        self._feed: EventFeed | None = None
        self._published: dict[str, int] = {}
        self._catching_up: set[str] = set()
        #: Threads announced while their read was under way: that read goes round once more.
        self._read_again: set[str] = set()
        self.pool: KernelPool | None = None
        if pool_size > 0:
            datasets = self.workspace.datasets_root
            # Staged beside the kernels' folders, so a warm kernel's folder is renamed, not copied.
            self.pool = KernelPool(
                self.workspace.warm_dir, size=pool_size, idle_timeout_s=pool_idle_s,
                make=lambda folder: KernelSession(folder, launcher=launcher, sandbox=config.sandbox,
                                                  datasets_root=datasets),
            )
        #: What turns run with: imported at the first need, not at the server's start (see engine.py).
        self.engine = EngineLoader(import_engine_warm)
        self._live_limits = {"idle_s": kernel_idle_s, "max_total": max_kernels, "max_per_user": max_kernels_per_user}
        self._live: LiveThreads | None = None
        self._active: dict[str, asyncio.Task[TurnSummary]] = {}
        #: Threads being deleted: no turn may start on them meanwhile.
        self._deleting: set[str] = set()
        self._listeners: dict[str, set[asyncio.Queue[Event]]] = defaultdict(set)
        self._background: BackgroundWork | None = None
        #: Re-executions of threads' notebooks, followed by clients until done.
        self.verifications = Verifications()

    @property
    def live(self) -> LiveThreads:
        """Each thread's runtime and kernel, kept between its turns (made with the engine)."""
        if self._live is None:
            self._live = self.engine.now().live_threads(**self._live_limits)
        return self._live

    @property
    def background(self) -> BackgroundWork:
        """The summarizer after each turn: off the hot path, drained at shutdown (made with the engine)."""
        if self._background is None:
            self._background = self.engine.now().background_work()
        return self._background

    # ------------------------------------------------------------------ threads

    def thread(self, thread_id: str, user: str) -> Thread:
        """The user's thread (``ConfigError`` ``thread_not_found`` for anyone else's)."""
        return self.workspace.store.get_thread(thread_id, user=user)

    @property
    def sources(self) -> dict[str, str]:
        """The configured sources: name -> spec."""
        return self.catalog.sources

    def create_thread(self, user: str, source: str | None, title: str | None) -> Thread:
        """A new thread owned by ``user`` on a configured source (by name; the default when
        ``None``); ``SourceError`` ``unknown_source`` for any other name."""
        spec = self.catalog.spec_of(source)
        # Stored absolute, as the CLI stores it: a relative path means the server's folder.
        return self.workspace.store.create_thread(user=user, source=absolute_spec(spec) if spec else None, title=title)

    def rename_thread(self, thread: Thread, title: str) -> Thread:
        """The thread under the user's own title."""
        self.workspace.store.rename_thread(thread.thread_id, title)
        return thread.model_copy(update={"title": title})

    async def delete_thread(self, thread: Thread) -> int:
        """Delete the thread: its turns, messages, events and agent state, its artifacts and
        steps in the inventory, its audit notebook and its kernel's folder; its kernel is
        stopped. Returns how many artifacts it held. Refused (``ThreadBusy``) while a turn
        runs on it. Blobs stay in the content store (see ``ArtifactStore.forget_thread``)."""
        thread_id = thread.thread_id
        if self.is_active(thread_id) or thread_id in self._deleting:
            raise ThreadBusy("a turn is running on this thread", hint="stop it (POST cancel), then delete the thread")
        self._deleting.add(thread_id)
        try:
            if self._live is not None:
                await self._live.forget(thread_id)
            count = await asyncio.to_thread(self.workspace.delete_thread, thread_id)
        finally:
            self._deleting.discard(thread_id)
        self._published.pop(thread_id, None)
        for queue in self._listeners.pop(thread_id, ()):
            queue.put_nowait(None)  # type: ignore[arg-type]
        return count

    def kernel_of(self, thread_id: str) -> dict[str, Any] | None:
        """The thread's running kernel, so a client can attach to it: ``{id, state,
        last_activity}`` (``id`` in the server's kernel manager), or ``None``."""
        # No turn has run here before the engine is loaded: no kernel is kept.
        runtime = self._live.runtime(thread_id) if self._live is not None else None
        if runtime is None or not runtime.kernel_started:
            return None
        kernel_id = runtime.kernel_id
        seen = getattr(self.launcher, "activity", None)
        if seen is not None and kernel_id is not None:
            state, last_activity = seen(kernel_id)
            if state is None:
                return None  # shut down through the server (a user, its culler): dropped at the next turn
        else:
            state, last_activity = None, None
        return {"id": kernel_id, "state": state or ("busy" if self.is_active(thread_id) else "idle"),
                "last_activity": last_activity or self.live.last_used(thread_id)}

    def describe(self) -> dict[str, Any]:
        """What clients may know of the set-up: the model's name and endpoint (a URL's
        password masked, the key never), whether it is the scripted one, the source names.

        Which name the scripted model answers to is the engine's: on the event loop, await
        ``engine.ready()`` first."""
        model = self.model
        scripted = model is not None and model.model == self.engine.now().scripted_model
        return {
            "version": __version__,
            "model": {
                "configured": model is not None,
                "name": model.model if model else None,
                "base_url": masked(model.base_url) if model and model.base_url else None,
                "scripted": scripted,
                "hint": None if model else NO_MODEL_HINT,
            },
            "sources": self.catalog.names,
            # The panel offers "Verify this answer" only where there is a folder to verify into.
            "context": {"configured": self.config.context_dir is not None
                        or self.config.context_folder(self.workspace.root).is_dir()},
        }

    # ------------------------------------------------------------------ budgets

    def budget(self, user: str, thread_id: str | None = None) -> BudgetReply:
        """What ``user`` may still spend: each budget that applies (the thread's too, with
        ``thread_id``), and what a refused turn would say. Blocking: call off the loop."""
        from .replies import BudgetReply

        budgets = self.config.budgets
        lines = (self.workspace.store.budget_lines(budgets, user=user, thread_id=thread_id, now=_clock.now())
                 if budgets.limited else [])
        spent = [line for line in lines if line.exhausted]
        return BudgetReply(user=user, limited=budgets.limited, timezone=budgets.timezone, budgets=lines,
                           exhausted=bool(spent),
                           message=refusal(spent, user=user, timezone=budgets.timezone) if spent else None)

    def spending(self, day: str | None = None) -> SpendingReply:
        """Each user's spending on ``day`` (YYYY-MM-DD in the budgets' zone; default today),
        with their budgets as they stand. Blocking: call off the loop."""
        from .replies import SpendingReply, UserSpending

        budgets = self.config.budgets
        now = _clock.now()
        when = now if day is None else datetime.combine(date.fromisoformat(day), time(12), budgets.zone)
        start, end = budgets.day(when)
        store = self.workspace.store
        users = []
        for user, spent in store.spending_by_user(start, end).items():
            lines = store.budget_lines(budgets, user=user, thread_id=None, now=when) if budgets.limited else []
            users.append(UserSpending(user=user, **spent.model_dump(), budgets=lines))
        total = Spent(tokens=sum(u.tokens for u in users), usd=round(sum(u.usd for u in users), 10),
                      calls=sum(u.calls for u in users))
        return SpendingReply(day=start.astimezone(budgets.zone).date().isoformat(), timezone=budgets.timezone,
                             starts_at=_clock.stamp(start), ends_at=_clock.stamp(end), users=users, total=total)

    def is_active(self, thread_id: str) -> bool:
        """Whether a turn is running on the thread."""
        task = self._active.get(thread_id)
        return task is not None and not task.done()

    def running_turn(self, thread_id: str) -> asyncio.Task[TurnSummary] | None:
        """The turn running on the thread (its task), if one runs: another surface of this
        server (Jupyter's MCP tools) waits for it rather than be refused."""
        task = self._active.get(thread_id)
        return task if task is not None and not task.done() else None

    # ------------------------------------------------------------------ turns

    def start_turn(
        self, thread: Thread, prompt: str, *, source: str | None = None, rerun: bool = False,
        attached: AttachedNotebook | None = None,
    ) -> asyncio.Task[TurnSummary]:
        """Run a turn in the background; refused while another runs on the thread.

        Without ``source`` the turn runs on the thread's own source; a configured source
        named here switches the thread to it (later turns stay on it). Nothing outside the
        configured sources is opened unless the server allows any source.

        The turn is announced at once, engine or not. When the engine is not imported yet
        (a turn asked before anything else of the API, or while the import the panel's
        opening began still runs), the turn says so (``starting``: ``engine``) and runs once
        it is: its client sees why it waits, not a silence of seconds.
        """
        if self.is_active(thread.thread_id):
            raise ThreadBusy("a turn is already running on this thread", hint="wait for it, or cancel it")
        if thread.thread_id in self._deleting:
            raise ConfigError("the thread is being deleted", reason="thread_not_found", hint="start a new thread")
        if self.model is None:
            raise ConfigError("no model is configured for the server", reason="no_model", hint=NO_MODEL_HINT)
        spec = self.catalog.for_thread(thread.source) if source is None else self.catalog.spec_of(source)
        loaded = self.engine.loaded and self.engine.now().warmed.is_set()
        # As TurnRequest keeps it (it is made once the engine is there).
        prompt = valid_text(prompt)
        # The turn starts, and says so, while the request is answered: its client sees it
        # begin at once (one small transaction), before the engine opens anything.
        turn, started = self.workspace.store.announce_turn(
            thread.thread_id, prompt, TurnLife(self.model.model, rerun).started,
            lease_s=self.leases.lease_s if self.leases is not None else None,
        )
        if self.leases is not None:
            self.leases.hold(turn)
        self._publish(started)
        if not loaded:
            self.engine.start()
            self._publish(self.workspace.store.append_event(
                starting("engine", thread_id=turn.thread_id, turn_id=turn.turn_id)))
        task = asyncio.create_task(self._run(turn, thread, prompt, spec, rerun=rerun, attached=attached))
        self._active[thread.thread_id] = task
        task.add_done_callback(lambda t: self._finished(turn, t))
        return task

    async def _run(self, turn: Turn, thread: Thread, prompt: str, spec: str | None, *, rerun: bool,
                   attached: AttachedNotebook | None) -> TurnSummary:
        """The announced turn, run by the engine (awaited here when its import still runs)."""
        assert self.model is not None
        engine = await self.engine.ready()
        if not engine.warmed.is_set():  # what a turn imports at its first use: begun with the engine
            await asyncio.to_thread(engine.warmed.wait, WARM_WAIT_S)
        request = engine.turn_request(prompt=prompt, thread_id=thread.thread_id, source=spec, rerun=rerun,
                                      user=thread.user, attached=attached)
        return await engine.run_turn(request, config=self.config, model=self.model, on_event=self._publish,
                                     launcher=self.launcher, pool=self.pool, background=self.background,
                                     live=self.live, turn=turn)

    def _finished(self, turn: Turn, task: asyncio.Task[Any]) -> None:
        thread_id = turn.thread_id
        if self.leases is not None:
            self.leases.release(turn)
        if self._active.get(thread_id) is task:
            del self._active[thread_id]
        if task.cancelled() or task.exception() is not None:
            # A turn stopped before the engine could close it (cancelled before it ran, a
            # thread without a source): closed here, so no turn stays "running" unended.
            end = abandoned_turn(turn, None if task.cancelled() else task.exception())
            ended = self.workspace.store.abandon_turn(turn.turn_id, end, end.status)
            if ended is not None:
                self._publish(ended)
        if not task.cancelled() and task.exception() is not None:
            # The loop persisted what it could; wake listeners so they stop waiting.
            for queue in self._listeners.get(thread_id, ()):
                queue.put_nowait(None)  # type: ignore[arg-type]

    async def cancel(self, thread_id: str) -> bool:
        """Stop the running turn (the loop ends it as interrupted); False when none runs."""
        task = self._active.get(thread_id)
        if task is None or task.done():
            return False
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        return True

    # ------------------------------------------------------------------ events

    def _publish(self, event: Event) -> None:
        # Each event reaches the listeners once. On a shared store this process also hears
        # its own commits: the feed's read of a batch can be published before the writer
        # that committed it hands it on, and that hand-on is then a repeat.
        if event.seq <= self._published.get(event.thread_id, 0):
            return
        self._published[event.thread_id] = event.seq
        for queue in self._listeners.get(event.thread_id, ()):
            queue.put_nowait(event)

    def start_feed(self) -> None:
        """On a shared (PostgreSQL) store, hear the events other processes write (call on the loop)."""
        if self.leases is not None:
            self.leases.start()
        if self.workspace.store_url is not None and self._feed is None:
            from .event_feed import EventFeed

            self._feed = EventFeed(self.workspace.store_url, asyncio.get_running_loop(), self._announced)

    def _announced(self, thread_id: str, seq: int) -> None:
        threads = [thread_id] if thread_id else list(self._listeners)
        for tid in threads:
            if self._listeners.get(tid) and (seq == 0 or seq > self._published.get(tid, 0)):
                self._catch_up(tid)

    def _catch_up(self, thread_id: str) -> None:
        # One read at a time per thread, so events are published in seq order. An
        # announcement during a read may be of an event committed after the read looked:
        # the read then goes round again, or that event (a turn's end, say) would wait for
        # an announcement that never comes.
        if thread_id in self._catching_up:
            self._read_again.add(thread_id)
            return
        self._catching_up.add(thread_id)

        async def read() -> None:
            try:
                while True:
                    self._read_again.discard(thread_id)
                    after = self._published.get(thread_id, 0)
                    events = await asyncio.to_thread(self.workspace.store.events, thread_id, after=after)
                    fresh = [e for e in events if e.seq > self._published.get(thread_id, 0)]
                    for event in fresh:
                        self._publish(event)
                    # No await between this check and the end: an announcement cannot slip in.
                    if not fresh and thread_id not in self._read_again:
                        return
            except AnalystError:
                return  # the store is away; the next announcement retries
            finally:
                self._catching_up.discard(thread_id)

        asyncio.get_running_loop().create_task(read())

    def is_following(self, thread_id: str) -> bool:
        """Whether a turn is running on the thread, here or (shared store) in another process."""
        if self.is_active(thread_id):
            return True
        return self._feed is not None and self.workspace.store.has_running_turn(thread_id)

    @contextlib.contextmanager
    def listen(self, thread_id: str):
        """A queue receiving the thread's events from now on (subscribe before reading the backlog)."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        self.start_feed()
        if self._feed is not None and not self._listeners.get(thread_id):
            # The first listener here reads what is stored as its backlog: what other
            # processes write is caught up from now on, not from the thread's first event.
            last = self.workspace.store.last_seq(thread_id)
            self._published[thread_id] = max(self._published.get(thread_id, 0), last)
        self._listeners[thread_id].add(queue)
        try:
            yield queue
        finally:
            self._listeners[thread_id].discard(queue)

    def open_artifact(self, artifact_id: str) -> BinaryIO:
        """An artifact's bytes, checked against its fingerprint (hashing: call off the loop).

        Raises:
            StorageError: ``blob_missing`` or ``blob_corrupt``, naming the artifact.
        """
        return self.workspace.artifacts.open_blob(artifact_id)

    async def close(self) -> None:
        """Cancel running turns and close the stores."""
        if self._feed is not None:
            self._feed.close()
        for thread_id in list(self._active):
            await self.cancel(thread_id)
        await self.verifications.close()
        if self.leases is not None:
            await self.leases.close()
        if self._background is not None:
            await self._background.drain()
        if self._live is not None:
            await self._live.close()
        if self.pool is not None:
            await self.pool.close()
        self.workspace.close()
