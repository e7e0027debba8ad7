"""The kernel provisioner that starts ipykernel inside the sandbox.

Selected by the ``jupyter-analyst`` kernelspec (entry point group
``jupyter_client.kernel_provisioners``), so any jupyter_client manager, the Jupyter
server's included, starts sandboxed kernels unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.provisioning import LocalProvisioner
from pydantic import BaseModel

from . import quiescence, seccomp
from .cgroups import KernelCgroup
from .uids import KernelIdentity, lease
from .relay import Relay
from .bwrap_command import (
    NO_BWRAP_WARNING,
    SandboxPolicy,
    bwrap_command,
    check_reach,
    find_bwrap,
    kernel_binds,
    running_as_root,
    scrub_environment,
    unreadable,
    unsandboxed_command,
)
from .staging import Stage
from .system_view import data_fds, etc_files
from ..workdir import chown_tree

#: The launch environment variable carrying :class:`SandboxSettings` (never passed on).
SETTINGS_ENV = "JUPYTER_ANALYST_SANDBOX"


class SandboxSettings(BaseModel):
    """What one launch needs besides the kernel's argv."""

    policy: SandboxPolicy = SandboxPolicy()
    readable: list[str] = []
    """Folders the kernel may read: its own datasets folder, a notebook's data files."""
    user_workdir: bool = False
    """The working folder is the user's own (papermill's ``--cwd``), not one made for the
    kernel: started as root, the kernel works in a staging folder in its place and the
    user's folder is never changed (staging.py)."""


