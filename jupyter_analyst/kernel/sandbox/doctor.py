"""``jupyter analyst doctor``: which sandbox layers are active on this machine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from pydantic import BaseModel

from . import quiescence, seccomp
from .cgroups import cgroup_support, freezer_support
from .uids import leases_in_use
from ..outputs import OutputCaps
from .reach import remedy
from .bwrap_command import SandboxPolicy, find_bwrap, interpreter_paths, out_of_reach, running_as_root


class Check(BaseModel):
    """One layer: whether it is active and what to do when it is not."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None


def _bwrap_runs(bwrap: str, *flags: str) -> tuple[bool, str]:
    cmd = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *flags, "true"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return out.returncode == 0, (out.stderr.strip().splitlines() or ["ok"])[-1]


def run_checks(policy: SandboxPolicy | None = None, caps: OutputCaps | None = None) -> list[Check]:
    """Probe each layer of the sandbox (with the given policy and caps, or the defaults)."""
    policy = policy or SandboxPolicy()
    caps = caps or OutputCaps()
    checks: list[Check] = []
    bwrap = find_bwrap()
    if bwrap is None:
        checks.append(Check(name="bubblewrap", ok=False, detail="not installed: kernels run without isolation",
                            fix="apt-get install bubblewrap (make does this when run as root)"))
    else:
        version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip()
        checks.append(Check(name="bubblewrap", ok=True, detail=f"{version} at {bwrap}"))
        extra = () if running_as_root() else ("--unshare-user",)
        for name, flag in (("PID namespace", "--unshare-pid"), ("network namespace", "--unshare-net"),
                           ("IPC namespace", "--unshare-ipc")):
            ok, detail = _bwrap_runs(bwrap, *extra, flag)
            checks.append(Check(name=name, ok=ok, detail="active" if ok else detail,
                                fix=None if ok else "enable unprivileged user namespaces "
                                "(sysctl kernel.unprivileged_userns_clone=1)"))
    support = cgroup_support()
    checks.append(Check(
        name="cgroup memory and process limits", ok=support is not None,
        detail=f"cgroup {support}, writable" if support else "no writable cgroup: memory is capped with RLIMIT_AS",
        fix=None if support else "run as root or delegate a cgroup to this user",
    ))
    for tool, purpose in (("prlimit", "rlimits (CPU, processes, file size, open files; no core dumps)"),
                          ("setpriv", "dropping root to an unprivileged uid")):
        path = shutil.which(tool)
        needed = tool == "prlimit" or running_as_root()
        checks.append(Check(name=tool, ok=path is not None or not needed,
                            detail=f"{purpose}: {path}" if path else f"{purpose}: missing",
                            fix=None if path else "apt-get install util-linux"))
    checks.append(_identity(policy))
    if running_as_root():
        checks.append(_reach(policy, bubblewrap=bwrap is not None))
    checks.append(Check(
        name="kernel interfaces (seccomp)", ok=seccomp.supported(),
        detail=f"refused: {', '.join(seccomp.REFUSED)}, socket families but Unix and IP, other ABIs"
        if seccomp.supported() else "no seccomp filter for this architecture: code in the kernel may create "
        "namespaces, use io_uring, open netlink sockets...",
        fix=None if seccomp.supported() else "run on x86_64 or aarch64",
    ))
    checks.append(_step_end())
    checks.append(Check(name="output caps", ok=True, detail=caps.describe()))
    return checks


def _step_end() -> Check:
    """Whether a step's end is checked from outside the kernel, and the kernel frozen between steps."""
    freezer = freezer_support()
    if freezer is None or not quiescence.supported():
        why = "no writable cgroup" if freezer is None else "this machine's system calls are not known here"
        return Check(name="step end checked from outside", ok=False,
                     detail=f"{why}: the kernel's own word ends a step, and a thread a step leaves runs on",
                     fix="run as root or delegate a cgroup to this user" if freezer is None else "run on x86_64 or aarch64")
    return Check(name="step end checked from outside", ok=True,
                 detail=f"in /proc at each step's end; the kernel is frozen between steps ({freezer})")


def _identity(policy: SandboxPolicy) -> Check:
    """Whether each kernel gets a uid of its own (root only), and how many are in use."""
    if not running_as_root():
        return Check(name="per-kernel identity", ok=False,
                     detail=f"not root: kernels run as uid {os.getuid()} and share its process limit",
                     fix="run as root to give each kernel a uid of its own (the cgroup limits still apply)")
    last = policy.uid_first + policy.uid_count - 1
    return Check(name="per-kernel identity", ok=True,
                 detail=f"each kernel its own uid in {policy.uid_first}-{last} ({policy.uid_count} kernels at most; "
                        f"{leases_in_use()} in use now); its process limit counts only its own processes")


def _reach(policy: SandboxPolicy, *, bubblewrap: bool) -> Check:
    """Whether a kernel's uid reaches this interpreter and its packages (see reach.py)."""
    identity = (policy.uid_first, policy.uid_first)
    binds = [(path, False) for path in interpreter_paths()] if bubblewrap else None
    blocked = out_of_reach(identity, binds=binds)
    if not blocked:
        return Check(name="kernel reaches its Python", ok=True,
                     detail=f"uid {identity[0]} reads {sys.prefix} and what it runs from")
    return Check(name="kernel reaches its Python", ok=False,
                 detail=f"uid {identity[0]} " + "; it ".join(b.describe() for b in blocked) + ": kernels are refused",
                 fix=remedy(blocked, bubblewrap=bubblewrap))


def report(checks: list[Check]) -> str:
    """The checks as aligned lines, then what is missing."""
    width = max(len(c.name) for c in checks)
    lines = [f"{'ok ' if c.ok else 'NO '} {c.name:<{width}}  {c.detail}" for c in checks]
    missing = [c for c in checks if not c.ok]
    if missing:
        lines.append("")
        lines.append("missing:")
        lines += [f"  - {c.name}: {c.fix}" for c in missing if c.fix]
    else:
        lines.append("\nall sandbox layers are active")
    return "\n".join(lines)


def main() -> int:
    """Print the report; non-zero when a layer is missing."""
    checks = run_checks()
    print(report(checks))
    return 0 if all(c.ok for c in checks) else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())


