"""Per-kernel cgroups for memory and process limits, where this machine lets us make them.

cgroup v2 (one unified tree) and v1 (a tree per controller) are both handled. Without a
writable cgroup file system the sandbox falls back to rlimits, and says so in ``doctor``.

The group also *freezes* the kernel between steps (cgroup v2's ``cgroup.freeze``, v1's
freezer controller), so nothing a step left behind runs while no step does: the kernel's
processes are stopped by the host's kernel, from outside, whatever they do. A frozen
process keeps a ``SIGKILL`` pending until it is thawed, so whatever kills a frozen kernel
thaws it afterwards (nothing runs in between: the kill is handled first). That includes
bubblewrap's ``--die-with-parent``: a host process that dies leaves its frozen kernels
behind, so each group is named after the process that made it, and the next one to make a
group stops the kernels of groups whose maker is gone.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
GROUP = "jupyter-analyst"


def _writable(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


def _v2_root() -> Path | None:
    for base in (ROOT, ROOT / "unified"):
        controllers = base / "cgroup.controllers"
        if controllers.exists() and _writable(base):
            names = controllers.read_text().split()
            if "memory" in names and "pids" in names:
                return base
    return None


class KernelCgroup:
    """Memory and process caps for one kernel's process tree."""

    def __init__(self, dirs: list[Path], version: int, freezer: Path | None = None) -> None:
        self.dirs = dirs
        self.version = version
        #: The group whose freezer stops the kernel (``None``: the processes are stopped
        #: with ``SIGSTOP`` instead).
        self.freezer = freezer
        self.frozen = False

    @classmethod
    def create(cls, *, memory_mb: int, processes: int) -> KernelCgroup | None:
        """A new cgroup with these caps, or ``None`` when none can be made here."""
        name = f"kernel-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        try:
            v2 = _v2_root()
            if v2 is not None:
                parent = v2 / GROUP
                parent.mkdir(exist_ok=True)
                sweep_orphans([parent])
                (v2 / "cgroup.subtree_control").write_text("+memory +pids")
                (parent / "cgroup.subtree_control").write_text("+memory +pids")
                group = parent / name
                group.mkdir()
                (group / "memory.max").write_text(str(memory_mb * 2**20))
                (group / "memory.swap.max").write_text("0") if (group / "memory.swap.max").exists() else None
                (group / "pids.max").write_text(str(processes))
                return cls([group], 2, group if (group / "cgroup.freeze").exists() else None)
            memory, pids, freezer = ROOT / "memory", ROOT / "pids", ROOT / "freezer"
            if _writable(memory) and _writable(pids):
                sweep_orphans([memory / GROUP, pids / GROUP, freezer / GROUP])
                dirs = []
                for base, settings in ((memory, {"memory.limit_in_bytes": memory_mb * 2**20}),
                                       (pids, {"pids.max": processes})):
                    group = base / GROUP / name
                    group.mkdir(parents=True)
                    for key, value in settings.items():
                        (group / key).write_text(str(value))
                    dirs.append(group)
                cold: Path | None = None
                if _writable(freezer):
                    cold = freezer / GROUP / name
                    cold.mkdir(parents=True)
                    dirs.append(cold)
                return cls(dirs, 1, cold)
        except OSError:
            return None
        return None

    def add(self, pid: int) -> None:
        """Put a process (and so its future children) in the group."""
        for group in self.dirs:
            (group / "cgroup.procs").write_text(str(pid))

    def join(self) -> None:
        """Put the calling process in the group (used between fork and exec)."""
        self.add(os.getpid())

    def pids(self) -> list[int]:
        """The processes in the group now."""
        found: set[int] = set()
        for group in self.dirs:
            try:
                found.update(int(x) for x in (group / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return sorted(found)

    def oom_killed(self) -> bool:
        """Whether the kernel hit its memory cap."""
        for group in self.dirs:
            for name, key in (("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")):
                path = group / name
                if path.exists():
                    for line in path.read_text().splitlines():
                        parts = line.split()
                        if len(parts) == 2 and parts[0] == key and int(parts[1]) > 0:
                            return True
        return False

    def freeze(self, wait_s: float = 1.0) -> bool:
        """Stop every process of the group; whether all were stopped within ``wait_s``.

        A process in the middle of a disk write is stopped when it ends; one that forks
        meanwhile is stopped too (with the freezer the child is in the group; with
        ``SIGSTOP`` the group is looked at again until nothing new runs).
        """
        self.frozen = True
        deadline = time.monotonic() + wait_s
        if self.freezer is not None:
            state, value, done = (("cgroup.freeze", "1", "frozen 1") if self.version == 2
                                  else ("freezer.state", "FROZEN", "FROZEN"))
            events = "cgroup.events" if self.version == 2 else "freezer.state"
            try:
                (self.freezer / state).write_text(value)
                while time.monotonic() < deadline:
                    if done in (self.freezer / events).read_text():
                        return True
                    time.sleep(0.0005)
            except OSError:
                pass  # the group is gone with its processes
            return False
        while time.monotonic() < deadline:
            running = [pid for pid in self.pids() if _state(pid) not in ("T", "Z", "X", None)]
            if not running:
                return True
            for pid in running:
                _signal(pid, signal.SIGSTOP)
            time.sleep(0.0005)
        return False

    def is_frozen(self) -> bool:
        """Whether every process of the group is stopped now, as the host's kernel reports it."""
        if self.freezer is not None:
            events = "cgroup.events" if self.version == 2 else "freezer.state"
            done = "frozen 1" if self.version == 2 else "FROZEN"
            try:
                return done in (self.freezer / events).read_text()
            except OSError:
                return False
        return all(_state(pid) in ("T", "Z", "X", None) for pid in self.pids())

    def thaw(self) -> None:
        """Let the group's processes run again."""
        self.frozen = False
        if self.freezer is not None:
            state, value = ("cgroup.freeze", "0") if self.version == 2 else ("freezer.state", "THAWED")
            try:
                (self.freezer / state).write_text(value)
            except OSError:
                pass  # the group is gone with its processes
            return
        for pid in self.pids():
            _signal(pid, signal.SIGCONT)

    def kill(self) -> None:
        """Kill every process of the group (frozen or not)."""
        for _ in range(50):
            left = self.pids()
            if not left:
                break
            for pid in left:
                _signal(pid, signal.SIGKILL)
            # A frozen process handles the kill when thawed, before it runs anything else.
            self.thaw()
            time.sleep(0.001)

    def destroy(self) -> None:
        """Kill whatever is left in the group and remove it."""
        self.kill()
        for group in self.dirs:
            try:
                group.rmdir()
            except OSError:
                pass


def sweep_orphans(parents: list[Path]) -> int:
    """Stop the kernels of groups under ``parents`` whose maker (the pid in their name) is
    gone, and remove the groups; returns how many. Groups of live processes are left alone.

    >>> sweep_orphans([Path("/nonexistent")])
    0
    """
    orphans: dict[str, list[Path]] = {}
    for parent in parents:
        try:
            entries = list(parent.iterdir())
        except OSError:
            continue
        for group in entries:
            parts = group.name.split("-")
            if len(parts) == 3 and parts[0] == "kernel" and parts[1].isdigit() and not _alive(int(parts[1])):
                orphans.setdefault(group.name, []).append(group)
    for groups in orphans.values():
        freezer = next((g for g in groups if (g / "freezer.state").exists() or (g / "cgroup.freeze").exists()), None)
        left = KernelCgroup(groups, 2 if (groups[0] / "cgroup.controllers").exists() else 1, freezer)
        left.frozen = True
        left.destroy()
    return len(orphans)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's
    return True


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:
        pass  # ended meanwhile


def _state(pid: int) -> str | None:
    """A process's state letter (``None`` when it has ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return None


def freezer_support() -> str | None:
    """How a kernel is frozen between steps here: ``"cgroup.freeze"`` (v2), ``"freezer"``
    (v1), ``"SIGSTOP"`` (a cgroup without a freezer), or ``None`` (no cgroup at all)."""
    v2 = _v2_root()
    if v2 is not None:
        return "cgroup.freeze" if (v2 / "cgroup.freeze").exists() or any(v2.glob("*/cgroup.freeze")) else "SIGSTOP"
    if _writable(ROOT / "memory") and _writable(ROOT / "pids"):
        return "freezer" if _writable(ROOT / "freezer") else "SIGSTOP"
    return None


def cgroup_support() -> str | None:
    """``"v2"``, ``"v1"`` or ``None``: which cgroup limits this process can set."""
    if _v2_root() is not None:
        return "v2"
    if _writable(ROOT / "memory") and _writable(ROOT / "pids"):
        return "v1"
    return None
