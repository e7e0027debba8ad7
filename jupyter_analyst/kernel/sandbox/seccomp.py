"""A seccomp filter that keeps the kernel's code away from kernel interfaces it never needs.

A Python data kernel reads and writes files, maps memory, runs threads and child processes,
and talks over Unix and IP sockets. Everything the Linux kernel offers beyond that is attack
surface the model's code could use to escape or to reach the host, so the filter refuses
it, by class (each call answers ``EPERM`` unless said otherwise):

* **namespaces and mounts**: ``unshare``, ``setns``, ``clone`` with a ``CLONE_NEW*`` flag,
  ``mount``, ``umount2``, ``pivot_root``, ``chroot`` and the new mount API (``open_tree``,
  ``open_tree_attr``, ``move_mount``, ``fsopen``, ``fsconfig``, ``fsmount``, ``fspick``,
  ``mount_setattr``, ``statmount``, ``listmount``). ``unshare -Urm`` (a user namespace in
  which the code is root, then mounts over its view) is the first step of most container
  escapes. ``clone3`` answers ``ENOSYS`` (its flags live in memory the filter cannot read),
  so the C library falls back to ``clone``, whose flags it can.
* **asynchronous kernel interfaces**: ``io_uring_setup``/``io_uring_enter``/
  ``io_uring_register`` and ``userfaultfd`` (also its ``/dev/userfaultfd`` route, the
  ``USERFAULTFD_IOC_NEW`` ioctl): the source of many kernel exploits, and of none of
  Python's I/O.
* **kernel keyrings**: ``add_key``, ``request_key``, ``keyctl``: keys are per user, so a
  kernel could read or plant what another process of its uid keeps there.
* **kernel programs and tracing**: ``bpf``, ``perf_event_open``.
* **other processes**: ``ptrace``, ``process_vm_readv``/``process_vm_writev``, ``kcmp``,
  ``pidfd_getfd``, ``process_madvise``: no debugger runs in the kernel.
* **the machine itself**: ``kexec_load``, ``kexec_file_load``, ``init_module``,
  ``finit_module``, ``delete_module``, ``reboot``, ``swapon``, ``swapoff``, ``acct``,
  ``settimeofday``, ``clock_settime``, ``clock_adjtime``, ``adjtimex``, ``sethostname``,
  ``setdomainname``, ``syslog``, ``quotactl``, ``quotactl_fd``, ``vhangup``; these need
  privileges the kernel does not have, refused anyway so a kernel bug in their checks is
  out of reach.
* **file handles**: ``name_to_handle_at``, ``open_by_handle_at`` (opens a file by inode,
  past every folder's permissions), ``fanotify_init``.
* **old x86 interfaces**: ``modify_ldt``, ``iopl``, ``ioperm``, ``uselib``,
  ``lookup_dcookie``.
* **socket families** other than ``AF_UNIX``, ``AF_INET`` and ``AF_INET6`` (ZMQ, asyncio and
  the network when the policy allows it): ``AF_NETLINK``, ``AF_VSOCK``, ``AF_PACKET``,
  ``AF_ALG``, ``AF_KEY``, ``AF_XDP``, Bluetooth, CAN, TIPC, RDS... answer ``EOPNOTSUPP``:
  glibc's ``getifaddrs`` (netlink) then fails with it, which libzmq (ipykernel binds its
  IOPub pipe on ``tcp://127.0.0.1``, first tried as an interface name) takes for "no
  interface of that name" and goes on; ``EPERM`` or ``EAFNOSUPPORT`` make it abort.
* **personality** flags other than the default and the query (``ADDR_NO_RANDOMIZE`` turns
  off address randomisation, ``READ_IMPLIES_EXEC`` makes data executable).
* **terminal injection**: the ``TIOCSTI`` and ``TIOCLINUX`` ioctls.

**Other ABIs.** The filter first checks the call's architecture: a call through any other
ABI (i386 through ``int 0x80`` on x86_64, 32-bit ARM on aarch64) answers ``ENOSYS``
whatever it is, and x86_64's x32 calls (numbers with bit 30 set) ``EPERM``; a filter that
listed only the native numbers would be bypassed through them.

bubblewrap installs the program (``--seccomp FD``) after it has set up the sandbox, so its
own mounts are unaffected; without bubblewrap :func:`installer` puts it on the kernel's
process between fork and exec.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from collections.abc import Callable

# Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
_LD_ABS = 0x20
_JEQ = 0x15
_JGE = 0x35
_JSET = 0x45
_RET = 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000

#: Offsets in ``struct seccomp_data``: nr, arch, then args (low 32 bits first, 8 bytes each).
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24

#: Every ``CLONE_NEW*`` flag: NEWTIME, NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET.
CLONE_NEW_ANY = 0x80 | 0x20000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

#: The socket families a kernel may open: Unix (ZMQ, asyncio), IPv4 and IPv6.
SOCKET_FAMILIES = (1, 2, 10)

#: ``personality`` arguments allowed: ``PER_LINUX`` and the query ``0xffffffff``.
PERSONALITIES = (0, 0xFFFFFFFF)

#: ioctl requests refused on any descriptor: TIOCSTI, TIOCLINUX, USERFAULTFD_IOC_NEW.
REFUSED_IOCTLS = (0x5412, 0x541C, 0xAA00)

#: The calls refused outright, by the class of interface they belong to (see the docstring).
REFUSED: dict[str, tuple[str, ...]] = {
    "namespaces and mounts": (
        "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "open_tree", "open_tree_attr", "move_mount",
        "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "statmount", "listmount",
    ),
    "asynchronous kernel interfaces": ("io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd"),
    "kernel keyrings": ("add_key", "request_key", "keyctl"),
    "kernel programs and tracing": ("bpf", "perf_event_open"),
    "other processes": ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise"),
    "the machine itself": (
        "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff",
        "acct", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "syslog",
        "quotactl", "quotactl_fd", "vhangup",
    ),
    "file handles": ("name_to_handle_at", "open_by_handle_at", "fanotify_init"),
    "old x86 interfaces": ("modify_ldt", "iopl", "ioperm", "uselib", "lookup_dcookie"),
}

# Numbers shared by every architecture since Linux 5.1 (the unified table from 424 on).
_UNIFIED = {
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428, "move_mount": 429,
    "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "clone3": 435, "pidfd_getfd": 438,
    "process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443, "statmount": 457, "listmount": 458,
    "open_tree_attr": 467,
}


class Arch:
    """One machine's audit architecture and call numbers (asm/unistd_64.h, asm-generic/unistd.h)."""

    def __init__(self, audit: int, numbers: dict[str, int], *, x32: bool = False) -> None:
        self.audit = audit
        self.numbers = {**numbers, **_UNIFIED}
        self.x32 = x32


