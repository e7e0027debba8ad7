"""A worker process that prepares SQL: ``python -m jupyter_analyst.sql.prepare_worker``.

It reads one JSON job per line on stdin (``sql``, ``schema`` or the ``schema_key`` of one
sent before, ``dialect``, ``early``) and answers each with one JSON line: ``{"prepared": {...}}`` or
``{"rejected": {...}}``; a job with ``early`` set is first answered ``{"cleared": {...}}`` as
soon as its SQL has passed the read-only guard (see ``prepare_sql``'s ``on_cleared``), so the
host may start running it while the rest is checked. Its first line says ``{"ready": true}``.
It never stops on a job: every failure of the preparation is an answer. The host kills it when a job runs past the
time limit (see ``preparer.py``); it exits when its stdin closes, and on Linux is killed
when the host process dies.
"""

from __future__ import annotations

import json
import os
import sys
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TextIO


def _limit_memory() -> None:
    """Cap the address space, so that a query that needs too much fails here, not the host."""
    megabytes = int(os.environ.get("JUPYTER_ANALYST_WORKER_MEMORY_MB") or 0)
    if megabytes <= 0:
        return
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = megabytes * 1024 * 1024
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):  # not on this platform, or not allowed: no cap
        pass


def _die_with_host() -> None:
    """On Linux, be killed when the host process goes, even in the middle of a long job."""
    host = int(os.environ.get("JUPYTER_ANALYST_HOST_PID") or 0)
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the closed stdin ends the worker between jobs
        return
    if host and os.getppid() != host:  # the host went before the signal was armed
        os._exit(0)


#: Schemas this worker has been sent, by key, most recent last (see ``preparer.py``).
_schemas: OrderedDict[str, tuple[dict[str, Any], Any]] = OrderedDict()
SCHEMAS_KEPT = 8


def _schema(job: dict[str, Any]) -> tuple[dict[str, Any], Any] | None:
    """The job's schema and its built form: sent with the job, or kept from an earlier one."""
    from .prepare import mapping_schema

    key = job.get("schema_key")
    if job.get("schema") is not None:
        entry = (job["schema"], mapping_schema(job["schema"]))
        if key:
            _schemas[key] = entry
            while len(_schemas) > SCHEMAS_KEPT:
                _schemas.popitem(last=False)
        return entry
    entry = _schemas.get(key) if key else None
    if entry is not None:
        _schemas.move_to_end(key)
    return entry


def answer(job: dict[str, Any], early: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """The reply to one job; never raises. A job may name a schema sent before by its key
    instead of carrying it: ``{"schema_missing": true}`` asks for it when it is not kept.
    ``early`` is given the ``cleared`` reply of a job that asks for one."""
    from ..errors import SqlRejected
    from .prepare import prepare_sql

    try:
        known = _schema(job)
        if known is None:
            return {"schema_missing": True}
        schema, mapping = known
        prepared = prepare_sql(
            job["sql"], schema=schema, dialect=job["dialect"],
            mapping=mapping,
            on_cleared=(lambda cleared: early({"cleared": cleared.model_dump()}))
            if early is not None and job.get("early") else None,
        )
    except SqlRejected as exc:
        return {"rejected": {"message": exc.message, "reason": exc.reason, "hint": exc.hint,
                             "suggestions": exc.suggestions}}
    except Exception as exc:  # noqa: BLE001 - prepare_sql maps everything it knows; this is the last resort
        return {"rejected": {"message": f"the SQL could not be checked ({type(exc).__name__})",
                             "reason": "sql_unsupported"}}
    return {"prepared": prepared.model_dump()}


def serve(jobs: TextIO, replies: TextIO) -> None:
    """Answer jobs until ``jobs`` ends."""
    def send(reply: dict[str, Any]) -> None:
        # ASCII JSON: one line, whatever the text holds.
        replies.write(json.dumps(reply) + "\n")
        replies.flush()

    send({"ready": True})
    for line in jobs:
        try:
            reply = answer(json.loads(line), send)
        except (ValueError, KeyError, TypeError) as exc:
            reply = {"rejected": {"message": f"a malformed job: {exc}", "reason": "sql_unsupported"}}
        except MemoryError:
            reply = {"rejected": {"message": "the SQL needs more memory than the checker may use",
                                  "reason": "sql_too_complex"}}
        send(reply)


def main() -> None:
    """Serve on stdin/stdout; anything else that prints goes to stderr."""
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="ascii")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _die_with_host()
    _limit_memory()
    # Imported before saying ready, so that the time limit counts only the work.
    from . import prepare  # noqa: F401

    serve(sys.stdin, replies)


if __name__ == "__main__":
    main()
