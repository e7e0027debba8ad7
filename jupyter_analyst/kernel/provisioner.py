"""The kernel provisioner that starts ipykernel inside the sandbox.

Selected by the ``jupyter-analyst`` kernelspec (entry point group
``jupyter_client.kernel_provisioners``), so any jupyter_client manager, the Jupyter
server's included, starts sandboxed kernels unchanged.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning import LocalProvisioner
from pydantic import BaseModel

from .cgroups import KernelCgroup
from .sandbox import (
    NO_BWRAP_WARNING,
    NOBODY,
    SandboxPolicy,
    bwrap_command,
    find_bwrap,
    running_as_root,
    scrub_environment,
    unsandboxed_command,
)

#: The launch environment variable carrying :class:`SandboxSettings` (never passed on).
SETTINGS_ENV = "JUPYTER_ANALYST_SANDBOX"


class SandboxSettings(BaseModel):
    """What one launch needs besides the kernel's argv."""

    policy: SandboxPolicy = SandboxPolicy()
    readable: list[str] = []
    """Folders the kernel may read (e.g. the artifact store, for datasets)."""


def _give_to_nobody(*paths: Path) -> None:
    for path in paths:
        if not path.exists():
            continue
        os.chown(path, NOBODY, NOBODY)
        if path.is_dir():
            for child in path.rglob("*"):
                try:
                    os.chown(child, NOBODY, NOBODY, follow_symlinks=False)
                except OSError:
                    pass


class SandboxProvisioner(LocalProvisioner):
    """A local provisioner whose kernel runs under bubblewrap with limits."""

    cgroup: KernelCgroup | None = None
    sandboxed: bool = False
    sockets_dir: str | None = None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        """Put the kernel's ZMQ sockets and connection file in a private folder, over ipc.

        The sandbox has no network, so TCP cannot reach it; and the server's runtime folder
        (which holds other kernels' connection files) must not be mounted into it.
        """
        km = self.parent
        if km is not None and km.transport != "ipc":
            self.sockets_dir = tempfile.mkdtemp(prefix="ja-k-")
            km.transport = "ipc"
            km.ip = f"{self.sockets_dir}/k"
            km.connection_file = f"{self.sockets_dir}/connection.json"
            km.cache_ports = False
        return await super().pre_launch(**kwargs)

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        env = dict(kwargs.get("env") or os.environ)
        settings = SandboxSettings.model_validate_json(env.pop(SETTINGS_ENV, "{}"))
        policy = settings.policy
        workdir = Path(kwargs.get("cwd") or os.getcwd()).resolve()
        (workdir / ".config" / "matplotlib").mkdir(parents=True, exist_ok=True)
        (workdir / "outputs").mkdir(parents=True, exist_ok=True)
        connection_dir = Path(self.parent.connection_file).resolve().parent if self.parent else workdir
        drop = running_as_root()
        if drop:
            _give_to_nobody(workdir, connection_dir)
        self.cgroup = KernelCgroup.create(memory_mb=policy.memory_mb, processes=policy.processes)
        bwrap = find_bwrap(policy.bwrap_path)
        readable = [Path(p) for p in settings.readable if Path(p).exists()]
        if bwrap and policy.enabled:
            wrapped = bwrap_command(
                cmd, bwrap=bwrap, workdir=workdir, writable=[connection_dir] if connection_dir != workdir else [],
                readable=readable, policy=policy, drop_to_nobody=drop, address_space_limit=self.cgroup is None,
            )
            self.sandboxed = True
        else:
            if policy.enabled:
                print(NO_BWRAP_WARNING, file=sys.stderr, flush=True)
                self.log.warning(NO_BWRAP_WARNING)
            wrapped = unsandboxed_command(cmd, policy=policy, drop_to_nobody=drop)
        kwargs["env"] = scrub_environment(env, home=workdir, extra=policy.extra_env)
        if self.cgroup is not None:
            # Join the cgroup in the child before exec: bubblewrap forks at once, and a
            # process added afterwards would leave its children outside.
            kwargs["preexec_fn"] = self.cgroup.join
        try:
            return await super().launch_kernel(wrapped, **kwargs)
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.destroy()
            raise

    _baseline: set[int] | None = None

    def reap_strays(self) -> int:
        """Kill processes a cell left behind in the sandbox; returns how many.

        The first call (right after start) records the kernel's own processes; later
        calls kill anything else, so a cell's children never outlive it and a fork bomb
        cannot keep the kernel at its process cap.
        """
        if self.cgroup is None:
            return 0
        now = set(self.cgroup.pids())
        if self._baseline is None:
            self._baseline = now
            return 0
        strays = now - self._baseline
        for pid in strays:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        return len(strays)

    async def cleanup(self, restart: bool = False) -> None:
        self._baseline = None
        await super().cleanup(restart=restart)
        if self.cgroup is not None:
            self.cgroup.destroy()
            self.cgroup = None
        if self.sockets_dir is not None and not restart:
            shutil.rmtree(self.sockets_dir, ignore_errors=True)
            self.sockets_dir = None

    def oom_killed(self) -> bool:
        """Whether the kernel died of its memory cap."""
        return self.cgroup is not None and self.cgroup.oom_killed()
