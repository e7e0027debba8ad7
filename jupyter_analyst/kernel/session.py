"""A kernel session: one ipykernel for one thread, driven through jupyter_client's async API."""

from __future__ import annotations

import asyncio
import keyword
import os
import queue
import shutil
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from ..errors import InvalidArguments, KernelError
from . import handoff, iopub
from .cells import FIGURE_NAMES_CODE, REAP_CHILDREN, SETUP_CODE, STILL_CODE
from .error_hints import ERROR_HINTS_CODE
from .iopub import Collector, ErrorInfo, Inbound
from .launcher import KernelLauncher, LocalKernelLauncher
from .loader import load_code
from .outputs import MB, OutputCaps
from .sandbox import SANDBOX_KERNEL, SETTINGS_ENV, SandboxPolicy, SandboxSettings
from .workdir import Entry, scan

__all__ = ["SETUP_CODE", "ErrorInfo", "ExecutionResult", "KernelSession", "changed_outputs", "kernel_environment"]

#: What loading raises when the kernel's code removed the loader module.
_LOADER_GONE = frozenset({"ModuleNotFoundError", "ImportError", "AttributeError", "KeyError"})
#: How often a silent kernel is checked for being alive while waiting for output.
_LIVENESS_POLL_S = 0.5
#: What a Jupyter server's websocket says of a kernel that died and was restarted (or not).
_REPLACED = frozenset({"restarting", "autorestarting", "dead"})
#: The longest pause between looks at a remote kernel's messages (see _next_iopub).
_REMOTE_POLL_S = 0.02


class ExecutionResult(BaseModel):
    """Everything one execution produced."""

    status: Literal["ok", "error", "timeout", "died", "runaway"]
    """``runaway``: the host stopped the kernel after the step (see ``stopped``)."""
    stdout: str = ""
    stderr: str = ""
    result: str | None = None
    outputs: list[dict[str, Any]] = []
    images: list[tuple[str, bytes]] = []
    figure_labels: list[str] = []
    """Each image's label (its title or variable, as the kernel said; empty: none), in order."""
    new_files: list[Path] = []
    """Plain files under ``outputs/`` that the execution made or changed (relative paths)."""
    refused_files: list[tuple[str, str]] = []
    """Other new names under ``outputs/`` (links, FIFOs, hard links) and why they are ignored."""
    error: ErrorInfo | None = None
    elapsed_s: float = 0.0
    execution_count: int | None = None
    notes: list[str] = []
    """What the host dropped or refused of the kernel's messages, or did to the kernel."""
    stopped: str | None = None
    """Why the host stopped the kernel after the step: its code still ran after the step
    ended (a thread, a timer, a false end-of-step message: see quiescence.py)."""


def changed_outputs(before: dict[str, Entry], after: dict[str, Entry]) -> tuple[list[Path], list[tuple[str, str]]]:
    """What changed under ``outputs/``: plain files, and the other names with why they are ignored."""
    files: list[Path] = []
    refused: list[tuple[str, str]] = []
    for rel in sorted(after):
        entry = after[rel]
        old = before.get(rel)
        # An entry the scan could not look into is told every time: what lies there is unseen.
        if old is not None and old.signature == entry.signature and old.mode == entry.mode and entry.note is None:
            continue
        problem = entry.problem()
        if problem is None:
            files.append(Path(rel))
        else:
            refused.append((entry.relpath, problem))  # as printable text
    return files, refused


