"""Inside the sandbox, no new namespaces and no mounts.

Before the fix, ``unshare -Urm`` worked inside the kernel: a new user namespace in which
the code is root, and mounts over its view of the machine.
"""

from __future__ import annotations

import textwrap

import pytest

from jupyter_analyst.kernel import KernelSession, SandboxPolicy
from jupyter_analyst.kernel.sandbox.seccomp import supported

from .conftest import sandboxed_root

pytestmark = [*sandboxed_root(), pytest.mark.skipif(not supported(), reason="no seccomp filter for this machine"),
              pytest.mark.asyncio]

PROBE = textwrap.dedent("""
    import ctypes, errno, os, subprocess
    libc = ctypes.CDLL(None, use_errno=True)
    out = {}
    out["unshare_cmd"] = subprocess.run(["unshare", "-Urm", "true"], capture_output=True).returncode
    for name, flag in (("user", 0x10000000), ("mount", 0x20000), ("net", 0x40000000), ("pid", 0x20000000)):
        rc = libc.unshare(flag)
        out[name] = (rc, errno.errorcode.get(ctypes.get_errno()))
    rc = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
    out["mount"] = (rc, errno.errorcode.get(ctypes.get_errno()))
    out["fork_still_works"] = subprocess.run(["true"]).returncode
    print(out)
""")


async def test_user_namespaces_and_mounts_are_refused(tmp_path):
    async with KernelSession(tmp_path / "k", sandbox=SandboxPolicy()) as session:
        r = await session.execute(PROBE)
    assert r.status == "ok", r.error
    out = eval(r.stdout)  # a dict literal printed by the probe
    assert out["unshare_cmd"] != 0
    for name in ("user", "mount", "net", "pid"):
        assert out[name] == (-1, "EPERM"), name
    assert out["mount"] == (-1, "EPERM")
    assert out["fork_still_works"] == 0
