"""A throwaway PostgreSQL server for tests: ``initdb`` into a temporary folder, ``postgres``
on a free loopback port with its socket in that folder, stopped at the end.

PostgreSQL refuses to run as root; as root (CI) the server runs as the ``postgres``
system user (Debian's package makes it) with the folder handed to it. Each test gets a
fresh database copied from an empty template (``CREATE DATABASE ... TEMPLATE``: fast).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...errors import AnalystError

INSTALL_HINT = "apt-get install -y postgresql (Debian) and pip install 'jupyter-analyst[postgres]'"
_DEBIAN_BIN = Path("/usr/lib/postgresql/15/bin")


class PostgresUnavailable(AnalystError):
    """The PostgreSQL binaries (or psycopg) are not installed here."""

    reason = "postgres_unavailable"


def _binaries() -> Path:
    for folder in (_DEBIAN_BIN, *sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)):
        if (folder / "postgres").exists() and (folder / "initdb").exists():
            return folder
    found = shutil.which("postgres")
    if found:
        return Path(found).parent
    raise PostgresUnavailable(f"no PostgreSQL server binaries: {INSTALL_HINT}")


class PortTaken(AnalystError):
    """The server's port was taken before it listened on it."""

    reason = "postgres_port_taken"


#: How many ports the server is started on before its start fails.
PORT_ATTEMPTS = 3


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One running cluster; :meth:`new_database` gives a ``postgresql://`` URL per test."""

    user = "analyst"

    def __init__(self, root: Path, *, port: int | None = None) -> None:
        try:
            import psycopg  # noqa: F401
        except ImportError as exc:
            raise PostgresUnavailable(f"psycopg is not installed: {INSTALL_HINT}") from exc
        self.bin = _binaries()
        self.root = root
        self.data = root / "data"
        self.socket_dir = root / "sock"
        #: The first port tried (``port``, or one free now); another if it is taken by then.
        self.port = port or _free_port()
        # A password of its own: a readiness probe that reaches another test process's server
        # (on a port both were given) is refused, not taken for this one's answer.
        self.password = f"analyst-{uuid.uuid4().hex[:12]}"
        self._as: list[str] = []
        if os.geteuid() == 0:
            self._as = ["runuser", "-u", "postgres", "--"]
        self.socket_dir.mkdir(parents=True)
        if self._as:
            shutil.chown(root, "postgres", "postgres")
            shutil.chown(self.socket_dir, "postgres", "postgres")
        pwfile = root / "pw"
        pwfile.write_text(self.password)
        if self._as:
            shutil.chown(pwfile, "postgres", "postgres")
        self._run([str(self.bin / "initdb"), "-D", str(self.data), "-U", self.user, "--pwfile", str(pwfile),
                   "-A", "scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--no-sync"])
        self.process: subprocess.Popen[bytes] | None = None
        # The port was free when asked; another process may take it before the server
        # listens: then on another port (a restart keeps the port, which its URLs name).
        for attempt in range(PORT_ATTEMPTS):
            try:
                self.start()
                break
            except PortTaken:
                if attempt == PORT_ATTEMPTS - 1:
                    raise
                self.port = _free_port()
        self._exec("CREATE DATABASE analyst_template")

    def _run(self, argv: list[str]) -> None:
        done = subprocess.run([*self._as, *argv], capture_output=True, text=True, check=False)
        if done.returncode:
            raise PostgresUnavailable(f"{argv[0]} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        """Start (or restart) the server and wait until it accepts connections."""
        self.process = subprocess.Popen(
            [*self._as, str(self.bin / "postgres"), "-D", str(self.data), "-p", str(self.port),
             "-h", "127.0.0.1", "-k", str(self.socket_dir), "-c", "fsync=off", "-c", "max_connections=200"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        import psycopg

        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg.connect(self.url("postgres"), connect_timeout=2).close()
                return
            except psycopg.OperationalError:
                if self.process.poll() is not None:
                    said = self.process.stderr.read().decode() if self.process.stderr else ""
                    if "Address already in use" in said:
                        raise PortTaken(f"port {self.port} was taken: {said}") from None
                    raise PostgresUnavailable(f"postgres exited: {said}") from None
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)  # polling the server's readiness, not timing a test

    def kill(self) -> None:
        """Stop the server at once (SIGKILL to the postmaster's process group is not
        needed: an immediate shutdown ends every backend)."""
        if self.process is not None and self.process.poll() is None:
            subprocess.run([*self._as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                           capture_output=True, check=False)
            self.process.wait()

    def url(self, database: str, *, password: str | None = None) -> str:
        return f"postgresql://{self.user}:{password or self.password}@127.0.0.1:{self.port}/{database}"

    def _exec(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(sql)

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        self._exec(f"CREATE DATABASE {name} TEMPLATE analyst_template")
        return self.url(name)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            subprocess.run([*self._as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"],
                           capture_output=True, check=False)
            self.process.wait()


@contextmanager
def postgres_server(root: Path, *, port: int | None = None) -> Iterator[PostgresServer]:
    """A running server for the duration of the block (on ``port`` if it is free)."""
    server = PostgresServer(root, port=port)
    try:
        yield server
    finally:
        server.stop()