class SandboxProvisioner(LocalProvisioner):
    """A local provisioner whose kernel runs under bubblewrap with limits, as a uid of its own."""

    cgroup: KernelCgroup | None = None
    sandboxed: bool = False
    sockets_dir: str | None = None
    identity: KernelIdentity | None = None
    relay: Relay | None = None
    stage: Stage | None = None

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        """Put the kernel's ZMQ sockets and its connection file in a private folder, over ipc.

        The sandbox has no network, so TCP cannot reach it; the server's runtime folder
        (which holds other kernels' connection files) must not be mounted into it. The
        folder is the host's: the kernel may write only its ``s/`` folder of sockets and
        reads its connection file through a read-only mount, so nothing the host writes
        there on a restart can be redirected by the kernel.

        The kernel's connection file is not the host's: it binds its sockets at addresses of
        its own, and the host's clients connect to the relay's (relay.py).
        """
        km = self.parent
        if km is not None:
            base = Path(tempfile.mkdtemp(prefix="ja-k-"))
            os.chmod(base, 0o711)  # the kernel's uid passes through to its sockets
            (base / "s").mkdir(mode=0o700)
            self.sockets_dir = str(base)
            km.transport = "ipc"
            km.ip = f"{base}/s/k"
            km.connection_file = f"{base}/connection.json"
            km.cache_ports = False
        return await super().pre_launch(**kwargs)

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        env = dict(kwargs.get("env") or os.environ)
        settings = SandboxSettings.model_validate_json(env.pop(SETTINGS_ENV, "{}"))
        policy = settings.policy
        workdir = Path(kwargs.get("cwd") or os.getcwd()).resolve()
        connection_file = Path(self.parent.connection_file).resolve() if self.parent else None
        sockets = connection_file.parent / "s" if connection_file is not None else None
        bwrap = find_bwrap(policy.bwrap_path) if policy.enabled else None
        readable = [Path(p) for p in settings.readable if Path(p).exists()]
        private = [connection_file] if connection_file is not None and sockets is not None else []
        writable = [sockets] if sockets is not None else []
        if running_as_root() and self.identity is None:
            self.identity = lease(policy.uid_first, policy.uid_count)
        ids = (self.identity.uid, self.identity.gid) if self.identity is not None else None
        filter_fd: int | None = None
        etc_fds: dict[Path, int] = {}
        sources: dict[Path, Path] = {}
        fresh_stage = self.stage is None
        try:
            if ids is not None:
                workdir, readable, sources = self._own_files(
                    workdir, readable, ids, user_workdir=settings.user_workdir,
                    mounts=None if bwrap is None else (writable, private))
            if connection_file is not None and sockets is not None:
                connection_file = await self._relay(connection_file, sockets, ids, policy.message_mb * 2**20)
                cmd = [str(connection_file) if arg == self.parent.connection_file else arg for arg in cmd]
                private = [connection_file]
            self.cgroup = KernelCgroup.create(memory_mb=policy.memory_mb, processes=policy.processes)
            confine: list[Callable[[], None]] = [self.cgroup.join] if self.cgroup is not None else []
            if bwrap is not None:
                if seccomp.supported():
                    filter_fd = seccomp.program_fd()
                    kwargs["pass_fds"] = (*kwargs.get("pass_fds", ()), filter_fd)  # the same number in bwrap
                # The kernel's own accounts: its uid as bubblewrap leaves it when not dropped.
                uid, gid = ids if ids is not None else (os.getuid(), os.getgid())
                etc_fds = data_fds(etc_files(uid, gid, home=workdir, network=policy.network))
                kwargs["pass_fds"] = (*kwargs.get("pass_fds", ()), *etc_fds.values())
                wrapped = bwrap_command(
                    cmd, bwrap=bwrap, workdir=workdir, writable=writable, readable=[*readable, *private],
                    policy=policy, identity=ids, address_space_limit=self.cgroup is None, seccomp_fd=filter_fd,
                    sources=sources, etc_fds=etc_fds,
                )
                self.sandboxed = True
            else:
                if policy.enabled:
                    print(NO_BWRAP_WARNING, file=sys.stderr, flush=True)
                    self.log.warning(NO_BWRAP_WARNING)
                    if seccomp.supported():
                        # No bubblewrap to install the filter: the kernel's process puts it
                        # on itself between fork and exec, so the same calls are refused.
                        confine.append(seccomp.installer())
                wrapped = unsandboxed_command(cmd, policy=policy, identity=ids)
            kwargs["env"] = scrub_environment(env, home=workdir, extra=policy.extra_env)
            if bwrap is None:
                kwargs["cwd"] = str(workdir)
            if confine:
                # In the child before exec: the cgroup first (bubblewrap forks at once, and a
                # process added afterwards would leave its children outside), then the filter.
                kwargs["preexec_fn"] = lambda: [step() for step in confine]
            return await super().launch_kernel(wrapped, **kwargs)
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.destroy()
                self.cgroup = None
            if self.relay is not None:
                await self.relay.stop()
                self.relay = None
            if self.identity is not None:
                self._end_identity(keep=False)
            if fresh_stage and self.stage is not None:
                self.stage.remove()
                self.stage = None
            raise
        finally:
            for fd in [*([filter_fd] if filter_fd is not None else []), *etc_fds.values()]:
                os.close(fd)

    def _own_files(
        self, workdir: Path, readable: list[Path], ids: tuple[int, int], *, user_workdir: bool,
        mounts: tuple[list[Path], list[Path]] | None,
    ) -> tuple[Path, list[Path], dict[Path, Path]]:
        """The kernel's folder, what it reads where it is, and what it is mounted from copies.

        The user's working folder is replaced by a staging folder of the kernel's, with the
        inputs named in it copied in (staging.py); a thread's folder becomes the kernel's.
        Under bubblewrap (``mounts``: its other writable and read-only mounts), an input
        elsewhere that the kernel's uid cannot read is copied aside and mounted at its path;
        without bubblewrap it stays, and is refused, as is an interpreter out of reach.
        """
        if self.stage is None and user_workdir:
            self.stage = Stage.create(ids, user=workdir)
            for path in readable:
                if path.resolve().is_relative_to(workdir):
                    self.stage.bring_in(path.resolve())
        user = self.stage.user if self.stage is not None else None
        if user is not None:
            # Resolved, as the working folder is: a bind inside it would leave a mount point
            # in the staging folder, which must not come back as an empty file.
            readable = [p for p in readable if not p.resolve().is_relative_to(user)]
        sources: dict[Path, Path] = {}
        binds = None
        if mounts is not None:
            writable, private = mounts
            binds = kernel_binds(workdir, writable, [*readable, *private])
            if self.stage is not None and user is not None:
                sources[workdir] = self.stage.work
            blocked = unreadable(ids, readable, binds=binds, sources=sources)
            if blocked and self.stage is None:
                self.stage = Stage.create(ids)
            for path in blocked:
                assert self.stage is not None
                sources[path] = self.stage.copies.get(path) or self.stage.set_aside(path)
        elif self.stage is not None and user is not None:
            workdir = self.stage.work  # no mounts: the kernel's folder is the staging one itself
        # Before anything is changed for the kernel: a uid that cannot reach its interpreter
        # or its data is refused here, with the folder named.
        check_reach(ids, workdir=workdir, readable=readable, binds=binds, sources=sources)
        if user is None:
            # A thread's folder, not the user's: what an earlier kernel of the thread left
            # (another uid) becomes this one's; links are changed themselves, never what
            # they point to.
            chown_tree(workdir, *ids)
        return workdir, readable, sources

    def _bring_out(self) -> None:
        """Copy what the kernel made back into the user's folder; say what was not."""
        stage, self.stage = self.stage, None
        if stage is None:
            return
        try:
            notes = stage.bring_out() if stage.user is not None else []
        finally:
            stage.remove()
        for note in notes:
            message = f"not copied back into {stage.user}: {note}"
            print(f"WARNING: {message}", file=sys.stderr, flush=True)
            self.log.warning(message)

    async def _relay(self, host_file: Path, sockets: Path, ids: tuple[int, int] | None, limit: int) -> Path:
        """The kernel's own connection file, its sockets at ``kernel-<port>``; the host's
        addresses (``k-<port>``) made now, by the relay.

        The socket folder becomes root's, sticky, writable by the kernel's group: the kernel
        binds its sockets there but cannot remove or replace the relay's.
        """
        info = json.loads(host_file.read_text())
        own = dict(info, ip=f"{sockets}/kernel")
        kernel_file = host_file.with_name("kernel.json")
        fd = os.open(kernel_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(own, fh)
        if ids is not None:
            os.chown(kernel_file, *ids)  # 0600: only the kernel (and root) read the key
            os.chown(sockets, os.getuid(), ids[1])
            os.chmod(sockets, 0o1770)
        ports = [info[f"{channel}_port"] for channel in ("shell", "iopub", "stdin", "control", "hb")]
        self.relay = Relay(limit)
        await self.relay.start((f"{info['ip']}-{port}", f"{own['ip']}-{port}") for port in ports)
        return kernel_file

    def take_cut(self) -> int:
        """How many of the kernel's messages the relay cut since it was last asked."""
        return self.relay.take_cut() if self.relay is not None else 0

    _baseline: set[int] | None = None
    _idle: quiescence.View | None = None
    _rested: quiescence.View | None = None

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

    async def settle(self, within_s: float = 2.0) -> str | None:
        """Why something of the last step still runs in the kernel; ``None`` when nothing does.

        The first call (right after the set-up cell) records the kernel's idle shape, which
        later calls compare against (see quiescence.py). Without a cgroup (whose process list
        the host trusts) or on a machine whose system calls are not known, nothing is told.
        """
        if self.cgroup is None or not quiescence.supported():
            return None
        if self._idle is None:
            self._idle = self._rested = await quiescence.idle_shape(self.cgroup.pids)
            return None
        why, view = await quiescence.settle(self.cgroup.pids, self._idle, self._rested, within_s=within_s)
        if why is None:
            self._rested = view
        return why

    def pause(self) -> bool:
        """Freeze the kernel until :meth:`resume` (nothing of it runs meanwhile); whether it is."""
        return self.cgroup.freeze() if self.cgroup is not None else False

    def resume(self) -> None:
        """Let a frozen kernel run again."""
        if self.cgroup is not None and self.cgroup.frozen:
            self.cgroup.thaw()

    async def send_signal(self, signum: int) -> None:
        try:
            await super().send_signal(signum)
        finally:
            # A frozen kernel handles neither until it is thawed; a kill reaches all of its
            # processes first, so nothing of it runs in between.
            if signum == signal.SIGKILL and self.cgroup is not None:
                self.cgroup.kill()
            elif signum == signal.SIGTERM:
                self.resume()

    async def cleanup(self, restart: bool = False) -> None:
        self._baseline = None
        self._idle = self._rested = None
        await super().cleanup(restart=restart)
        if self.relay is not None:
            await self.relay.stop()
            self.relay = None
        if self.cgroup is not None:
            self.cgroup.destroy()
            self.cgroup = None
        if self.identity is not None:
            # Nothing of the kernel runs while its staging folder is copied out, and its uid
            # is not given back before.
            self._end_identity(keep=True)
        if not restart:
            self._bring_out()
        if self.identity is not None and not restart:
            self.identity.release()
            self.identity = None
        if self.sockets_dir is not None and not restart:
            shutil.rmtree(self.sockets_dir, ignore_errors=True)
            self.sockets_dir = None

    def _end_identity(self, *, keep: bool) -> None:
        """Stop whatever still runs as the kernel's uid; give the uid back unless restarting."""
        assert self.identity is not None
        uid = self.identity.uid
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child only signals and exits
            try:
                os.setgid(self.identity.gid)
                os.setuid(uid)
                os.kill(-1, 9)  # as that uid, -1 reaches exactly its own processes
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        if not keep:
            self.identity.release()
            self.identity = None

    def oom_killed(self) -> bool:
        """Whether the kernel died of its memory cap."""
        return self.cgroup is not None and self.cgroup.oom_killed()
