"""``verify`` for a client agent: the thread's audit notebook re-executed in a process of its
own (``jupyter analyst verify --json``), so that a client that cancels the call stops it.

In this process the re-execution would be a blocking call in a worker thread (papermill
drives its kernel from there), which a cancelled task cannot stop: it would run to its end,
kernel and all. A process is interrupted as a terminal's Ctrl-C does (its kernel shut down
on the way out, and bubblewrap's ``--die-with-parent`` ends a kernel it leaves), and killed
when it does not end in time.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

from ..errors import AnalystError
from ..notebooks import VerifyReport

#: How long an interrupted verification has to shut its kernel down before it is killed.
STOP_S = 10.0


async def verify_apart(notebook: Path, source: str | None) -> VerifyReport:
    """The report of ``notebook`` re-executed against ``source``, in a process of its own;
    cancelling the caller's task stops that process.

    Raises:
        AnalystError: the verification could not run (its reason, as the command said it).
    """
    command = [sys.executable, "-m", "jupyter_analyst.cli", "verify", str(notebook), "--json"]
    if source:
        command.append(f"--db={source}")  # one argument: a source that starts with '-' is no option
    process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.DEVNULL,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await process.communicate()
    except asyncio.CancelledError:
        await _stop(process)
        raise
    try:
        body = json.loads(out)
    except ValueError:
        body = None
    if isinstance(body, dict) and "verdict" in body:
        return VerifyReport.model_validate({k: v for k, v in body.items() if k in VerifyReport.model_fields})
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        raise AnalystError(str(error["message"]), reason=str(error.get("reason") or "verify_failed"),
                           hint=error.get("hint"))
    last = (err.decode(errors="replace").strip().splitlines() or [f"exit status {process.returncode}"])[-1]
    raise AnalystError(f"the notebook could not be verified: {last}", reason="verify_failed")


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Interrupt ``process`` and wait for it; kill it when it does not end in :data:`STOP_S`."""
    if process.returncode is not None:
        return
    process.send_signal(signal.SIGINT)
    try:
        await asyncio.wait_for(process.wait(), STOP_S)
    except TimeoutError:
        process.kill()
        await process.wait()
