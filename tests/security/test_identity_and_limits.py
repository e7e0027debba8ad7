"""Each kernel is a user of its own, so its limits count only its own processes.

Before the fix every kernel ran as uid 65534: ``RLIMIT_NPROC`` was shared by all kernels
and by any other ``nobody`` process, so 240 of those elsewhere made every new kernel die,
and one kernel's fork bomb stopped all others from starting.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import textwrap

import pytest

from jupyter_analyst.kernel import KernelSession, SandboxPolicy

from .conftest import sandboxed_root

# Serial: 300 processes of nobody, a fork bomb up to its per-uid limit: no other test's kernels beside them.
pytestmark = [*sandboxed_root(), pytest.mark.asyncio, pytest.mark.serial]

POLICY = SandboxPolicy(processes=64)
FORK_BOMB = textwrap.dedent("""
    import os, time
    children = []
    while True:
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(120)
            os._exit(0)
        children.append(pid)
    print(len(children))
""")


async def _uid(session: KernelSession) -> int:
    r = await session.execute("import os; print(os.getuid(), os.getgid())")
    uid, gid = map(int, r.stdout.split())
    assert uid == gid
    return uid


async def test_two_kernels_have_two_identities_none_of_them_shared(tmp_path):
    async with KernelSession(tmp_path / "a", sandbox=POLICY) as a, KernelSession(tmp_path / "b", sandbox=POLICY) as b:
        ua, ub = await _uid(a), await _uid(b)
    assert ua != ub
    for uid in (ua, ub):
        assert POLICY.uid_first <= uid < POLICY.uid_first + POLICY.uid_count
        assert uid not in (0, 65534)


@pytest.fixture
def nobody_crowd():
    """300 processes of ``nobody`` running elsewhere on the machine."""
    setpriv = shutil.which("setpriv")
    assert setpriv is not None
    crowd = [subprocess.Popen([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "300"])
             for _ in range(300)]
    try:
        yield crowd
    finally:
        for proc in crowd:
            proc.kill()
        for proc in crowd:
            proc.wait()


async def test_a_crowd_of_nobody_processes_does_not_stop_a_kernel(tmp_path, nobody_crowd):
    async with KernelSession(tmp_path / "k", sandbox=POLICY) as session:
        r = await session.execute("import subprocess; print(subprocess.run(['true']).returncode)")
    assert r.status == "ok" and r.stdout.strip() == "0"


async def test_one_kernels_fork_bomb_leaves_the_others_alone(tmp_path):
    async with KernelSession(tmp_path / "bomb", sandbox=POLICY) as bomb:
        # Run the bomb without waiting for it: its children stay alive while B starts.
        bombing = asyncio.create_task(bomb.execute(FORK_BOMB, timeout=60))
        async with KernelSession(tmp_path / "b", sandbox=POLICY) as other:
            r = await other.execute("import subprocess; print(subprocess.run(['true']).returncode)")
            assert r.status == "ok" and r.stdout.strip() == "0"
        made = await bombing
        assert made.status == "ok" and 0 < int(made.stdout) < POLICY.processes
