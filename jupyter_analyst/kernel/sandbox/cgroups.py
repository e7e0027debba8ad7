"""Per-kernel cgroups for memory and process limits, where this machine lets us make them.

cgroup v2 (one unified tree) and v1 (a tree per controller) are both handled. Without a
writable cgroup file system the sandbox falls back to rlimits, and says so in ``doctor``.
"""

from __future__ import annotations

import os
import signal
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

    def __init__(self, dirs: list[Path], version: int) -> None:
        self.dirs = dirs
        self.version = version

    @classmethod
    def create(cls, *, memory_mb: int, processes: int) -> KernelCgroup | None:
        """A new cgroup with these caps, or ``None`` when none can be made here."""
        name = f"kernel-{uuid.uuid4().hex[:12]}"
        try:
            v2 = _v2_root()
            if v2 is not None:
                parent = v2 / GROUP
                parent.mkdir(exist_ok=True)
                (v2 / "cgroup.subtree_control").write_text("+memory +pids")
                (parent / "cgroup.subtree_control").write_text("+memory +pids")
                group = parent / name
                group.mkdir()
                (group / "memory.max").write_text(str(memory_mb * 2**20))
                (group / "memory.swap.max").write_text("0") if (group / "memory.swap.max").exists() else None
                (group / "pids.max").write_text(str(processes))
                return cls([group], 2)
            memory, pids = ROOT / "memory", ROOT / "pids"
            if _writable(memory) and _writable(pids):
                dirs = []
                for base, settings in ((memory, {"memory.limit_in_bytes": memory_mb * 2**20}),
                                       (pids, {"pids.max": processes})):
                    group = base / GROUP / name
                    group.mkdir(parents=True)
                    for key, value in settings.items():
                        (group / key).write_text(str(value))
                    dirs.append(group)
                return cls(dirs, 1)
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

    def destroy(self) -> None:
        """Kill whatever is left in the group and remove it."""
        for _ in range(50):
            left = self.pids()
            if not left:
                break
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        for group in self.dirs:
            try:
                group.rmdir()
            except OSError:
                pass


def cgroup_support() -> str | None:
    """``"v2"``, ``"v1"`` or ``None``: which cgroup limits this process can set."""
    if _v2_root() is not None:
        return "v2"
    if _writable(ROOT / "memory") and _writable(ROOT / "pids"):
        return "v1"
    return None
