"""Verifications of threads' audit notebooks: started by one request, run in the background,
followed through their own resource.

Re-executing a notebook takes seconds (a kernel starts, every step runs again). A request
that waited for it would hold its connection open with nothing to say, and a client's
timeout (or a loaded machine) would cut it. ``POST threads/{id}/verify`` therefore answers
202 at once with a verification; ``GET threads/{id}/verifications/{vid}`` says how it goes
and, once done, gives the report of ``jupyter analyst verify --json`` as the CLI made it:
only the two fields that name the server's side (the notebook's temporary path, the
source's spec) are replaced by what the client knows them as. The report's verdict is the
report's own.

A re-answer (``reanswer``) is a verification too: ``verify --reanswer --json`` re-runs the
notebook the same way and restates its answers' cited numbers on today's data; its resource
carries the restated answers (``reanswer``) beside the re-run's report.

Verifications live in the server's memory: one at a time per thread, a few at a time per
server (each runs a kernel), the last finished ones kept until newer ones push them out.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import secrets
import signal
import sys
import tempfile
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from ..errors import AnalystError, ConfigError, StorageError

log = logging.getLogger(__name__)

Status = Literal["queued", "running", "done", "failed"]
Kind = Literal["verify", "reanswer"]

#: Verifications running at once on one server; the others wait their turn, queued.
MAX_RUNNING = 2
#: Finished verifications kept to be read; past it the oldest finished go first.
MAX_KEPT = 256
#: Seconds a client is told to wait before it asks again (``Retry-After``).
POLL_S = 1


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def verify_in_subprocess(path: Path, source: str, *, reanswer: bool = False) -> dict[str, Any]:
    """``jupyter analyst verify --json`` on ``path`` (with ``--reanswer``: its answers restated):
    the CLI's own run, in a process of its own, so papermill's kernel and event loop stay out
    of the server's. Cancelled, the process and everything it started (its kernel) are killed."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "jupyter_analyst.cli", "verify", str(path), "--db", source, "--json",
        *(["--reanswer"] if reanswer else []),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=path.parent, start_new_session=True,
    )
    try:
        out, err = await process.communicate()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        raise
    try:
        report = json.loads(out)
    except ValueError:
        report = None
    if not isinstance(report, dict) or ("answers" if reanswer else "checks") not in report:
        said = err.decode("utf-8", "replace").strip().splitlines()
        raise StorageError(f"the notebook could not be verified: {said[-1] if said else f'exit {process.returncode}'}",
                           reason="verify_failed", hint="run `jupyter analyst verify` on it for the whole report")
    return report


async def verify_notebook_text(nb: dict[str, Any], source: str) -> dict[str, Any]:
    """The report of verifying the notebook ``nb`` against ``source`` (a spec), from a
    temporary folder of its own that is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="analyst-verify-") as tmp:
        path = Path(tmp) / "notebook.ipynb"
        path.write_text(json.dumps(nb), encoding="utf-8")
        return await verify_in_subprocess(path, source)


@dataclass
class Verification:
    """One verification of a thread's notebook, as its resource shows it."""

    verification_id: str
    thread_id: str
    notebook: str | None
    """The notebook's path in the caller's folder, or ``None`` for a fresh export."""
    source: str | None
    """The source it runs on, by configured name."""
    kind: Kind = "verify"
    status: Status = "queued"
    created_at: str = field(default_factory=_now)
    started_at: str | None = None
    finished_at: str | None = None
    report: dict[str, Any] | None = None
    reanswer: dict[str, Any] | None = None
    """A re-answer's restated answers, once done."""
    error: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return self.status in ("done", "failed")

    def to_json(self) -> dict[str, Any]:
        return {
            "verification_id": self.verification_id, "thread_id": self.thread_id, "status": self.status,
            "kind": self.kind, "notebook": self.notebook, "source": self.source, "created_at": self.created_at,
            "started_at": self.started_at, "finished_at": self.finished_at, "report": self.report,
            "reanswer": self.reanswer, "error": self.error,
        }


