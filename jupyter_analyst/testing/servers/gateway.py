"""A real Jupyter Enterprise Gateway on 127.0.0.1, from a virtual environment of its own.

The gateway (3.x) pins an older Jupyter stack (jupyter-server 1, jupyter-client 6, pyzmq
24) than the project's, so it cannot share the project's environment: ``make
gateway-venv`` makes ``.venv-gateway`` beside it. Its kernels are a plain ``python3``
kernelspec that runs a Python with ipykernel, pandas and pyarrow (this process's own by
default), started by the gateway's default (local) process proxy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from .jupyter import LoggedServer, free_port

#: Where ``make gateway-venv`` puts the gateway, unless ``ANALYST_GATEWAY_VENV`` says otherwise.
DEFAULT_VENV = Path(__file__).resolve().parents[3] / ".venv-gateway"  # beside the repository's jupyter_analyst/


def gateway_command(venv: Path | None = None) -> Path | None:
    """The gateway's executable, or ``None`` when its environment is not built."""
    venv = Path(os.environ.get("ANALYST_GATEWAY_VENV") or venv or DEFAULT_VENV)
    command = venv / "bin" / "jupyter-enterprisegateway"
    return command if command.is_file() and os.access(command, os.X_OK) else None


class EnterpriseGateway(LoggedServer):
    """``jupyter enterprisegateway`` on a free loopback port with one ``python3`` kernelspec.

    Args:
        command: the gateway's executable (see :func:`gateway_command`).
        kernel_python: the Python its kernels run (ipykernel, pandas, pyarrow).
    """

    def __init__(self, command: Path, *, kernel_python: str = sys.executable) -> None:
        self.command = command
        self.port = free_port()
        self.home = Path(tempfile.mkdtemp(prefix="ja-gateway-"))
        spec = self.home / "data" / "kernels" / "python3"
        spec.mkdir(parents=True)
        (spec / "kernel.json").write_text(json.dumps({
            "argv": [kernel_python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Python 3 (gateway)", "language": "python",
        }))
        config = self.home / "config"
        config.mkdir()
        # The gateway refuses kernels for root by default (the tests may run as root), and
        # lists its kernels only when told to (a Jupyter server's /api/status asks for them).
        (config / "jupyter_enterprise_gateway_config.py").write_text(
            "c.EnterpriseGatewayApp.unauthorized_users = set()\nc.EnterpriseGatewayApp.list_kernels = True\n")
        self.env = {**os.environ, "JUPYTER_PATH": str(self.home / "data"), "JUPYTER_CONFIG_DIR": str(config),
                    "JUPYTER_DATA_DIR": str(self.home / "data"), "JUPYTER_RUNTIME_DIR": str(self.home / "rt")}
        self.log = self.home / "gateway.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> EnterpriseGateway:
        """Start it and wait until it lists its kernelspecs."""
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [str(self.command), "--ip=127.0.0.1", f"--port={self.port}"],
                env=self.env, cwd=self.home, stdout=log, stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/api/kernelspecs", timeout=5) as resp:
                    if "python3" in json.loads(resp.read())["kernelspecs"]:
                        return self
            except (urllib.error.URLError, ConnectionError):
                pass
            if self.proc.poll() is not None:
                raise RuntimeError(f"the gateway exited with {self.proc.returncode}:\n{self.log_tail()}")
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the gateway did not answer within {timeout:g} s:\n{self.log_tail()}")

    def kernels(self) -> list[dict]:
        """The kernels the gateway runs now."""
        with urllib.request.urlopen(self.url + "/api/kernels", timeout=10) as resp:
            return json.loads(resp.read())
