"""Preparing SQL off the event loop, in worker processes, within a size and a time limit.

Parsing, guarding and qualifying a query (``prepare_sql``) is pure Python and usually takes
milliseconds, but hostile SQL can make it take minutes: qualifying a UNION is quadratic in
its arms (1,500 arms took 34 s). On the event loop that stalls every other user of the
server; in a thread it could not be stopped (sqlglot cannot be interrupted) and would keep
a core and the GIL until it finished. So it runs in small worker processes:

* SQL longer than ``max_chars`` is refused before anything parses it (``sql_too_large``);
* a worker still busy after ``timeout_s`` is killed, replaced, and the SQL refused
  (``sql_too_complex``); so is SQL that exhausts the worker's memory (capped at
  :data:`WORKER_MEMORY_MB`) or kills it;
* the event loop only awaits: the waiting happens in threads of this module's own, so a
  hostile query never holds a thread other work needs.

Workers are started once per process (:data:`POOL_SIZE` of them, lazily: the first when
the model starts a ``run_sql`` call, so a turn without SQL starts none) and answer one
query at a time, as JSON lines over pipes.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import os
import queue
import select
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AnalystError, SqlRejected
from .check_cache import CheckCache, settled
from .query_model import ClearedQuery, PreparedQuery
from .workers import close_pipes

if TYPE_CHECKING:
    from .sources import DataSource

#: The default limits (see ``AnalystConfig.sql_max_chars`` and ``sql_prepare_timeout_s``).
DEFAULT_MAX_CHARS = 100_000
DEFAULT_TIMEOUT_S = 10.0
#: Worker processes per process; each prepares one query at a time.
POOL_SIZE = max(1, min(4, os.cpu_count() or 1))
#: The address space a worker may use: a query that needs more is refused, not the host harmed.
WORKER_MEMORY_MB = 1_024
#: How long a new worker may take to import sqlglot and say it is ready.
STARTUP_TIMEOUT_S = 60.0

#: Told of a query that passed the read-only guard while the rest of it is checked.
Cleared = Callable[[ClearedQuery], None]

_counter_lock = threading.Lock()
_prepared = 0
#: How many checked queries this process remembers (see :class:`_Checked`).
CACHE_SIZE = 512


def prepared_count() -> int:
    """How many queries the workers of this process have prepared (or refused) so far."""
    return _prepared


class _WorkerGone(Exception):
    """The worker died, or did not answer in time; it has been stopped."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class _Worker:
    """One worker process and the pipes to it."""

    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        # The worker imports this very package, wherever it was imported from.
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        env["JUPYTER_ANALYST_WORKER_MEMORY_MB"] = str(WORKER_MEMORY_MB)
        env["JUPYTER_ANALYST_HOST_PID"] = str(os.getpid())
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_analyst.sql.prepare_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            # Its own session: Ctrl-C in a terminal stops the host, which closes the pipes.
            start_new_session=True,
        )
        self.ready = False
        #: Held while the worker's first line (that it is ready) is read: by the job that
        #: waits for it, or by a look that must not block (:meth:`seen_ready`).
        self._starting = threading.Lock()
        self._pending = b""
        #: Keys of the schemas sent to this worker: later jobs name them instead of carrying them.
        self.schemas: set[str] = set()

    def wait_ready(self) -> None:
        """Block until the worker has imported what it needs."""
        with self._starting:
            self._read_ready()

    def _read_ready(self) -> None:
        if not self.ready:
            reply = self._read(time.monotonic() + STARTUP_TIMEOUT_S)
            if reply.get("ready") is not True:
                self.stop()
                raise _WorkerGone("it did not start")
            self.ready = True

    def seen_ready(self) -> bool:
        """Whether the worker has said it is ready, looking without waiting (its line is read
        when it is there; nobody else is reading it then)."""
        if self.ready:
            return True
        if not self._starting.acquire(blocking=False):
            return False  # a job waits for it: it is still starting
        try:
            assert self.proc.stdout is not None
            if b"\n" not in self._pending and not select.select([self.proc.stdout.fileno()], [], [], 0)[0]:
                return False
            self._read_ready()
        except (_WorkerGone, OSError, ValueError):
            return False
        finally:
            self._starting.release()
        return self.ready

    def ask(
        self, job: dict[str, Any], timeout_s: float, on_cleared: Cleared | None = None,
        meanwhile: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """Send one job and wait at most ``timeout_s`` for its answer; ``on_cleared`` is given
        the early ``cleared`` reply on the way (see ``prepare_worker``), and ``meanwhile()``
        is done in this thread once the worker has the job."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(job).encode("ascii") + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            self.stop()
            raise _WorkerGone("it was not running") from exc
        deadline = time.monotonic() + timeout_s
        if meanwhile is not None:
            try:
                meanwhile()
            except Exception:  # noqa: BLE001 - work done beside the check never fails it
                pass
        reply = self._read(deadline)
        while "cleared" in reply:
            if on_cleared is not None:
                try:
                    on_cleared(ClearedQuery.model_validate(reply["cleared"]))
                except Exception:  # noqa: BLE001 - an early start is only sooner: the answer still comes
                    pass
            reply = self._read(deadline)
        return reply

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        if self.proc.stdout.closed:  # stopped already (a look at whether it was ready saw it end)
            raise _WorkerGone("it stopped")
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise _WorkerGone("timeout")
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                code = self.stop()
                raise _WorkerGone(f"it stopped (exit status {code})")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return json.loads(line)

    def stop(self) -> int | None:
        """Kill the process (never raises); returns its exit status."""
        try:
            self.proc.kill()
        except OSError:
            pass
        close_pipes(self.proc)
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
            return None


class WorkerPool:
    """Worker processes shared by every preparer of this process."""

    def __init__(self, size: int = POOL_SIZE) -> None:
        self.size = size
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._lock = threading.Lock()
        self._all: set[_Worker] = set()
        # As many waiting threads as workers: a job never blocks a thread other work needs.
        self.executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="sql-prepare")

    def warm(self, count: int = 1) -> None:
        """Have at least ``count`` workers (at most the pool's size), the missing ones
        started in the background (does not wait for them to import)."""
        with self._lock:
            started = [_Worker() for _ in range(min(count, self.size) - len(self._all))]
            self._all.update(started)
        for worker in started:
            self._idle.put(worker)

    @property
    def started(self) -> bool:
        """Whether a worker has finished starting (imports done): a job need not wait for one."""
        with self._lock:
            workers = list(self._all)
        return any(worker.seen_ready() for worker in workers)

    def _acquire(self) -> _Worker:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if len(self._all) < self.size:
                worker = _Worker()
                self._all.add(worker)
                return worker
        return self._idle.get()

    def _discard(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)

    def run(
        self, job: dict[str, Any], timeout_s: float, on_cleared: Cleared | None = None,
        meanwhile: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """Prepare one job in a worker (blocking); a worker that fails is replaced.
        ``meanwhile()`` is done once, in this thread, while a worker checks the job.

        Raises:
            _WorkerGone: the job ran past ``timeout_s`` or killed its worker.
            AnalystError: ``sql_worker_failed``: no worker could be started.
        """
        global _prepared
        for attempt in (1, 2):
            worker = self._acquire()
            try:
                worker.wait_ready()
            except _WorkerGone:
                self._discard(worker)
                if attempt == 2:
                    raise AnalystError(
                        "the SQL checker could not be started",
                        reason="sql_worker_failed",
                        hint=f"check that `{sys.executable} -m jupyter_analyst.sql.prepare_worker` runs",
                    ) from None
                continue
            try:
                reply = self._ask(worker, job, timeout_s, on_cleared, meanwhile)
            except _WorkerGone as exc:
                self._discard(worker)
                if exc.why == "it was not running" and attempt == 1:
                    continue  # died while idle: the job never reached it
                raise
            self._idle.put(worker)
            with _counter_lock:
                _prepared += 1
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _ask(
        worker: _Worker, job: dict[str, Any], timeout_s: float, on_cleared: Cleared | None,
        meanwhile: Callable[[], None] | None,
    ) -> dict[str, Any]:
        """Send a job, with its schema only when this worker was not sent that schema before
        (a large schema costs more to send and to build than a small query to check)."""
        key = job.get("schema_key")
        if key and key in worker.schemas:
            reply = worker.ask({k: v for k, v in job.items() if k != "schema"}, timeout_s, on_cleared, meanwhile)
            if not reply.get("schema_missing"):
                return reply
            worker.schemas.discard(key)  # the worker let it go: sent again below
            meanwhile = None  # done already
        reply = worker.ask(job, timeout_s, on_cleared, meanwhile)
        if key:
            worker.schemas.add(key)
        return reply

    def close(self) -> None:
        """Stop every worker (at exit)."""
        with self._lock:
            workers, self._all = list(self._all), set()
        for worker in workers:
            worker.stop()
        self.executor.shutdown(wait=False, cancel_futures=True)


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


class _Checked:
    """Queries this process has checked, by their text and their source as of now.

    Checking is a pure function of the SQL, the source's schema and its settings, and the
    schema is the source's as of its data version: the same text against the same version
    is the same query. A rerun, a "continue" that recomputes its steps' keys, or another
    thread asking the same of the same source is not checked again. Refusals are not kept.
    """

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, ...], PreparedQuery] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, ...]) -> PreparedQuery | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: tuple[str, ...], prepared: PreparedQuery) -> None:
        with self._lock:
            self._items[key] = prepared
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


_checked = _Checked()
#: Each source's schema as of a data version, with the key workers know it by.
_schemas: OrderedDict[tuple[str, str, str], tuple[str, dict[str, dict[str, str]]]] = OrderedDict()
_schemas_lock = threading.Lock()


async def _schema_of(source: DataSource, version: str) -> tuple[str, dict[str, dict[str, str]]]:
    """The source's schema and its key (a digest of its content), read once per data version."""
    index = (source.kind, source.spec, version)
    with _schemas_lock:
        known = _schemas.get(index)
    if known is not None:
        return known
    schema = await asyncio.to_thread(source.schema)  # a catalogue query, when not cached
    text = json.dumps(schema, sort_keys=True)
    entry = (hashlib.sha256(text.encode()).hexdigest()[:24], schema)
    with _schemas_lock:
        _schemas[index] = entry
        while len(_schemas) > 64:
            _schemas.popitem(last=False)
    return entry


def _key_of(sql: str, source: DataSource) -> tuple[tuple[str, ...], bool]:
    """What a check depends on (the text, and the source as of its data version), and
    whether the check holds in another process too (its source's data is settled)."""
    version = source.data_version()
    # A source without files (":memory:") is only itself: its own object is part of its identity.
    identity = f"{version}@{id(source)}" if version == "memory" else version
    return (sql, source.kind, source.spec, source.dialect, identity), settled(version)


def worker_pool() -> WorkerPool:
    """This process's worker pool (created on first use, stopped at exit)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = WorkerPool()
            atexit.register(_pool.close)
        return _pool


class SqlPreparer:
    """Prepares the model's SQL for one source's runtime, off the event loop, within limits.

    Args:
        max_chars: longer SQL is refused unread (``sql_too_large``).
        timeout_s: preparation still running after this long is stopped (``sql_too_complex``).
        kept: a folder where checks are kept across processes: a query another process
            checked against the same data is answered from it, and no worker starts.
    """

    def __init__(
        self, *, max_chars: int = DEFAULT_MAX_CHARS, timeout_s: float = DEFAULT_TIMEOUT_S, kept: Path | None = None,
    ) -> None:
        self.max_chars = max_chars
        self.timeout_s = timeout_s
        #: Where checks are kept for other processes (the workspace's, see ``check_cache.py``).
        self.kept = CheckCache(kept) if kept is not None else None

    @property
    def cold(self) -> bool:
        """Whether no worker of this process has started yet: the first query waits for one
        to import what it needs (seconds), unless its check is answered from the cache."""
        return not worker_pool().started

    def warm(self, *, side_by_side: bool = False) -> None:
        """Start a worker now, so that the first query does not wait for it to import; with
        ``side_by_side`` as many as the pool holds, for the queries a plan checks together
        (a worker started on demand would hold one of them up while it imports)."""
        pool = worker_pool()
        pool.warm(pool.size if side_by_side else 1)

    async def remembers(self, sql: str, source: DataSource) -> bool:
        """Whether ``sql`` against ``source`` as it is now was checked before, by this process
        or (kept) by another: :meth:`prepare` then answers at once, with no worker."""
        return isinstance(sql, str) and await self._known(*_key_of(sql, source)) is not None

    async def _known(self, key: tuple[str, ...], lasting: bool) -> PreparedQuery | None:
        """The check of ``key`` this process made, or one kept (then remembered here too)."""
        known = _checked.get(key)
        if known is None and self.kept is not None and lasting:
            known = await asyncio.to_thread(self.kept.get, key)
            if known is not None:
                _checked.put(key, known)
        return known

    async def prepare(
        self, sql: str, source: DataSource, *, on_cleared: Cleared | None = None,
        meanwhile: Callable[[], None] | None = None,
    ) -> PreparedQuery:
        """Check ``sql`` against ``source``: its canonical and executable forms.

        ``on_cleared`` (called in a thread of this module's) is given the query as soon as it
        has passed the read-only guard, while its columns are still being checked: the caller
        may start running it then, and must drop that run if this raises. It is not called
        for a query this process checked before (the answer is immediate); nor is
        ``meanwhile()``, which is otherwise done in that thread, before ``on_cleared``, while
        the worker checks (its errors are ignored).

        Raises:
            SqlRejected: as ``prepare_sql``, and ``sql_too_large`` / ``sql_too_complex``
                past the limits.
            AnalystError: ``sql_worker_failed``: the checker itself could not run.
        """
        if not isinstance(sql, str):
            raise SqlRejected("the SQL must be a string", reason="sql_parse_error")
        if len(sql) > self.max_chars:
            raise SqlRejected(
                f"the SQL is {len(sql):,} characters long; at most {self.max_chars:,} are accepted",
                reason="sql_too_large",
                hint="aggregate or filter in fewer words: a CTE, GROUP BY or IN (SELECT ...) "
                     "instead of spelling out every value or arm",
            )
        key, lasting = _key_of(sql, source)
        known = await self._known(key, lasting)
        if known is not None:
            return known.model_copy(deep=True)
        schema_key, schema = await _schema_of(source, key[-1])
        job = {"sql": sql, "schema_key": schema_key, "schema": schema, "dialect": source.dialect,
               "early": on_cleared is not None}
        pool = worker_pool()
        loop = asyncio.get_running_loop()
        try:
            reply = await loop.run_in_executor(pool.executor, pool.run, job, self.timeout_s, on_cleared, meanwhile)
        except _WorkerGone as exc:
            if exc.why == "timeout":
                raise SqlRejected(
                    f"checking the SQL took longer than {self.timeout_s:g} s and was stopped",
                    reason="sql_too_complex",
                    hint="simplify it: fewer UNION arms or CASE branches, CTEs instead of repetition",
                ) from None
            raise SqlRejected(
                f"checking the SQL stopped the checker ({exc.why}); it is too large or too complex",
                reason="sql_too_complex", hint="simplify it: smaller, flatter queries, CTEs for the steps",
            ) from None
        if "prepared" in reply:
            prepared = PreparedQuery.model_validate(reply["prepared"])
            _checked.put(key, prepared.model_copy(deep=True))
            if self.kept is not None and lasting:
                await asyncio.to_thread(self.kept.put, key, prepared)
            return prepared
        rejected = reply.get("rejected") or {}
        raise SqlRejected(
            str(rejected.get("message") or "the SQL was refused"),
            reason=str(rejected.get("reason") or "sql_rejected"),
            hint=rejected.get("hint"),
            suggestions=rejected.get("suggestions") or (),
        )
