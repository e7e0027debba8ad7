"""A real JupyterHub on 127.0.0.1 for tests: one single-user server per Hub user, each with
the extension, as a team runs it.

The Hub runs in a process of its own with its configurable-http-proxy, the "simple"
spawner (a local process per user, a folder per user, no system accounts: for tests only)
and a service token that may create users' tokens and start their servers. A client
speaks to a user's server through the proxy with that user's own Hub token, so the user
the extension sees is the one JupyterHub's identity provider names, as in production.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from ...errors import AnalystError
from .jupyter import free_port, stop_process
from ..model_server import MODEL_NAME

INSTALL_HINT = "pip install jupyterhub and npm install -g configurable-http-proxy"


class HubUnavailable(AnalystError):
    """JupyterHub or its proxy is not installed here."""

    reason = "hub_unavailable"


def proxy_command() -> str:
    """The configurable-http-proxy executable (``$CONFIGURABLE_HTTP_PROXY`` first)."""
    found = os.environ.get("CONFIGURABLE_HTTP_PROXY") or shutil.which("configurable-http-proxy")
    if not found:
        raise HubUnavailable(f"configurable-http-proxy is not installed: {INSTALL_HINT}")
    return found


def _singleuser_command() -> str:
    try:
        import jupyterhub  # noqa: F401
    except ImportError as exc:
        raise HubUnavailable(f"jupyterhub is not installed: {INSTALL_HINT}") from exc
    found = Path(sys.executable).with_name("jupyterhub-singleuser")
    if not found.exists():
        raise HubUnavailable(f"no jupyterhub-singleuser beside {sys.executable}: {INSTALL_HINT}")
    return str(found)


class HubProcess:
    """``jupyterhub`` with ``users`` allowed, each user's server running the extension with
    ``analyst`` as its ``AnalystApp`` settings (all users share them, e.g. one ``store_url``);
    ``groups``: the Hub's groups and their members, as ``c.JupyterHub.load_groups`` makes them."""

    def __init__(self, root: Path, *, users: list[str], analyst: dict[str, Any],
                 groups: dict[str, list[str]] | None = None) -> None:
        self.proxy = proxy_command()
        self.singleuser = _singleuser_command()
        self.root = Path(root)
        self.users = list(users)
        self.port = free_port()
        self.service_token = uuid.uuid4().hex
        self._tokens: dict[str, str] = {}
        self.root.mkdir(parents=True, exist_ok=True)
        # What every single-user server reads: the extension's settings, in a config folder
        # of this Hub's own (the machine's Jupyter config is left alone).
        config_dir = self.root / "user-config"
        config_dir.mkdir(exist_ok=True)
        # Jupyter's MCP server (jupyter-server-mcp enables itself where it is installed) would
        # have every user's server listen on one port: off.
        (config_dir / "jupyter_server_config.json").write_text(json.dumps({
            "ServerApp": {"jpserver_extensions": {"jupyter_analyst.server": True, "jupyter_server_mcp": False}},
            "AnalystApp": {"model": MODEL_NAME, "api_key": "scripted", **analyst},
        }))
        settings = {
            "ip": "127.0.0.1", "port": self.port, "hub_ip": "127.0.0.1", "hub_port": free_port(),
            "proxy_api": f"http://127.0.0.1:{free_port()}", "proxy": self.proxy,
            "db": f"sqlite:///{self.root / 'hub.sqlite'}", "cookie_secret": str(self.root / "cookie_secret"),
            "users": self.users, "token": self.service_token, "cmd": self.singleuser,
            "homes": str(self.root / "home" / "{username}"),
            "env": {"JUPYTER_CONFIG_DIR": str(config_dir), "JUPYTER_RUNTIME_DIR": str(self.root / "runtime"),
                    "JUPYTER_DATA_DIR": str(self.root / "data"),
                    # The users' servers import the package the tests import (a checkout's, by PYTHONPATH).
                    **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {})},
            "root": os.geteuid() == 0, "groups": groups or {},
        }
        (self.root / "jupyterhub_config.py").write_text(_CONFIG.format(settings=json.dumps(settings)))
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90.0) -> HubProcess:
        """Start the Hub and wait until its API answers."""
        self.log = open(self.root / "hub.log", "wb")  # noqa: SIM115 - closed in stop()
        config = self.root / "jupyterhub_config.py"
        self.proc = subprocess.Popen([sys.executable, "-m", "jupyterhub", "-f", str(config)],
                                     cwd=self.root, stdout=self.log, stderr=subprocess.STDOUT)
        self._wait(lambda: self.api("/")["version"], timeout, "the Hub did not start")
        return self

    def _wait(self, probe: Any, timeout: float, what: str) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            try:
                result = probe()
                if result:
                    return result
            except (urllib.error.URLError, ConnectionError, KeyError):
                pass
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"the Hub exited with {self.proc.returncode}: {self.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} in {timeout:.0f}s: {self.log_tail()}")
            time.sleep(0.1)  # polling a process's readiness, not timing a test

    def log_tail(self) -> str:
        path = self.root / "hub.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""

    def api(self, path: str, *, method: str = "GET", body: Any = None) -> Any:
        """A Hub REST call with the service token."""
        req = urllib.request.Request(
            f"{self.url}/hub/api{path}", method=method, data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.service_token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30) as resp:
            data = resp.read()
        return json.loads(data) if data else {}

    def token(self, user: str) -> str:
        """An API token of ``user``'s own (made once), as the Hub issues them."""
        if user not in self._tokens:
            self._tokens[user] = self.api(f"/users/{user}/tokens", method="POST",
                                          body={"note": "jupyter-analyst tests"})["token"]
        return self._tokens[user]

    def spawn(self, *users: str, timeout: float = 120.0) -> None:
        """Start the users' servers (together, as the Hub would) and wait until each is ready."""
        for user in users:
            self.api(f"/users/{user}/server", method="POST", body={})
        for user in users:
            self._wait(lambda user=user: self.ready(user), timeout, f"{user}'s server was not ready")

    def ready(self, user: str) -> bool:
        """Whether the Hub says ``user``'s (default) server is ready."""
        return bool(((self.api(f"/users/{user}").get("servers") or {}).get("") or {}).get("ready"))

    def server_url(self, user: str) -> str:
        """``user``'s server, through the proxy."""
        return f"{self.url}/user/{user}"

    def headers(self, user: str) -> dict[str, str]:
        """What authenticates a request as ``user``: their own Hub token."""
        return {"Authorization": f"token {self.token(user)}"}

    def request(self, user: str, path: str, *, as_user: str | None = None, method: str = "GET", body: Any = None,
                raw: bool = False, timeout: float = 60.0, headers: dict[str, str] | None = None) -> Any:
        """A request to ``user``'s server at ``path`` with ``as_user``'s token (default: the
        user's own); JSON decoded unless ``raw``."""
        req = urllib.request.Request(
            self.server_url(user) + path, method=method, data=None if body is None else json.dumps(body).encode(),
            headers={**self.headers(as_user or user), "Content-Type": "application/json", **(headers or {})},
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data = resp.read()
        return data if raw else json.loads(data)

    def home(self, user: str) -> Path:
        return self.root / "home" / user

    def stop(self) -> None:
        """Stop every user's server, then the Hub and its proxy (SIGTERM: the Hub stops both)."""
        if self.proc is not None and self.proc.poll() is None:
            for user in self.users:
                try:
                    self.api(f"/users/{user}/server", method="DELETE")
                except (urllib.error.URLError, ConnectionError):
                    pass
            stop_process(self.proc, 30)
        if getattr(self, "log", None) is not None:
            self.log.close()

    def __enter__(self) -> HubProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_CONFIG = '''\
# Written by jupyter_analyst.testing.servers.hub for one test run.
import json

s = json.loads({settings!r})
c = get_config()  # noqa: F821
c.JupyterHub.ip = s["ip"]
c.JupyterHub.port = s["port"]
c.JupyterHub.hub_ip = s["hub_ip"]
c.JupyterHub.hub_port = s["hub_port"]
c.JupyterHub.db_url = s["db"]
c.JupyterHub.cookie_secret_file = s["cookie_secret"]
c.ConfigurableHTTPProxy.api_url = s["proxy_api"]
c.ConfigurableHTTPProxy.command = [s["proxy"]]
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = set(s["users"])
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = s["homes"]
c.Spawner.cmd = [s["cmd"]]
c.Spawner.args = ["--allow-root"] if s["root"] else []
c.Spawner.environment = s["env"]
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.JupyterHub.load_groups = s["groups"]
c.JupyterHub.services = [{{"name": "analyst-tests", "api_token": s["token"]}}]
c.JupyterHub.load_roles = [{{
    "name": "analyst-tests", "services": ["analyst-tests"],
    "scopes": ["admin:users", "admin:servers", "tokens", "access:servers"],
}}]
'''