ARCHES = {
    "x86_64": Arch(0xC000003E, {
        "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "clone": 56,
        "userfaultfd": 323, "add_key": 248, "request_key": 249, "keyctl": 250, "bpf": 321, "perf_event_open": 298,
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "kexec_load": 246,
        "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176, "reboot": 169,
        "swapon": 167, "swapoff": 168, "acct": 163, "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305,
        "adjtimex": 159, "sethostname": 170, "setdomainname": 171, "syslog": 103, "quotactl": 179, "vhangup": 153,
        "name_to_handle_at": 303, "open_by_handle_at": 304, "fanotify_init": 300, "modify_ldt": 154, "iopl": 172,
        "ioperm": 173, "uselib": 134, "lookup_dcookie": 212, "socket": 41, "socketpair": 53, "personality": 135,
        "ioctl": 16,
    }, x32=True),
    "aarch64": Arch(0xC00000B7, {
        "unshare": 97, "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "clone": 220,
        "userfaultfd": 282, "add_key": 217, "request_key": 218, "keyctl": 219, "bpf": 280, "perf_event_open": 241,
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "kexec_load": 104,
        "kexec_file_load": 294, "init_module": 105, "finit_module": 273, "delete_module": 106, "reboot": 142,
        "swapon": 224, "swapoff": 225, "acct": 89, "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266,
        "adjtimex": 171, "sethostname": 161, "setdomainname": 162, "syslog": 116, "quotactl": 60, "vhangup": 58,
        "name_to_handle_at": 264, "open_by_handle_at": 265, "fanotify_init": 262, "lookup_dcookie": 18,
        "socket": 198, "socketpair": 199, "personality": 92, "ioctl": 29,
    }),
}

