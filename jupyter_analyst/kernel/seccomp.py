"""A seccomp filter that keeps the kernel in the namespaces bubblewrap made for it.

Without it, model-written code can call ``unshare -Urm`` (a new user namespace in which it
is root) and mount file systems over its view of the machine, the first step of most
container escapes. The filter makes every call that creates or enters a namespace, or
mounts, fail with ``EPERM``: ``unshare``, ``setns``, ``clone``/``clone3`` with a
``CLONE_NEW*`` flag, ``mount`` and the new mount API, ``pivot_root``. ``clone3`` is
answered ``ENOSYS`` (its flags live in memory the filter cannot read), so the C library
falls back to ``clone``, whose flags it can. Everything else is allowed.

bubblewrap installs the program (``--seccomp FD``) after it has set up the sandbox, so
its own mounts are unaffected.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

# Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_ABS = 0x20
_JEQ = 0x15
_JGE = 0x35
_JSET = 0x45
_RET = 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000

#: Offsets in ``struct seccomp_data``: nr, arch, then args (low 32 bits first).
_NR, _ARCH, _ARG0 = 0, 4, 16

#: Every ``CLONE_NEW*`` flag: NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
CLONE_NEW_ANY = 0x80 | 0x20000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

#: Per machine: the audit arch, and the numbers of the refused calls and of clone/clone3.
_ARCHES = {
    "x86_64": (0xC000003E, {
        "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "mount_setattr": 442,
    }, 56, 435),
    "aarch64": (0xC00000B7, {
        "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41,
        "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "mount_setattr": 442,
    }, 220, 435),
}

#: x86_64's x32 calls carry this bit; they are refused as a whole.
_X32_BIT = 0x40000000


def supported(machine: str | None = None) -> bool:
    """Whether a filter can be built for this machine's architecture."""
    return (machine or platform.machine()) in _ARCHES


def program(machine: str | None = None) -> bytes:
    """The filter as ``struct sock_filter`` entries, ready for ``bwrap --seccomp``.

    >>> len(program("x86_64")) % 8, len(program("aarch64")) > 0
    (0, True)
    """
    machine = machine or platform.machine()
    arch, refused, clone, clone3 = _ARCHES[machine]
    # (op, jump-if-true label, jump-if-false label, k); labels resolve to relative jumps.
    code: list[tuple[int, str | None, str | None, int]] = [
        (_LD_ABS, None, None, _ARCH),
        (_JEQ, None, "other_arch", arch),
        (_LD_ABS, None, None, _NR),
    ]
    if machine == "x86_64":
        code.append((_JGE, "deny", None, _X32_BIT))
    code += [(_JEQ, "deny", None, nr) for nr in sorted(refused.values())]
    code += [
        (_JEQ, "clone", None, clone),
        (_JEQ, "enosys", None, clone3),
        (_RET, None, None, _ALLOW),
    ]
    labels = {"clone": len(code)}
    code += [
        (_LD_ABS, None, None, _ARG0),
        (_JSET, "deny", None, CLONE_NEW_ANY),
        (_RET, None, None, _ALLOW),
    ]
    labels["deny"] = len(code)
    code.append((_RET, None, None, _ERRNO | errno.EPERM))
    labels["enosys"] = labels["other_arch"] = len(code)
    code.append((_RET, None, None, _ERRNO | errno.ENOSYS))
    out = bytearray()
    for at, (op, true, false, k) in enumerate(code):
        jt = labels[true] - at - 1 if true else 0
        jf = labels[false] - at - 1 if false else 0
        assert 0 <= jt < 256 and 0 <= jf < 256
        out += struct.pack("=HBBI", op, jt, jf, k)
    return bytes(out)


def program_fd(machine: str | None = None) -> int:
    """A readable descriptor holding :func:`program`, for ``bwrap --seccomp FD``."""
    fd = os.memfd_create("analyst-seccomp", 0)  # not CLOEXEC: bubblewrap inherits it
    os.write(fd, program(machine))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
