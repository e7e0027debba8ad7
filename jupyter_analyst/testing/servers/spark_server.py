"""A throwaway Spark Connect server for tests: the Spark Connect server class of the installed
``pyspark`` (its jars), run by the system's Java on a free loopback port, with its warehouse
and metastore in a temporary folder, stopped (its JVM killed) at the end.

It listens on loopback only, and asks every client for a token of its own (Spark Connect's
pre-shared token, ``SPARK_CONNECT_AUTHENTICATE_TOKEN``, handed over in the server's environment,
never its argv): other local accounts reach the port but are refused. The client sends it in
the URL (``sc://localhost:PORT/;token=...``): pyspark sends a token in the clear only to the
host named ``localhost`` (gRPC's local credentials), and asks for TLS anywhere else.

It takes about 20 s to start (longer on a loaded machine), so a test run starts one: the
fixture is session-scoped. Its Spark UI is on too, on a loopback port of its own: its REST API
(``/api/v1/applications/.../jobs``) is Spark's own account of which jobs run, which is what a
test of interrupting a query reads.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...errors import AnalystError

INSTALL_HINT = "apt-get install -y openjdk-17-jre-headless (Debian) and pip install 'pyspark[connect]>=4.0'"
#: How long the server may take to say it listens.
START_TIMEOUT_S = 180
#: What the server's log says once it accepts connections.
READY = "Spark Connect server started at"


class SparkUnavailable(AnalystError):
    """Java or pyspark (with its jars) is not installed here, or the server did not start."""

    reason = "spark_unavailable"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spark_home() -> Path:
    try:
        import pyspark
    except ImportError as exc:
        raise SparkUnavailable(f"pyspark is not installed: {INSTALL_HINT}") from exc
    home = Path(pyspark.__file__).parent
    if not (home / "jars").is_dir() or not list((home / "jars").glob("spark-connect_*.jar")):
        raise SparkUnavailable(f"pyspark here has no Spark jars (the thin pyspark-client?): {INSTALL_HINT}")
    if shutil.which("java") is None:
        raise SparkUnavailable(f"no java on PATH: {INSTALL_HINT}")
    return home


class SparkConnectServer:
    """One running server; :attr:`url` is its ``sc://`` URL."""

    def __init__(self, root: Path) -> None:
        self.home = _spark_home()
        self.root = root
        self.port = _free_port()
        self.ui_port = _free_port()
        #: The pre-shared token every client must send (a new one per server).
        self.token = secrets.token_urlsafe(24)
        self.log = root / "server.log"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The ``sc://`` URL with the token: what a client that may connect uses."""
        return f"{self.url_without_token}/;token={self.token}"

    @property
    def url_without_token(self) -> str:
        """The URL any local account could try: the server refuses it."""
        return f"sc://localhost:{self.port}"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        jar = next((self.home / "jars").glob("spark-connect_*.jar"))
        argv = [
            str(self.home / "bin" / "spark-submit"),
            "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--master", "local[2]",
            "--conf", f"spark.connect.grpc.binding.port={self.port}",
            "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf", "spark.ui.enabled=true",
            "--conf", f"spark.ui.port={self.ui_port}",
            "--conf", "spark.driver.host=127.0.0.1",
            "--conf", "spark.driver.bindAddress=127.0.0.1",
            "--conf", "spark.sql.shuffle.partitions=2",
            "--conf", f"spark.sql.warehouse.dir={self.root / 'warehouse'}",
            "--driver-java-options", f"-Dderby.system.home={self.root / 'derby'}",
            str(jar),
        ]
        env = {**os.environ, "SPARK_HOME": str(self.home), "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_CONNECT_AUTHENTICATE_TOKEN": self.token}
        with open(self.log, "wb") as log:
            # A session of its own: stopping it ends spark-submit's JVM and whatever it started.
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True, cwd=self.root)
        deadline = time.monotonic() + START_TIMEOUT_S
        while READY not in self.log.read_text(errors="replace"):
            if self.process.poll() is not None:
                raise SparkUnavailable(f"the Spark Connect server exited: {self._tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise SparkUnavailable(f"the Spark Connect server did not start in {START_TIMEOUT_S} s: {self._tail()}")
            time.sleep(0.2)  # polling the server's log for readiness, not timing a test

    def _tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-15:])

    def stop(self) -> None:
        """End the server's JVM (and anything of its process group)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    # ------------------------------------------------------------------ Spark's own status

    def _api(self, path: str) -> Any:
        # Slow while a job takes both cores of a small machine: a generous limit.
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/api/v1{path}", timeout=60) as reply:
            return json.load(reply)

    def jobs(self) -> list[dict[str, Any]]:
        """Every job of the server's application, as Spark's REST API reports it (``status``:
        ``RUNNING``, ``SUCCEEDED``, ``FAILED``; ``jobTags`` holds the tags of its operation;
        ``completionTime`` when it ended, as ``2026-01-31T12:00:00.000GMT``)."""
        (app,) = self._api("/applications")
        return self._api(f"/applications/{app['id']}/jobs")


def load_tables(url: str, tables: dict[str, Path]) -> None:
    """Write each CSV file of ``tables`` as a Spark table of that name (its types inferred)."""
    from pyspark.sql.connect.session import SparkSession

    spark = SparkSession.builder.remote(url).create()
    try:
        for name, csv in tables.items():
            frame = spark.read.option("header", True).option("inferSchema", True).csv(str(csv))
            frame.write.mode("overwrite").saveAsTable(name)
    finally:
        spark.stop()


@contextmanager
def spark_server(root: Path) -> Iterator[SparkConnectServer]:
    """A running Spark Connect server for the duration of the block."""
    server = SparkConnectServer(root)
    try:
        server.start()
        yield server
    finally:
        server.stop()
