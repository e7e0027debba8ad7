"""The kernel's uid reaches what it runs from, or the start is refused in one line.

Started as root, the kernel drops to a leased uid that may enter a folder only where any
user may. Before the fix, a clone in a 0700 folder (``mktemp -d``, a home folder) gave,
without bubblewrap, ``No module named ipykernel_launcher``; and on this machine, whose
Python lives under ``/root`` (0700), the fallback kernel silently ran on the system
Python's standard library instead of its own.

Each test runs a small program as this interpreter, as root, in a view of this machine
that bubblewrap builds around it (``--dev-bind / /``, then folders replaced on top): an
install under a private folder, or, for the fallback's own test, this install made
reachable. The kernels inside are the product's, started as usual.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import jupyter_analyst
from jupyter_analyst.kernel.sandbox.bwrap_command import find_bwrap

pytestmark = [
    pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap builds the views (make installs it)"),
    pytest.mark.skipif(os.geteuid() != 0, reason="a uid of the kernel's own needs root"),
]

PACKAGE = Path(jupyter_analyst.__file__).resolve().parent
VENV = Path(sys.prefix)


def run_in_view(code: str, *mounts: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """Run ``code`` with this interpreter in this machine's file system, changed by ``mounts``
    (bubblewrap arguments applied on top of it)."""
    bwrap = find_bwrap()
    assert bwrap is not None
    cmd = [bwrap, "--dev-bind", "/", "/", *mounts, "--", sys.executable, "-c", textwrap.dedent(code)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def reachable(*paths: Path) -> list[str]:
    """Mounts that let any user reach ``paths``: each folder above them that others may not
    enter is replaced by an empty 0755 one, and the paths are put back inside."""
    mounts: list[str] = []
    covered: set[Path] = set()
    for path in paths:
        for folder in reversed(path.parents):
            if folder in covered or any(c in folder.parents for c in covered):
                break
            if not os.stat(folder).st_mode & 0o001:
                mounts += ["--perms", "0755", "--tmpfs", str(folder)]
                covered.add(folder)
                break
    made = set(covered)
    for path in paths:
        if any(c in path.parents for c in covered):
            for folder in reversed(path.parents):
                if folder not in made and any(c in folder.parents for c in covered):
                    mounts += ["--perms", "0755", "--dir", str(folder)]  # bubblewrap's own are 0700
                    made.add(folder)
            mounts += ["--dev-bind", str(path), str(path)]
    return mounts


PROGRAM = """
import asyncio, json
from pathlib import Path
from jupyter_analyst.errors import KernelError
from jupyter_analyst.kernel import KernelSession, SandboxPolicy

async def main():
    try:
        async with KernelSession(Path(WORKDIR), sandbox=POLICY, start_attempts=2) as session:
            r = await session.execute(CODE)
            return {"status": r.status, "stdout": r.stdout, "error": r.error and r.error.evalue}
    except KernelError as exc:
        return {"refused": str(exc), "reason": exc.reason}