class Verifications:
    """The server's verifications: started, run a few at a time, kept to be read."""

    def __init__(self, *, max_running: int = MAX_RUNNING, max_kept: int = MAX_KEPT) -> None:
        self.max_kept = max_kept
        self._slots = asyncio.Semaphore(max_running)
        self._items: OrderedDict[str, Verification] = OrderedDict()
        #: The verification not yet finished on each thread.
        self._unfinished: dict[str, str] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}

    def start(self, thread_id: str, *, notebook: str | None, source: str | None,
              run: Callable[[], Awaitable[dict[str, Any]]], kind: Kind = "verify") -> Verification:
        """Queue ``run`` (which makes the report; for a re-answer, the re-answer with the
        report as its ``verify``) as a verification of the thread's notebook.

        Raises:
            ConfigError: ``verify_in_progress`` while one of the thread's is not finished
                (its id in ``verification_id``).
        """
        running = self._unfinished.get(thread_id)
        if running is not None:
            raise ConfigError("a verification of this thread is already under way", reason="verify_in_progress",
                              hint="follow it: GET threads/{thread_id}/verifications/{verification_id}",
                              verification_id=running)
        verification = Verification(verification_id=f"ver_{secrets.token_hex(8)}", thread_id=thread_id,
                                    notebook=notebook, source=source, kind=kind)
        self._items[verification.verification_id] = verification
        self._unfinished[thread_id] = verification.verification_id
        self._forget_old()
        task = asyncio.get_running_loop().create_task(self._run(verification, run))
        self._tasks[verification.verification_id] = task
        task.add_done_callback(lambda _: self._tasks.pop(verification.verification_id, None))
        return verification

    def get(self, thread_id: str, verification_id: str) -> Verification:
        """The thread's verification (``ConfigError`` ``verification_not_found`` otherwise)."""
        verification = self._items.get(verification_id)
        if verification is None or verification.thread_id != thread_id:
            raise ConfigError(f"unknown verification {verification_id!r}", reason="verification_not_found",
                              hint="start one with POST threads/{thread_id}/verify (the server keeps the last "
                                   f"{self.max_kept} finished, until it restarts)")
        return verification

    async def wait(self, verification_id: str) -> Verification:
        """The verification once finished (for callers in the server's process)."""
        verification = self._items[verification_id]
        task = self._tasks.get(verification_id)
        if task is not None:
            await asyncio.shield(task)
        return verification

    async def _run(self, verification: Verification, run: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        try:
            async with self._slots:
                verification.status, verification.started_at = "running", _now()
                report = await run()
            if verification.kind == "reanswer":
                restated, report = report, report.pop("verify")
                report.pop("causes", None)  # each check says its own
                restated["notebook"], restated["source"] = verification.notebook, verification.source
                verification.reanswer = restated
            # What names the server's side (a temporary path, a source's spec) is replaced
            # by what the client named; the rest is the report as the CLI made it.
            report["notebook"], report["source"] = verification.notebook, verification.source
            verification.report, verification.status = report, "done"
        except AnalystError as exc:
            verification.error, verification.status = _error_body(exc), "failed"
        except asyncio.CancelledError:
            verification.error = {"message": "the server stopped before the verification finished",
                                  "reason": "verify_cancelled", "hint": "start it again"}
            verification.status = "failed"
            raise
        except Exception as exc:  # a bug: logged whole, told in one line
            log.exception("verification %s of %s failed", verification.verification_id, verification.thread_id)
            verification.error = {"message": f"the verification failed: {type(exc).__name__}",
                                  "reason": "verify_failed", "hint": "see the server's log"}
            verification.status = "failed"
        finally:
            verification.finished_at = _now()
            if self._unfinished.get(verification.thread_id) == verification.verification_id:
                del self._unfinished[verification.thread_id]
            self._forget_old()

    def _forget_old(self) -> None:
        finished = [v for v in self._items.values() if v.finished]
        for old in finished[: max(0, len(finished) - self.max_kept)]:
            del self._items[old.verification_id]

    async def close(self) -> None:
        """Stop the verifications under way (their processes are killed)."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _error_body(error: AnalystError) -> dict[str, Any]:
    body = error.to_dict()
    return {"message": body.pop("message"), "reason": body.pop("reason"), "hint": body.pop("hint", None), **body}
