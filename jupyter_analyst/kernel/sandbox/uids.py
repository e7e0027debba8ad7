"""A user id of its own for each sandboxed kernel.

``RLIMIT_NPROC`` counts every process of a *user*, so kernels that share a uid share one
process budget: a fork bomb in one stops all others from starting, and any unrelated
process of that uid (``nobody``'s, say) eats into it. Started as root, each kernel
therefore runs as a uid leased from a configurable range, which no other kernel on the
machine holds while it runs (whichever process started it) and which no process is using
when it is leased. Its limits then count only its own processes.

A lease is an exclusive ``flock`` on a file named after the uid in a root-owned folder:
the kernel system releases it when the leasing process dies, so a crash never strands a
uid.
"""

from __future__ import annotations

import fcntl
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ...errors import KernelError

#: Where leases are kept (root-owned, not writable by anyone else).
LEASE_DIR = Path("/run/jupyter-analyst/uids")


@dataclass
class KernelIdentity:
    """A leased uid (and the gid of the same number) for one kernel."""

    uid: int
    gid: int
    _fd: int | None = None

    def release(self) -> None:
        """Give the uid back (closing the lock file drops the lock)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _lease_dir(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True, mode=0o755)
    st = os.lstat(root)
    # Leases are only worth anything if no one but root can add or remove them.
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise KernelError(f"{root} is not a root-owned folder that only root may write",
                          reason="sandbox_identity", hint=f"remove {root} and start again")
    return root


def uids_in_use() -> set[int]:
    """The real uids of the processes running now (from ``/proc``)."""
    used: set[int] = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            used.add(os.stat(entry.path).st_uid)
        except OSError:
            continue  # ended meanwhile
    return used


def lease(first: int, count: int, *, root: Path = LEASE_DIR) -> KernelIdentity:
    """Lease a free uid of ``[first, first + count)`` for one kernel."""
    folder = _lease_dir(root)
    busy = uids_in_use()
    for uid in range(first, first + count):
        if uid in busy:
            continue
        fd = os.open(folder / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        # Leased: check again that nothing runs as it (a process of a crashed leaser).
        if uid in uids_in_use():
            os.close(fd)
            continue
        return KernelIdentity(uid, uid, fd)
    raise KernelError(
        f"no free kernel identity: all {count} uids from {first} are in use",
        reason="sandbox_identity", hint="stop idle kernels or widen SandboxPolicy.uid_count",
    )


def leases_in_use(root: Path = LEASE_DIR) -> int:
    """How many uids are leased by running kernels now (a held lock is a live lease)."""
    if not root.is_dir():
        return 0
    held = 0
    for entry in os.scandir(root):
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            held += 1
        finally:
            os.close(fd)  # also drops the lock if it was taken here
    return held