print(json.dumps(asyncio.run(main())))
"""

#: This venv seen at /usr/src/private/venv, inside a folder only root may enter. /usr is the
#: host's inside the sandbox too, so the folder stays 0700 there (/usr/src, which this view
#: replaces, holds sources no kernel reads).
PRIVATE_INSTALL = ("--perms", "0755", "--tmpfs", "/usr/src", "--perms", "0700", "--dir", "/usr/src/private",
                   "--dev-bind", str(VENV), "/usr/src/private/venv")
PRIVATE_PYTHON = "/usr/src/private/venv/bin/python"


def start_in_view(workdir: Path, policy: str, code: str, *mounts: str, python: str = sys.executable) -> dict:
    """Start a kernel (``policy`` is a ``SandboxPolicy(...)`` expression) in ``workdir`` from
    ``python``, in the view ``mounts`` make, run ``code`` in it; what it printed, or the refusal."""
    workdir.mkdir(exist_ok=True)
    program = (PROGRAM.replace("WORKDIR", repr(str(workdir))).replace("POLICY", policy)
               .replace("CODE", repr(textwrap.dedent(code))))
    done = run_in_view(as_python(python, program), *mounts)
    assert done.returncode == 0, done.stderr[-2000:]
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "stderr": done.stderr}


def as_python(python: str, code: str) -> str:
    """``code`` run by ``python``: through exec, so its prefix follows from where it is seen."""
    return f"import os; os.execv({python!r}, [{python!r}, '-c', {code!r}])"


def test_an_install_in_a_private_folder_runs_under_bubblewrap(tmp_path):
    out = start_in_view(tmp_path / "k", "SandboxPolicy()", "import os, sys; print(sys.prefix, os.getuid())",
                        *PRIVATE_INSTALL, python=PRIVATE_PYTHON)
    assert out.get("status") == "ok", out
    prefix, uid = out["stdout"].split()
    assert prefix == "/usr/src/private/venv" and int(uid) >= 900_000_000


def test_without_bubblewrap_an_install_in_a_private_folder_is_refused_in_one_line(tmp_path):
    out = start_in_view(tmp_path / "k", "SandboxPolicy(bwrap_path='/nonexistent/bwrap')", "print(1)",
                        *PRIVATE_INSTALL, *reachable(tmp_path), python=PRIVATE_PYTHON)
    assert out.get("reason") == "kernel_start_failed", out
    line = out["refused"]
    assert "\n" not in line and "(1 attempt)" in line, "refused at once: a second try would see the same"
    assert "cannot enter /usr/src/private (mode 0700, owner uid 0), which holds /usr/src/private/venv" in line
    assert "install bubblewrap" in line and "chmod o+x" in line


def test_without_bubblewrap_limits_still_apply_and_a_warning_is_loud(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-in-the-kernel")
    code = """
        import ctypes, errno, json, os, resource
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall(425, 8, ctypes.create_string_buffer(120))  # io_uring_setup
        print(json.dumps({"nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                          "core": resource.getrlimit(resource.RLIMIT_CORE)[1], "uid": os.getuid(),
                          "key": "OPENAI_API_KEY" in os.environ, "io_uring": errno.errorcode.get(ctypes.get_errno())}))
    """
    # The kernel sees the host's folders as they are: this install and this folder, made reachable.
    tmp_path.chmod(0o755)
    view = reachable(Path(sys.base_prefix).resolve(), VENV.resolve(), PACKAGE, tmp_path)
    out = start_in_view(tmp_path / "k", "SandboxPolicy(bwrap_path='/nonexistent/bwrap', open_files=321)", code, *view)
    assert out.get("status") == "ok", out
    seen = json.loads(out["stdout"])
    assert seen["nofile"] == 321 and 0 <= seen["core"] <= 1  # RLIM_INFINITY reads -1
    assert 900_000_000 <= seen["uid"] < 900_000_000 + 4096
    assert seen["key"] is False
    assert seen["io_uring"] == "EPERM", "the seccomp filter holds without bubblewrap too"
    assert "bubblewrap (bwrap) is not installed" in out["stderr"]


def test_doctor_names_the_folder_a_kernel_could_not_enter(tmp_path):
    doctor = "from jupyter_analyst.kernel.sandbox.doctor import report, run_checks; print(report(run_checks()))"
    with_bwrap = run_in_view(as_python(PRIVATE_PYTHON, doctor), *PRIVATE_INSTALL)
    hidden = str(find_bwrap())
    without = run_in_view(as_python(PRIVATE_PYTHON, doctor), *PRIVATE_INSTALL, "--ro-bind", "/dev/null", hidden)
    assert "ok  kernel reaches its Python" in with_bwrap.stdout, with_bwrap.stdout + with_bwrap.stderr
    assert "NO  bubblewrap" in without.stdout and "NO  kernel reaches its Python" in without.stdout, without.stdout
    line = next(line for line in without.stdout.splitlines() if line.startswith("NO  kernel reaches"))
    assert "cannot enter /usr/src/private (mode 0700, owner uid 0), which holds /usr/src/private/venv" in line
    assert "install bubblewrap" in without.stdout.split("missing:")[1]
