"""The README's set-up commands hold on a machine where another job has apt's lock: `make
demo` waits for it a while, then goes on without the sandbox, saying so, instead of failing."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APT_LOCKS = ("/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock", "/var/lib/apt/lists/lock",
             "/var/cache/apt/archives/lock")

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("apt-get") is None or shutil.which("make") is None,
                                reason="apt's locks are root's, and the recipe installs with apt only as root")


@contextmanager
def apt_locks_held() -> Iterator[None]:
    """apt's and dpkg's locks taken as another apt job takes them (fcntl record locks)."""
    fds = []
    try:
        for lock in APT_LOCKS:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o640)
            fds.append(fd)
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
    finally:
        for fd in fds:
            os.close(fd)


def path_without(tmp_path: Path, program: str) -> str:
    """A PATH with every program of this one but ``program``: a machine without it."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if not os.path.isdir(folder):
            continue
        for entry in os.scandir(folder):
            target = bin_dir / entry.name
            if entry.name != program and not target.exists() and os.access(entry.path, os.X_OK):
                target.symlink_to(entry.path)
    return str(bin_dir)


def test_sandbox_deps_goes_on_with_a_warning_while_another_job_holds_apts_lock(tmp_path):
    env = {**os.environ, "PATH": path_without(tmp_path, "bwrap")}
    with apt_locks_held():
        run = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "sandbox-deps", "APT_LOCK_TIMEOUT=1"],
                             env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "WARNING: bubblewrap is missing and could not be installed here" in run.stdout
    # apt was asked, and waited for the lock rather than failing at once.
    assert "lock" in run.stderr.lower()
