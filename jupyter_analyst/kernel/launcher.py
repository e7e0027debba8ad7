"""The seam where a kernel is started: locally here; a sandbox or a server's manager later."""

from __future__ import annotations

import inspect
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager

from .sandbox import kernels_dir


def kernel_spec_manager(extra_dirs: Sequence[Path] = ()) -> KernelSpecManager:
    """Jupyter's kernelspecs plus the sandboxed one (first, so it wins), after ``extra_dirs``."""
    manager = KernelSpecManager()
    manager.kernel_dirs = [*map(str, extra_dirs), str(kernels_dir()), *manager.kernel_dirs]
    return manager


#: Kernel messages a client's IOPub socket holds before the kernel's side must wait: each
#: may be large (a display), and the session reads them as they come (see iopub.py).
IOPUB_QUEUE = 2


def _bounded_iopub(client: Any) -> None:
    """Make the client's IOPub socket hold few messages (ZMQ's default is 1,000 of any size).

    Set before it connects, which is when ZMQ reads it; a gateway's client (no ZMQ socket)
    and one with CURVE keys (made by jupyter_client's own code) are left as they are.
    """
    if not hasattr(client, "iopub_channel_class") or getattr(client, "curve_publickey", None) is not None:
        return
    import zmq

    def connect_iopub(identity: bytes | None = None) -> Any:
        socket = client.context.socket(zmq.SUB)
        socket.linger = 1000
        socket.rcvhwm = IOPUB_QUEUE
        if identity:
            socket.identity = identity
        socket.connect(client._make_url("iopub"))
        socket.setsockopt(zmq.SUBSCRIBE, b"")
        return socket

    client.connect_iopub = connect_iopub


async def connect_client(launcher: KernelLauncher, manager: Any, timeout: float) -> Any:
    """A client whose kernel answered; the kernel is stopped if it never does."""
    client = manager.client()
    if getattr(launcher, "remote_kernel", None) is None:
        _bounded_iopub(client)
    try:
        # A gateway's client opens its websocket here (a coroutine); a local one returns None.
        started = client.start_channels()
        if inspect.isawaitable(started):
            await started
        await client.wait_for_ready(timeout=timeout)
    except BaseException:
        try:
            client.stop_channels()
        except Exception:  # a gateway client whose websocket never opened
            pass
        await launcher.stop(manager)
        raise
    return client


class KernelLauncher(Protocol):
    """Starts a kernel and gives back its manager and a connected client.

    A launcher whose kernels share no disk with this process (a gateway's) has an attribute
    ``remote_kernel``: the kernelspec name to start there. Datasets and files then travel
    over the kernel protocol (handoff.py) instead of through the kernel's folder.
    """

    async def launch(self, kernel_name: str, cwd: Path, env: Mapping[str, str]) -> tuple[Any, Any]: ...

    async def stop(self, manager: Any) -> None: ...


class LocalKernelLauncher:
    """A kernel process on this machine through ``AsyncKernelManager``.

    Args:
        ready_timeout: how long a started kernel has to answer.
        kernel_dirs: folders of kernelspecs searched before the others.
    """

    def __init__(self, ready_timeout: float = 60.0, *, kernel_dirs: Sequence[Path] = ()) -> None:
        self.ready_timeout = ready_timeout
        self.kernel_dirs = [Path(d) for d in kernel_dirs]

    async def launch(self, kernel_name: str, cwd: Path, env: Mapping[str, str]) -> tuple[Any, Any]:
        # ZMQ over Unix sockets, not TCP: nothing listens on the network. Socket paths
        # are limited to ~100 bytes, hence a short folder of their own under /tmp.
        sockets = tempfile.mkdtemp(prefix="ja-k-")
        manager = AsyncKernelManager(
            kernel_name=kernel_name, transport="ipc", ip=f"{sockets}/k",
            kernel_spec_manager=kernel_spec_manager(self.kernel_dirs),
        )
        manager.connection_file = f"{sockets}/connection.json"
        manager._analyst_sockets = sockets  # removed on stop
        # The kernel's own chatter goes to a log beside its sockets, not into our output.
        log = open(f"{sockets}/kernel.log", "ab")  # noqa: SIM115 - closed with the process
        try:
            await manager.start_kernel(cwd=str(cwd), env=dict(env), stdout=log, stderr=log)
        except BaseException:
            shutil.rmtree(sockets, ignore_errors=True)
            raise
        finally:
            log.close()
        try:
            return manager, await connect_client(self, manager, self.ready_timeout)
        except Exception as exc:
            # What the kernel said before it died is the only clue to why: kept in the error.
            said = getattr(manager, "_analyst_log_tail", "")
            raise RuntimeError(f"{exc}" + (f"; the kernel said: {said}" if said else "")) from exc

    async def stop(self, manager: Any) -> None:
        sockets = getattr(manager, "_analyst_sockets", "")
        try:
            await manager.shutdown_kernel(now=True)
        finally:
            manager._analyst_log_tail = _tail(Path(sockets) / "kernel.log") if sockets else ""
            shutil.rmtree(sockets, ignore_errors=True)


def _tail(path: Path, limit: int = 600) -> str:
    """The last lines of a kernel's log, on one line (empty when there is none)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - limit))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())
