"""A real Jupyter server with the extension, in a process of its own on 127.0.0.1.

For tests and benchmarks that need what pytest-jupyter's in-process server cannot give:
killing the server, or measuring it under load from another process.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Self

from ..model_server import MODEL_NAME


def stop_process(proc: subprocess.Popen[Any] | None, grace_s: float = 20.0) -> None:
    """Stop a server the tests started: SIGTERM, then SIGKILL past ``grace_s``; reaped."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


class LoggedServer:
    """A server the tests start as a child process writing to :attr:`log`: the tail of that
    log for an error message, its stop, and a ``with`` block around both."""

    log: Path
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        raise NotImplementedError

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        """Stop the server (and what it started): SIGTERM, then SIGKILL."""
        stop_process(self.proc)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class PortTaken(RuntimeError):
    """The port chosen for a server was taken before the server listened on it."""


#: How many ports a server is started on before its start fails: a port :func:`free_port`
#: gives is free when asked, and another process may take it before the server listens.
PORT_ATTEMPTS = 3


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now (the caller's server may find it taken
    by the time it listens: :class:`JupyterServerProcess` retries on another)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: Seconds a server is given to stop on SIGTERM (its kernels' shutdown) before SIGKILL.
STOP_GRACE_S = 20.0
#: What a server logs when its stop on SIGTERM failed, and with it its only way to exit:
#: jupyter_client's ``shutdown_all`` raises ``InvalidStateError`` for a kernel whose start or
#: shutdown is under way (``km.ready`` not done), the server's ``_stop`` task dies, and its
#: event loop runs on.
STOP_FAILED = b"ServerApp._stop()"


class JupyterServerProcess:
    """``jupyter server`` with ``jupyter_analyst.server`` enabled, token-authenticated."""

    def __init__(self, root: Path, *, sources: dict[str, str], model_url: str, token: str | None = None,
                 extra: list[str] | None = None, ready_path: str = "/api/status", mcp_port: int | None = None,
                 port: int | None = None) -> None:
        self.root = Path(root)
        # A token of its own: a readiness probe that reaches another test process's server
        # (on a port both were given) is refused, not taken for this one's answer.
        self.token = token or f"analyst-test-{uuid.uuid4().hex[:12]}"
        #: The first port tried (``port``, or one free now); another if it is taken by then.
        self.port = port or free_port()
        self._options = [
            "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            # A port taken meanwhile (by another test process that also asked the kernel for a
            # free one) fails the start, which start() retries on a new port: without this the
            # server would take the next port silently, where this object does not look.
            "--ServerApp.port_retries=0",
            # Jupyter's MCP server (jupyter-server-mcp enables itself where it is installed) only
            # where a test asks for it: it listens on a port of its own.
            f"--ServerApp.jpserver_extensions={{'jupyter_analyst.server': True, "
            f"'jupyter_server_mcp': {mcp_port is not None}}}",
            *([f"--MCPExtensionApp.mcp_port={mcp_port}"] if mcp_port is not None else []),
            f"--AnalystApp.workspace={self.root / 'ws'}", "--AnalystApp.sources=" + json.dumps(sources),
            f"--AnalystApp.model_base_url={model_url}", "--AnalystApp.api_key=scripted",
            f"--AnalystApp.model={MODEL_NAME}", *(extra or []),
        ]
        self.env = {**os.environ, "JUPYTER_CONFIG_DIR": str(self.root / "cfg"),
                    "JUPYTER_RUNTIME_DIR": str(self.root / "rt"), "JUPYTER_DATA_DIR": str(self.root / "data")}
        #: What answers once the server is up (``/api/status`` asks the kernel manager, which a
        #: server whose gateway is down cannot answer).
        self.ready_path = ready_path
        #: Jupyter's MCP server starts its own listener after the server answers: ready when both do.
        self.mcp_port = mcp_port
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def args(self) -> list[str]:
        """The server's command line, on :attr:`port`."""
        return [sys.executable, "-m", "jupyter_server", f"--port={self.port}", *self._options]

    def start(self, timeout: float = 60.0) -> JupyterServerProcess:
        """Start and wait until :attr:`ready_path` answers; on another port when the one
        chosen was taken before the server could listen on it (a few times)."""
        for _ in range(PORT_ATTEMPTS - 1):
            try:
                return self._start(timeout)
            except PortTaken:
                self.port = free_port()
        return self._start(timeout)

    def _start(self, timeout: float) -> JupyterServerProcess:
        self.root.mkdir(parents=True, exist_ok=True)
        # Its log, for the error when it does not start (and to tell a port taken).
        log_path = self.root / "server.log"
        start = log_path.stat().st_size if log_path.exists() else 0
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen(self.args, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        try:
            return self._wait_ready(timeout, log_path, start)
        except BaseException:
            self.stop()  # a start that failed leaves no server behind to take its port later
            raise

    def _wait_ready(self, timeout: float, log_path: Path, start: int) -> JupyterServerProcess:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                self.request(self.ready_path, raw=True, timeout=5)
                if self.mcp_port is not None:
                    socket.create_connection(("127.0.0.1", self.mcp_port), timeout=5).close()
                return self
            # A timeout too: the port may be taken by a process that answers nothing (the
            # server then exits, and is started on another).
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if self.proc.poll() is not None:
                    said = log_path.read_bytes()[start:].decode(errors="replace")
                    if f"port {self.port} is not available" in said:
                        raise PortTaken(self.port) from None
                    tail = said.splitlines()[-20:]
                    raise RuntimeError(f"the Jupyter server exited with {self.proc.returncode}:\n"
                                       + "\n".join(tail)) from None
                time.sleep(0.1)
        tail = (self.root / "server.log").read_text(errors="replace").splitlines()[-20:]
        raise RuntimeError(f"the Jupyter server did not answer {self.ready_path} in {timeout:g} s:\n" + "\n".join(tail))

    def request(self, path: str, *, method: str = "GET", body: Any = None, raw: bool = False,
                timeout: float = 30.0, headers: dict[str, str] | None = None) -> Any:
        """One request with the token; JSON decoded unless ``raw``."""
        req = urllib.request.Request(
            self.url + path, method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json", **(headers or {})},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data = resp.read()
        return data if raw else json.loads(data)

    def kill9(self) -> None:
        """Kill the server with SIGKILL and reap it."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        """Stop the server: SIGTERM, then SIGKILL past the grace, or at once when its stop
        failed (see :data:`STOP_FAILED`): it would wait out the whole grace for nothing."""
        if self.proc is None or self.proc.poll() is not None:
            return
        log_path = self.root / "server.log"
        start = log_path.stat().st_size if log_path.exists() else 0
        self.proc.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        while self.proc.poll() is None and time.monotonic() < deadline:
            try:
                self.proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                if STOP_FAILED in log_path.read_bytes()[start:]:
                    break
        if self.proc.poll() is None:
            self.proc.kill()  # its kernels end with it (bubblewrap's --die-with-parent)
            self.proc.wait(timeout=10)

    def __enter__(self) -> JupyterServerProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def servers_on_one_store(root: Path, store_url: str, sources: dict[str, str], model_url: str, *,
                         count: int = 2, extra: list[str] | None = None) -> Iterator[list[JupyterServerProcess]]:
    """``count`` servers sharing the database at ``store_url`` (each with a folder of its own
    under ``root``), as a team runs them: no warm pool, no summarizer; all stopped at the end."""
    options = ["--AnalystApp.summarizer=False", "--AnalystApp.pool_size=0", f"--AnalystApp.store_url={store_url}",
               *(extra or [])]
    with ExitStack() as stack:
        servers = []
        for n in range(count):
            folder = Path(root) / f"server{n}"
            folder.mkdir(parents=True, exist_ok=True)
            servers.append(stack.enter_context(
                JupyterServerProcess(folder, sources=sources, model_url=model_url, extra=options)))
        yield servers


def analyst_server_config(
    workspace: Path, sources: dict[str, str], model_url: str | None = None, *,
    server: dict[str, Any] | None = None, **analyst: Any,
) -> dict[str, Any]:
    """pytest-jupyter's ``jp_server_config`` for a server with the extension on ``workspace``
    and ``sources``, answering with the (scripted) model at ``model_url``.

    No warm pool and no summarizer unless ``analyst`` says otherwise (the summarizer's
    background event would race streams compared event for event); ``server`` adds
    ``ServerApp`` settings.
    """
    model = {"model": MODEL_NAME, "model_base_url": model_url, "api_key": "scripted"} if model_url else {}
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_analyst.server": True, "jupyter_server_mcp": False},
                      **(server or {})},
        "AnalystApp": {"workspace": str(workspace), "sources": sources, **model, "pool_size": 0, "summarizer": False,
                       **analyst},
    }
