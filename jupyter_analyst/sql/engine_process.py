"""The host's end of a DuckDB source's engine worker (``engine_worker.py``).

Which calls go through the worker: the model's SQL, i.e. everything ``QueryRunner`` runs on a
DuckDB source (the query's ``COPY`` to Parquet, the count of the rows past the row cap, the
``DESCRIBE`` of a result file whose types Arrow cannot name). That SQL is an attacker's: a
value it builds may compound past any size cap, and one engine call may take no interrupt.
In the worker, the first fails against the worker's own memory cap, not the host's memory;
the second ends when its worker is killed. The host's own look-ups (``list_tables``,
``describe_table``, ``schema``, the outline, ``find``, samples) run on the source's in-process
engine: their SQL is the product's, bounded by its own construction.

The worker is started when the model begins a ``run_sql`` or ``plan`` call (``warm``) or by
the source's first query, never by opening the source (a turn without SQL starts none), and
replaced, on the next query, when it has died: killed because a statement took no interrupt,
or ended by its memory cap. The queries of one source run in its one worker side by side
(each on a connection of its own, as they did in the host), sharing its memory limit as they
shared the host engine's; so killing it for one stubborn call ends the others running then,
each told why. Every statement of a dead worker fails with an error saying so; the next runs
in a new one.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import QueryFailed
from .sealed import MB, EngineLimits
from .workers import close_pipes

#: What a worker needs besides its engine's memory limit: the interpreter and DuckDB's library
#: (135 MiB of data segment once open), the threads of the statements it runs, and the values
#: a statement builds in one vector before DuckDB's buffer manager counts them. Measured with a
#: 256 MiB engine: a statement compounding values to 3.6 GB fails at 768 MiB, DuckDB's own
#: "could not allocate" (``tests/security/test_value_size.py``).
OVERHEAD_BYTES = 512 * MB
#: Each engine thread's stack, which the data segment counts.
THREAD_BYTES = 8 * MB
#: How long a new worker may take to import DuckDB and open the source.
STARTUP_TIMEOUT_S = 60.0
#: How often a query waiting for its worker to start looks whether it was given up.
_READY_POLL_S = 0.05

#: The host's environment variables a worker is given (and ``LC_*``).
_ENVIRONMENT = frozenset({"PATH", "PYTHONPATH", "PYTHONHOME", "LANG", "TZ", "TMPDIR", "HOME"})
_QUERY_HINT = "aggregate or filter in SQL, or build smaller values (no strings or lists grown by repetition)"


def data_limit(limits: EngineLimits) -> int:
    """The worker's data cap in bytes: its engine's memory limit, the fixed overhead and its
    threads' stacks.

    >>> data_limit(EngineLimits(memory_bytes=256 * 2**20, threads=2)) // 2**20
    784
    """
    return limits.memory() + OVERHEAD_BYTES + THREAD_BYTES * limits.thread_count()


class EngineJob:
    """One statement sent to a worker: its progress as the worker tells it, then its answer."""

    def __init__(self, job_id: int, process: _Process) -> None:
        self.id = job_id
        self.process = process
        self.progress = -1.0
        self.reply: dict[str, Any] | None = None
        self.done = threading.Event()

    def settle(self, reply: dict[str, Any]) -> None:
        self.reply = reply
        self.done.set()

    def rows(self) -> list[list[Any]]:
        """Wait for the answer: the rows fetched.

        Raises:
            QueryFailed: ``query_memory`` past the memory cap, ``query_failed`` on an engine
                error or when the worker died.
        """
        self.done.wait()
        reply = self.reply or {}
        if "rows" in reply:
            return reply["rows"]
        if "died" in reply:
            raise self.process.death_error()
        error = reply.get("error") or {}
        message = str(error.get("message") or "the engine failed")
        if error.get("kind") == "memory":
            raise memory_error(self.process.limits, message)
        raise QueryFailed(f"the query failed: {message}", reason="query_failed")


def memory_error(limits: EngineLimits, detail: str | None = None) -> QueryFailed:
    """The error of a statement that needed more memory than its engine may use.

    >>> memory_error(EngineLimits(memory_bytes=2**30)).message
    'the query needed more memory than its engine may use (the memory limit is 1024 MiB) and was stopped'
    """
    said = f" ({detail})" if detail else ""
    return QueryFailed(
        f"the query needed more memory than its engine may use (the memory limit is "
        f"{limits.memory() // MB} MiB) and was stopped{said}",
        reason="query_memory", hint=_QUERY_HINT,
    )


class _Process:
    """One worker process, the pipes to it and the statements it runs."""

    def __init__(self, opening: dict[str, Any], limits: EngineLimits) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        # Only what the interpreter and DuckDB need: none of the host's secrets (API keys,
        # database URLs) is in the environment of the process that runs the model's SQL.
        env = {k: v for k, v in os.environ.items() if k in _ENVIRONMENT or k.startswith("LC_")}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        env["JUPYTER_ANALYST_ENGINE_DATA_MB"] = str(data_limit(limits) // MB)
        env["JUPYTER_ANALYST_HOST_PID"] = str(os.getpid())
        self.limits = limits
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_analyst.sql.engine_worker"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            start_new_session=True,  # Ctrl-C in a terminal stops the host, which closes the pipes
        )
        self._write = threading.Lock()
        self._jobs: dict[int, EngineJob] = {}
        self._lock = threading.Lock()
        self.ready = threading.Event()
        self.failed: str | None = None
        self.dead = False
        self.killed_for: str | None = None  # why the host killed it, when it did
        self.status: int | None = None
        self._send({"open": opening})
        threading.Thread(target=self._read, name="engine-replies", daemon=True).start()

    def _send(self, message: dict[str, Any]) -> bool:
        assert self.proc.stdin is not None
        with self._write:
            try:
                self.proc.stdin.write(json.dumps(message).encode("ascii") + b"\n")
                self.proc.stdin.flush()
                return True
            except (OSError, ValueError):  # it died: the reader settles what waits
                return False

    def submit(self, job_id: int, sql: str, fetch: bool) -> EngineJob:
        job = EngineJob(job_id, self)
        with self._lock:
            if self.dead:
                job.settle({"died": True})
                return job
            self._jobs[job_id] = job
        self._send({"id": job_id, "sql": sql, "fetch": fetch})
        return job

    def interrupt(self, job: EngineJob) -> None:
        self._send({"interrupt": job.id})

    def wait_ready(self, timeout_s: float, given_up: threading.Event | None = None) -> None:
        """Wait until the worker is ready (at most ``timeout_s``; then it is killed), or until
        ``given_up`` is set: a query given up while its worker starts waits no longer."""
        deadline = time.monotonic() + timeout_s
        while not self.ready.wait(_READY_POLL_S):
            if given_up is not None and given_up.is_set():
                raise QueryFailed("the query was given up while its engine process started", reason="query_timeout")
            if time.monotonic() >= deadline:
                self.kill("it did not start in time")
                self.ready.wait(5)
                break
        if self.failed is not None or self.dead:
            raise QueryFailed(
                f"the query engine could not be started: {self.failed or self.death_reason()}",
                reason="query_failed",
                hint=f"check that `{sys.executable} -m jupyter_analyst.sql.engine_worker` runs",
            )

    def _read(self) -> None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        pending = b""
        try:
            while chunk := os.read(fd, 1 << 16):
                pending += chunk
                while b"\n" in pending:
                    line, _, pending = pending.partition(b"\n")
                    try:
                        reply = json.loads(line)
                    except ValueError:  # not a reply of the protocol's: the worker is not to be trusted
                        self.kill("it wrote something that is not a reply")
                        continue
                    self._take(reply)
        except OSError:  # its pipe went: as if it had closed
            pass
        try:
            self.status = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover - its stdout closed but it runs on
            self.proc.kill()
            self.status = self.proc.wait()
        with self._lock:
            self.dead = True
            jobs, self._jobs = list(self._jobs.values()), {}
        self.ready.set()
        for job in jobs:
            job.settle({"died": True})
        close_pipes(self.proc)

    def _take(self, reply: dict[str, Any]) -> None:
        if "ready" in reply:
            self.ready.set()
            return
        if "failed" in reply:
            self.failed = str((reply["failed"] or {}).get("message") or "it failed to open")
            self.ready.set()
            return
        with self._lock:
            job = self._jobs.get(int(reply.get("id", -1)))
            if job is not None and "progress" not in reply:
                self._jobs.pop(job.id, None)
        if job is None:
            return
        if "progress" in reply:
            job.progress = float(reply["progress"])
        else:
            job.settle(reply)

    def kill(self, why: str) -> None:
        """End the process (its statements fail; the reader settles them)."""
        if self.killed_for is None:
            self.killed_for = why
        try:
            self.proc.kill()
        except OSError:
            pass

    def death_reason(self) -> str:
        status = self.status
        if status is not None and status < 0:
            try:
                return f"killed by {signal.Signals(-status).name}"
            except ValueError:
                return f"killed by signal {-status}"
        return f"exit status {status}"

    def death_error(self) -> QueryFailed:
        """The error of a statement whose worker died under it."""
        if self.killed_for is not None:
            return QueryFailed(
                f"the query's engine process was ended ({self.killed_for}) while the query ran",
                reason="query_failed", hint="run it again: a new engine process runs the next query",
            )
        if self.status == -signal.SIGABRT:
            # An allocation the memory cap refused where DuckDB cannot raise: a bad_alloc no
            # one catches ends the process through std::terminate.
            return memory_error(self.limits, f"its engine process ended: {self.death_reason()}")
        return QueryFailed(
            f"the query's engine process ended while the query ran ({self.death_reason()})",
            reason="query_failed", hint="run it again: a new engine process runs the next query",
        )


class EngineProcess:
    """One DuckDB source's worker: started on first use, replaced once it has died."""

    def __init__(self, opening: dict[str, Any], private: Path, limits: EngineLimits | None) -> None:
        #: The worker's private folder (its result pipes, its spill files), inside the source's.
        self.private = private
        private.mkdir(mode=0o700, exist_ok=True)
        self.limits = limits or EngineLimits()
        # The host's figures, so that the worker's engine has the very limits its own would.
        figures = {"memory": self.limits.memory(), "threads": self.limits.thread_count(),
                   "spill": self.limits.spill_bytes}
        self._opening = {**opening, "private": str(private), "limits": figures}
        self._lock = threading.Lock()
        self._process: _Process | None = None
        self._ids = itertools.count(1)
        self._closed = False
        self.started = 0
        """How many worker processes this source has started."""

    def _current(self) -> _Process:
        with self._lock:
            if self._closed:
                raise QueryFailed("the data source was closed", reason="query_failed")
            process = self._process
            if process is None or process.dead or process.killed_for is not None:
                # The dead worker's spill files go with it; the folder (and any result pipe) stays.
                shutil.rmtree(self.private / "spill", ignore_errors=True)
                self.private.mkdir(mode=0o700, exist_ok=True)
                process = self._process = _Process(self._opening, self.limits)
                self.started += 1
        return process

    def warm(self) -> None:
        """Start the worker now, without waiting for it, so that the first query does not wait
        for it to import DuckDB (never raises: a worker that cannot start fails that query)."""
        try:
            self._current()
        except QueryFailed:
            pass

    def submit(self, sql: str, *, fetch: bool = False, given_up: threading.Event | None = None) -> EngineJob:
        """Send one statement to the worker (started, or replaced, first; waits until it is
        ready, or until ``given_up`` is set).

        Raises:
            QueryFailed: ``query_failed`` when no worker could be started, ``query_timeout``
                when ``given_up`` was set while it started.
        """
        process = self._current()
        process.wait_ready(STARTUP_TIMEOUT_S, given_up)
        return process.submit(next(self._ids), sql, fetch)

    def run(self, sql: str, *, fetch: bool = False) -> list[list[Any]]:
        """Run one statement and wait for its rows (blocking)."""
        return self.submit(sql, fetch=fetch).rows()

    @staticmethod
    def interrupt(job: EngineJob) -> None:
        """Ask the engine to stop the job's statement (it stops between vectors)."""
        job.process.interrupt(job)

    @staticmethod
    def kill(job: EngineJob, why: str) -> None:
        """End the job's worker: the statement took no interrupt. The next statement starts
        a new one."""
        job.process.kill(why)

    def pid(self) -> int | None:
        """The running worker's process id (tests), if one runs."""
        with self._lock:
            process = self._process
        return None if process is None or process.dead else process.proc.pid

    def close(self) -> None:
        """Stop the worker (its statements fail); waits until it is gone."""
        with self._lock:
            self._closed = True
            process, self._process = self._process, None
        if process is not None:
            process.kill("its data source was closed")
            try:
                process.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
                pass