#: x86_64's x32 calls carry this bit; they are refused as a whole.
X32_BIT = 0x40000000


def supported(machine: str | None = None) -> bool:
    """Whether a filter can be built for this machine's architecture."""
    return (machine or platform.machine()) in ARCHES


def refused_calls(machine: str | None = None) -> list[str]:
    """The calls refused outright on this machine (a class's call the machine lacks is left out).

    >>> "io_uring_setup" in refused_calls("aarch64"), "modify_ldt" in refused_calls("aarch64")
    (True, False)
    """
    numbers = ARCHES[machine or platform.machine()].numbers
    return [name for names in REFUSED.values() for name in names if name in numbers]


def program(machine: str | None = None) -> bytes:
    """The filter as ``struct sock_filter`` entries, ready for ``bwrap --seccomp``.

    >>> len(program("x86_64")) % 8, len(program("aarch64")) > 0
    (0, True)
    """
    arch = ARCHES[machine or platform.machine()]
    nr = arch.numbers
    # (op, jump-if-true label, jump-if-false label, k); labels resolve to relative jumps.
    code: list[tuple[int, str | None, str | None, int]] = [
        (_LD_ABS, None, None, _ARCH),
        (_JEQ, None, "foreign", arch.audit),
        (_LD_ABS, None, None, _NR),
    ]
    if arch.x32:
        code.append((_JGE, "deny", None, X32_BIT))
    code += [(_JEQ, "deny", None, n) for n in sorted({nr[name] for name in refused_calls(machine)})]
    code += [
        (_JEQ, "clone", None, nr["clone"]),
        (_JEQ, "enosys", None, nr["clone3"]),
        (_JEQ, "family", None, nr["socket"]),
        (_JEQ, "family", None, nr["socketpair"]),
        (_JEQ, "personality", None, nr["personality"]),
        (_JEQ, "ioctl", None, nr["ioctl"]),
        (_RET, None, None, _ALLOW),
    ]
    labels: dict[str, int] = {}

    def block(label: str, load: int, checks: list[tuple[int, str | None, str | None, int]], last: int) -> None:
        labels[label] = len(code)
        code.append((_LD_ABS, None, None, load))
        code.extend(checks)
        code.append((_RET, None, None, last))

    block("clone", _ARG0, [(_JSET, "deny", None, CLONE_NEW_ANY)], _ALLOW)
    block("family", _ARG0, [(_JEQ, "allow", None, f) for f in SOCKET_FAMILIES], _ERRNO | errno.EOPNOTSUPP)
    block("personality", _ARG0, [(_JEQ, "allow", None, p) for p in PERSONALITIES], _ERRNO | errno.EPERM)
    block("ioctl", _ARG1, [(_JEQ, "deny", None, r) for r in REFUSED_IOCTLS], _ALLOW)
    for label, value in (("allow", _ALLOW), ("deny", _ERRNO | errno.EPERM), ("enosys", _ERRNO | errno.ENOSYS)):
        labels[label] = len(code)
        code.append((_RET, None, None, value))
    labels["foreign"] = labels["enosys"]
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


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


def installer(machine: str | None = None) -> Callable[[], None]:
    """A function that puts the filter on the calling process, for ``preexec_fn``.

    Everything is prepared here, in the parent; the returned function only makes two
    ``prctl`` calls (no new privileges, then the filter), so it is safe between fork and
    exec. The filter holds across exec and is inherited by every child.
    """
    code = program(machine)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _SockFprog(len(code) // 8, ctypes.addressof(buffer))
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    keep = (buffer, fprog)  # alive as long as the function

    def install() -> None:
        if prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(keep[1]), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "the seccomp filter could not be installed")

    return install