class KernelSession:
    """One kernel for one thread; an async context manager owns its life."""

    def __init__(
        self,
        workdir: Path,
        *,
        launcher: KernelLauncher | None = None,
        sandbox: SandboxPolicy | None = None,
        readable: Sequence[Path] = (),
        datasets_root: Path | None = None,
        kernel_name: str | None = None,
        startup_timeout: float = 60.0,
        output_cap: int = 1_000_000,
        env: Mapping[str, str] | None = None,
        start_attempts: int = 2,
        returned_bytes: int = 256 * 2**20,
    ) -> None:
        # The folder is the host's to make (its parent is the host's); what is inside it is
        # the kernel's, and the host creates nothing there (the set-up cell makes outputs/).
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.launcher = launcher or LocalKernelLauncher()
        #: The kernelspec on a gateway whose kernels share no disk with us (``None``: a local
        #: kernel). Datasets and files then travel over the kernel protocol (handoff.py).
        self.remote_kernel: str | None = getattr(self.launcher, "remote_kernel", None)
        #: Bytes of files a remote kernel's step may send back.
        self.returned_bytes = returned_bytes
        # The datasets this kernel may read: a host-owned folder mounted read-only, into
        # which the thread's blobs are linked one by one (never the whole blob store).
        self.datasets_dir: Path | None = None
        if datasets_root is not None and self.remote_kernel is None:
            self.datasets_dir = Path(datasets_root) / f"k-{uuid.uuid4().hex[:16]}"
            readable = [*readable, self.datasets_dir]
        self.sandbox = sandbox if sandbox is not None else SandboxPolicy()
        # A gateway's kernel is isolated by the gateway's process proxy, never by our sandbox.
        self.kernel_name = kernel_name or self.remote_kernel or (SANDBOX_KERNEL if self.sandbox.enabled else "python3")
        self.startup_timeout = startup_timeout
        #: A failed start is tried again this many times in all (once more by default).
        self.start_attempts = max(1, start_attempts)
        self.output_cap = output_cap
        self.env = dict(env) if env is not None else kernel_environment()
        # Read by the sandbox provisioner and removed before the kernel starts.
        settings = SandboxSettings(policy=self.sandbox, readable=[str(p) for p in readable])
        self.env[SETTINGS_ENV] = settings.model_dump_json()
        self._manager: Any = None
        self._client: Any = None
        self._lock = asyncio.Lock()
        #: Whether this kernel process has the dataset loader (see loader.py).
        self._loader_defined = False

    def adopt(self, workdir: Path) -> None:
        """Follow the working folder to a new place (it was renamed under a running kernel)."""
        self.workdir = Path(workdir)

    def stage(self, fingerprint: str, blob: Path) -> Path:
        """Make one blob readable by this kernel; returns the path the kernel reads it at.

        The blob is hard-linked into the kernel's datasets folder (a copy across file
        systems), so the kernel sees its own thread's data and nothing else of the store.
        """
        if self.datasets_dir is None:
            return blob
        dest = self.datasets_dir / fingerprint.removeprefix("sha256:")
        if dest.exists():
            return dest
        tmp = self.datasets_dir / f".tmp-{uuid.uuid4().hex[:8]}"
        try:
            os.link(blob, tmp)
        except OSError:
            shutil.copyfile(blob, tmp)
            os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
        return dest

    @property
    def remote(self) -> bool:
        """Whether the kernel shares no disk with us (it runs on a gateway)."""
        return self.remote_kernel is not None

    @property
    def kernel_id(self) -> str | None:
        """The kernel's id in the Jupyter server's kernel manager, when it started there."""
        return getattr(self._manager, "_analyst_kernel_id", None) if self._manager is not None else None

    @property
    def is_started(self) -> bool:
        """Whether a kernel has been started and not shut down."""
        return self._client is not None

    async def __aenter__(self) -> KernelSession:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.shutdown()

    async def start(self) -> None:
        """Start the kernel and run the set-up cell (no-op when started).

        A start that fails (the kernel exits, never answers, or its set-up fails) leaves
        nothing running and is tried once more.

        Raises:
            KernelError: ``kernel_start_failed`` after the last attempt, with each cause.
        """
        if self.is_started:
            return
        causes: list[str] = []
        for _ in range(self.start_attempts):
            try:
                await self._start_once()
                return
            except KernelError as exc:
                causes.append(exc.message)
                refused = exc.reason == "sandbox_unreachable"  # the same again on a second try
            # Nothing half-started stays behind: the next attempt (or step) starts afresh.
            await self.shutdown()
            if refused:
                break
        attempts = f"{len(causes)} attempts" if len(causes) > 1 else "1 attempt"
        raise KernelError(
            f"the kernel could not start ({attempts}): {causes[-1]}", reason="kernel_start_failed",
            hint="run `jupyter analyst doctor` to see what works on this machine", causes=causes,
        )

    async def _start_once(self) -> None:
        self._loader_defined = False
        if self.datasets_dir is not None:
            self.datasets_dir.mkdir(parents=True, mode=0o755, exist_ok=True)
        try:
            self._manager, self._client = await asyncio.wait_for(
                self.launcher.launch(self.kernel_name, self.workdir, self.env), self.startup_timeout
            )
        except (TimeoutError, asyncio.TimeoutError) as exc:
            raise KernelError(f"it did not answer within {self.startup_timeout:g} s") from exc
        except KernelError:
            raise
        except Exception as exc:
            raise KernelError(str(exc) or type(exc).__name__) from exc
        setup_code = (
            (handoff.setup_code() + SETUP_CODE if self.remote else SETUP_CODE + STILL_CODE) + FIGURE_NAMES_CODE + ERROR_HINTS_CODE
        )
        # Not through execute(): a runaway step's restart starts the kernel while it holds the lock.
        setup = await self._execute(setup_code, self.startup_timeout)  # records the kernel's idle shape
        if setup.status != "ok":
            detail = setup.error.short() if setup.error else setup.status
            raise KernelError(f"the kernel's set-up failed: {detail}")

    async def shutdown(self) -> None:
        """Stop the kernel; never raises, also for a dead kernel."""
        manager, client = self._manager, self._client
        self._manager = self._client = None
        if self.datasets_dir is not None:
            shutil.rmtree(self.datasets_dir, ignore_errors=True)  # the links, not the blobs
        if client is not None:
            try:
                client.stop_channels()
            except Exception:
                pass
        if manager is not None:
            try:
                await self.launcher.stop(manager)
            except Exception:
                pass

    def _provisioner(self) -> Any:
        return getattr(self._manager, "provisioner", None)

    def reap_strays(self) -> int:
        """Kill processes the last execution left running in the sandbox."""
        reap = getattr(self._provisioner(), "reap_strays", None)
        return reap() if reap is not None else 0

    def oom_killed(self) -> bool:
        """Whether the kernel was stopped by its memory cap."""
        check = getattr(self._provisioner(), "oom_killed", None)
        return bool(check()) if check is not None else False

    async def is_alive(self) -> bool:
        """Whether the kernel process is running."""
        if self._manager is None:
            return False
        try:
            return bool(await self._manager.is_alive())
        except Exception:
            return False

    async def interrupt(self) -> None:
        """Interrupt the running execution."""
        self._resume()  # a frozen kernel would take the interrupt only with its next step
        if self._manager is not None:
            await self._manager.interrupt_kernel()

    async def restart(self) -> None:
        """A fresh kernel in place of this one (after a death or on demand)."""
        await self.shutdown()
        await self.start()

    async def execute(self, code: str, *, timeout: float = 120.0, caps: OutputCaps | None = None,
                      on_stream: Callable[[str, str], None] | None = None) -> ExecutionResult:
        """Run ``code``; collect its streams, displays, result and error, within ``caps``;
        ``on_stream`` is told each piece of stdout or stderr as it comes."""
        if not self.is_started:
            raise KernelError("the kernel is not started")
        async with self._lock:
            return await self._execute(code, timeout, caps, on_stream)

    async def _execute(self, code: str, timeout: float, caps: OutputCaps | None = None,
                       on_stream: Callable[[str, str], None] | None = None) -> ExecutionResult:
        """Run one step: thawed, its messages read within caps, then (once it says it has
        ended) its strays killed, checked from outside that nothing of it still runs, frozen,
        and only then its files looked at; so every file it made is its own."""
        local_files = not self.remote
        before = scan(self.workdir) if local_files else {}
        started = time.perf_counter()
        self._resume()
        cell = await self._run_cell(code, timeout, caps or OutputCaps(), on_stream=on_stream)
        out, status = cell.collector, cell.status
        notes = list(cell.notes)
        cut = getattr(self._provisioner(), "take_cut", lambda: 0)()  # before the kernel may be stopped
        if cut:
            notes.append(f"{cut} message(s) from the kernel past the {self.sandbox.message_mb} MB the host reads "
                         "in one were cut off and dropped")
        ran_on: str | None = None
        if status == "timeout":
            await self._stop_runaway()
        if status == "died":
            if self.oom_killed():
                out.error = ErrorInfo(ename="MemoryError", evalue="the kernel was stopped at its memory limit")
            await self.shutdown()
        else:
            if status == "ok" and out.error is not None:
                status = "error"
            if self.reap_strays():
                notes.append("processes left running by this cell were stopped")
                # The killed children stay zombies, counting against the process cap, until
                # the kernel waits for them.
                for _ in range(3):
                    if (await self._run_cell(REAP_CHILDREN, 10, OutputCaps(), hidden=True)).status == "ok":
                        break
            ran_on = await self._settle()
        new_files: list[Path] = []
        refused: list[tuple[str, str]] = []
        if self.remote and status != "died":
            # Also after a timeout: what the step made is its own, not the next step's.
            new_files, refused = await self._returned_files()
        self._pause()
        if local_files:
            new_files, refused = changed_outputs(before, scan(self.workdir))
        stopped = None
        if ran_on is not None:
            status, stopped = "runaway", f"its code still ran after the step ended ({ran_on})"
            notes.append(f"the kernel was stopped: {stopped}")
            await self.shutdown()
        self._drain_replies()
        notes = out.finish(notes)
        return ExecutionResult(
            status=status, stdout=out.stdout.text(), stderr=out.stderr.text(), result=out.result,
            outputs=out.outputs, images=out.images, figure_labels=out.figure_labels, new_files=new_files,
            refused_files=refused, error=out.error,
            elapsed_s=time.perf_counter() - started, execution_count=out.execution_count, notes=notes, stopped=stopped,
        )

    async def _run_cell(self, code: str, timeout: float, caps: OutputCaps, *, hidden: bool = False,
                        on_stream: Callable[[str, str], None] | None = None) -> _Cell:
        """Send ``code`` and read its messages until the kernel says it is idle (or dies, or
        ``timeout`` passes); a ``hidden`` cell is the host's own (no history)."""
        msg_id = self._client.execute(code, silent=hidden, store_history=not hidden, allow_stdin=False)
        cell = _Cell(Collector(self.output_cap, caps, on_stream=on_stream))
        deadline = time.perf_counter() + timeout
        unreadable = 0
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                cell.status = "timeout"
                break
            try:
                message = await self._next_iopub(min(_LIVENESS_POLL_S, remaining))
            except Exception:  # queue.Empty: no message within the poll interval
                if not await self.is_alive():
                    cell.status = "died"
                    break
                continue
            if message is None:
                unreadable += 1
                continue
            state = iopub.state_of(message)
            if state in _REPLACED:
                # A gateway restarts a kernel that died by itself, and says so on iopub (with no
                # parent); its process still answers, but what it held is gone: a death.
                cell.status = "died"
                break
            if message.parent != msg_id:
                continue
            if state == "idle":
                break
            cell.collector.take(message)
        if unreadable:
            cell.notes.append(f"{unreadable} message(s) from the kernel that could not be read were ignored")
        return cell

    async def _next_iopub(self, timeout: float) -> Inbound | None:
        """The next iopub message within ``timeout`` seconds (``queue.Empty`` when none came;
        ``None`` for one that is not a message).

        A local kernel's frames are read raw: only the header is parsed before the caps
        decide (see iopub.py). A gateway's client waits by spinning the event loop (it polls
        its queue with ``sleep(0)``: a whole core for as long as a step is silent), so a
        remote kernel's queue is looked at in short, growing pauses instead.
        """
        if not self.remote:
            socket = self._client.iopub_channel.socket
            if not await socket.poll(int(timeout * 1000)):
                raise queue.Empty
            return iopub.decode(await socket.recv_multipart(copy=False), self._client.session)
        end = time.perf_counter() + timeout
        pause = 0.001
        while True:
            try:
                return Inbound.from_dict(await self._client.get_iopub_msg(timeout=0))
            except queue.Empty:
                left = end - time.perf_counter()
                if left <= 0:
                    raise
                await asyncio.sleep(min(pause, left))
                pause = min(pause * 2, _REMOTE_POLL_S)

    def _drain_replies(self) -> None:
        """Drop the kernel's replies on the shell channel, which nothing reads: unread, they
        would pile up in this process for as long as the kernel lives."""
        socket = getattr(getattr(self._client, "shell_channel", None), "socket", None)
        if self.remote or socket is None:
            return
        import zmq

        raw = zmq.Socket.shadow(socket.underlying)  # read here and now, outside the event loop
        for _ in range(1000):
            try:
                raw.recv(zmq.NOBLOCK)
            except zmq.ZMQError:  # zmq.Again: nothing more
                return

    def _resume(self) -> None:
        resume = getattr(self._provisioner(), "resume", None)
        if resume is not None:
            resume()

    def _pause(self) -> None:
        pause = getattr(self._provisioner(), "pause", None)
        if pause is not None and self.is_started:
            pause()

    async def _settle(self) -> str | None:
        """What of the step still runs in the kernel, seen from outside (``None``: nothing)."""
        settle = getattr(self._provisioner(), "settle", None)
        return await settle() if settle is not None else None

    async def _stop_runaway(self) -> None:
        """Interrupt a runaway execution; restart the kernel if it does not come back."""
        try:
            await self.interrupt()
            probe = self._client.execute("None", store_history=False)
            deadline = time.perf_counter() + 10
            while time.perf_counter() < deadline:
                try:
                    message = await self._next_iopub(1)
                except Exception:
                    continue
                if message is not None and message.parent == probe and iopub.state_of(message) == "idle":
                    return
        except Exception:
            pass
        await self.restart()

    async def _returned_files(self) -> tuple[list[Path], list[tuple[str, str]]]:
        """The files a remote kernel's last cell made under ``outputs/``, sent back over the
        protocol and written into our own folder (see handoff.py)."""
        caps = OutputCaps(step_bytes=self.returned_bytes + MB, step_files=0)
        sent = await self._run_cell(handoff.collect_code(self.returned_bytes), 120.0, caps, hidden=True)
        error = sent.collector.error
        if sent.status == "ok" and error is not None and error.ename in _LOADER_GONE:
            # The kernel's own code removed the module: defined again (it then sends every file
            # under outputs/ as new, once).
            await self._run_cell(handoff.definition(), 120.0, OutputCaps(), hidden=True)
            sent = await self._run_cell(handoff.collect_code(self.returned_bytes), 120.0, caps, hidden=True)
            error = sent.collector.error
        if sent.status != "ok" or error is not None:
            detail = error.short() if error else sent.status
            return [], [("outputs/", f"the kernel's files could not be fetched: {detail}")]
        displays = [o["data"][handoff.FILE_MIME] for o in sent.collector.outputs
                    if o.get("output_type") == "display_data" and handoff.FILE_MIME in o.get("data", {})]
        returned = await asyncio.to_thread(handoff.keep_returned, self.workdir, displays, self.returned_bytes)
        return sorted(returned.files, key=str), sorted(returned.refused)  # in the order a local scan gives

    async def load_dataset(self, name: str, parquet_path: Path, *, fingerprint: str | None = None,
                           timeout: float = 120.0) -> ExecutionResult:
        """Make ``name`` a pandas DataFrame read from a Parquet file (memory-mapped, without a
        second full copy; see loader.py).

        A remote kernel cannot read the file: its bytes are sent over the protocol, and the
        kernel checks them against ``fingerprint`` (required then) before it reads them.
        """
        if not name.isidentifier() or keyword.iskeyword(name):
            raise InvalidArguments(f"{name!r} is not a valid Python variable name", hint="use letters, digits and _")
        if self.remote:
            if fingerprint is None:
                raise InvalidArguments("a dataset sent to a remote kernel needs its fingerprint")
            return await self._send_dataset(name, parquet_path, fingerprint, timeout)
        if self._loader_defined:
            result = await self.execute(load_code(name, parquet_path, define=False), timeout=timeout)
            if result.status != "error" or result.error is None or result.error.ename not in _LOADER_GONE:
                return result
            # The kernel's own code removed the loader: it is defined again.
        result = await self.execute(load_code(name, parquet_path), timeout=timeout)
        self._loader_defined = result.status == "ok"
        return result

    async def _send_dataset(self, name: str, path: Path, fingerprint: str, timeout: float) -> ExecutionResult:
        if not self.is_started:
            raise KernelError("the kernel is not started")
        async with self._lock:
            for attempt in range(2):
                # The shell channel is handled in order: the chunks are in before the cell runs.
                for msg in handoff.dataset_messages(self._client.session, fingerprint, path):
                    self._client.shell_channel.send(msg)
                    await asyncio.sleep(0)  # a big dataset: the server's other work goes on between chunks
                result = await self._execute(handoff.take_code(name, fingerprint), timeout)
                gone = result.status == "error" and result.error is not None and result.error.ename in _LOADER_GONE
                if not gone or attempt:
                    return result
                # The kernel's own code removed the receiving module: it is defined again.
                await self._run_cell(handoff.definition(), timeout, OutputCaps(), hidden=True)
        return result


@dataclass
class _Cell:
    """What reading one cell's messages gave: how it ended, and what it said."""

    collector: Collector
    status: Literal["ok", "timeout", "died"] = "ok"
    notes: list[str] = field(default_factory=list)


def kernel_environment() -> dict[str, str]:
    """The kernel's environment: this process's, made reproducible and pinned to our cores."""
    env = dict(os.environ)
    cores = str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
    env.update({
        "SOURCE_DATE_EPOCH": "0",  # matplotlib writes reproducible PDF/SVG/PS
        "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": cores,
        "OPENBLAS_NUM_THREADS": cores,
        "MKL_NUM_THREADS": cores,
        "NUMEXPR_MAX_THREADS": cores,
        # Worker threads sleep as soon as their work is done, instead of spinning for 0.1-0.2 s:
        # a step ends when nothing of it runs (quiescence.py), so spinning would make it wait.
        "OPENBLAS_THREAD_TIMEOUT": "4",
        "OMP_WAIT_POLICY": "PASSIVE",
        "KMP_BLOCKTIME": "0",
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
    })
    env.pop("JPY_PARENT_PID", None)
    return env
