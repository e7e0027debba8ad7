"""The model's statements on one DuckDB source, in a process of their own:
``python -m jupyter_analyst.sql.engine_worker``.

DuckDB's ``memory_limit`` bounds its buffers, not the values a function builds in one vector:
values within the size cap (``prepare/sizes.py``) still compound (``s||s||s||s`` over CTEs, a
``string_agg`` of long strings) to gigabytes. In the host that memory is the server's, shared
by every user. Here it is this process's, capped by the operating system (``RLIMIT_DATA``, set
by the host from the source's ``EngineLimits``): an allocation past it fails here, and the
host is told (``{"error": {"kind": "memory"}}``) or sees this process end.

The protocol is JSON lines. The first line on stdin opens the engine, sealed as the host's
own (``sealing.seal``: the source attached read-only, no file reachable but its data
files and a private folder, limits locked):
``{"open": {"database", "name", "files", "private", "limits": {"memory", "threads", "spill"}}}``, answered ``{"ready": true}``
or ``{"failed": {"message"}}``. Then each ``{"id": n, "sql": statement, "fetch": bool}`` runs
on a connection of its own, in a thread of its own, and is answered ``{"id": n, "rows": [...]}``
(``fetch``: the rows as JSON, else ``[]``) or ``{"id": n, "error": {"message", "kind"}}``
(``kind``: ``memory``, ``interrupted`` or ``engine``); while it runs, ``{"id": n, "progress": p}``
says the engine's estimate whenever it changes. ``{"interrupt": n}`` interrupts job ``n``.
The process exits when its stdin closes, and on Linux is killed when the host dies.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

#: Connections that report a running statement's progress (opened before the engine is
#: locked, as the host's were): as many as the source's queries that may run at once.
SESSIONS = 16
#: How often each running statement's progress is read.
PROGRESS_EVERY_S = 0.05


def limit_data(megabytes: int) -> None:
    """Cap the data segment (heap and private mappings, what values are built in), so that
    a statement that needs more fails in this process, not the host's."""
    if megabytes <= 0:
        return
    try:
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        limit = megabytes * 2**20
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_DATA, (limit, hard))
    except (ImportError, ValueError, OSError):  # not on this platform, or not allowed: no cap
        pass


class Engine:
    """The sealed DuckDB instance and the statements running on it."""

    def __init__(self, opening: dict[str, Any], send) -> None:
        import duckdb

        from .sealing import DUCKDB_CONNECT_CONFIG, literal, seal

        self.send = send
        self.conn = duckdb.connect(":memory:", config=DUCKDB_CONNECT_CONFIG)
        name = _identifier(opening["name"])
        self.conn.execute(f"ATTACH {literal(opening['database'])} AS {name} (READ_ONLY)")
        self.conn.execute(f"USE {name}")
        self._use = f"USE {name}"
        private = Path(opening["private"])
        limits = opening["limits"]
        self._sessions = seal(self.conn, private, files=[Path(f) for f in opening["files"]], memory=limits["memory"],
                              threads=limits["threads"], spill=limits["spill"], sessions=SESSIONS)
        for session in self._sessions:
            session.execute(self._use)
        self._lock = threading.Lock()
        self._running: dict[int, Any] = {}
        self._told: dict[int, float] = {}
        threading.Thread(target=self._tell_progress, name="engine-progress", daemon=True).start()

    def start(self, job: dict[str, Any]) -> None:
        """Run one job in a thread of its own."""
        threading.Thread(target=self._run, args=(job,), name=f"engine-job-{job['id']}", daemon=True).start()

    def interrupt(self, job_id: int) -> None:
        with self._lock:
            cursor = self._running.get(job_id)
        if cursor is not None:
            cursor.interrupt()

    def _cursor(self) -> Any:
        with self._lock:
            if self._sessions:
                return self._sessions.pop()
            cursor = self.conn.cursor()  # past the sessions: runs, without a progress estimate
        cursor.execute(self._use)
        return cursor

    def _run(self, job: dict[str, Any]) -> None:
        import duckdb

        job_id = int(job["id"])
        cursor = self._cursor()
        with self._lock:
            self._running[job_id] = cursor
        try:
            result = cursor.execute(job["sql"])
            rows = result.fetchall() if job.get("fetch") else []
            reply: dict[str, Any] = {"id": job_id, "rows": [list(row) for row in rows]}
        except MemoryError:
            reply = _error(job_id, "memory", "out of memory")
        except duckdb.OutOfMemoryException as exc:
            reply = _error(job_id, "memory", _first_line(exc))
        except duckdb.InterruptException as exc:
            reply = _error(job_id, "interrupted", _first_line(exc))
        except Exception as exc:  # noqa: BLE001 - every failure of a statement is an answer
            kind = "memory" if "bad_alloc" in str(exc) or "Out of Memory" in str(exc) else "engine"
            reply = _error(job_id, kind, _first_line(exc))
        finally:
            with self._lock:
                self._running.pop(job_id, None)
                self._told.pop(job_id, None)
                self._sessions.append(cursor)
        self.send(reply)

    def _tell_progress(self) -> None:
        while True:
            time.sleep(PROGRESS_EVERY_S)
            with self._lock:
                running = list(self._running.items())
            for job_id, cursor in running:
                try:
                    value = float(cursor.query_progress())
                except Exception:  # noqa: BLE001 - the statement ended meanwhile: nothing to tell
                    continue
                with self._lock:
                    if job_id not in self._running or self._told.get(job_id) == value:
                        continue
                    self._told[job_id] = value
                self.send({"id": job_id, "progress": value})


def _error(job_id: int, kind: str, message: str) -> dict[str, Any]:
    return {"id": job_id, "error": {"kind": kind, "message": message}}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def serve(jobs: TextIO, replies: TextIO) -> None:
    """Open the engine, then run jobs until ``jobs`` ends."""
    lock = threading.Lock()

    def send(reply: dict[str, Any]) -> None:
        line = json.dumps(reply, default=str) + "\n"  # ASCII JSON: one line, whatever the values hold
        with lock:
            replies.write(line)
            replies.flush()

    try:
        engine = Engine(json.loads(jobs.readline())["open"], send)
    except Exception as exc:  # noqa: BLE001 - the host says why the engine could not open
        send({"failed": {"message": _first_line(exc)}})
        return
    send({"ready": True})
    for line in jobs:
        job = json.loads(line)
        if "interrupt" in job:
            engine.interrupt(int(job["interrupt"]))
        else:
            engine.start(job)


def main() -> None:
    """Serve on stdin/stdout; anything else that prints goes to stderr."""
    from .prepare_worker import _die_with_host

    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="ascii")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _die_with_host()
    limit_data(int(os.environ.get("JUPYTER_ANALYST_ENGINE_DATA_MB") or 0))
    serve(sys.stdin, replies)
    # Nothing to keep: no engine's shutdown (a statement still running would hold it up).
    os._exit(0)


if __name__ == "__main__":
    main()
