"""Kernel interfaces a Python data kernel never needs are refused to the model's code.

Before the fix, model code in the sandbox could set up ``io_uring`` and user-mode
``userfaultfd`` (the raw material of most recent kernel exploits), open ``AF_VSOCK`` and
``AF_NETLINK`` sockets, keep keys in the kernel keyring, open perf events, ptrace and read
the memory of its own children, turn off address randomisation, and raise ``RLIMIT_CORE``
(its hard limit was unlimited) so that a crash wrote a 305 MB core, or on a host with a
piped ``core_pattern`` ran the root core helper on it.

Each probe is a ``run_python`` step of one turn through the real loop; each prints what the
calls answered, by errno name.
"""

from __future__ import annotations

import errno
import json
import platform

import pytest

from jupyter_analyst.kernel.sandbox.seccomp import supported
from jupyter_analyst.testing import python_step, text_step

from .conftest import results_of, sandboxed_root, scripted

pytestmark = [*sandboxed_root(), pytest.mark.skipif(not supported(), reason="no seccomp filter for this machine")]

#: The numbers of the calls probed (asm/unistd_64.h; asm-generic/unistd.h for aarch64).
NUMBERS = {
    "x86_64": {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "userfaultfd": 323,
               "add_key": 248, "request_key": 249, "keyctl": 250, "perf_event_open": 298, "bpf": 321, "ptrace": 101,
               "process_vm_readv": 310, "kcmp": 312, "personality": 135},
    "aarch64": {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "userfaultfd": 282,
                "add_key": 217, "request_key": 218, "keyctl": 219, "perf_event_open": 241, "bpf": 280, "ptrace": 117,
                "process_vm_readv": 270, "kcmp": 272, "personality": 92},
}
NR = NUMBERS.get(platform.machine(), {})

HEAD = f"""
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
NR = {NR!r}
def call(name, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(ctypes.c_long(NR[name]), *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return "ok" if rc >= 0 else errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno())
"""

IO_URING = HEAD + """
params = ctypes.create_string_buffer(120)
print(json.dumps({"setup": call("io_uring_setup", 8, params), "enter": call("io_uring_enter", 3, 0, 0, 0, None, 0),
                  "register": call("io_uring_register", 3, 0, None, 0)}))
"""

USERFAULTFD = HEAD + """
out = {"user_mode": call("userfaultfd", 1 | os.O_CLOEXEC)}  # UFFD_USER_MODE_ONLY: no privilege needed
try:
    fd = os.open("/dev/userfaultfd", os.O_RDWR | os.O_CLOEXEC)
except OSError as exc:
    out["device"] = errno.errorcode[exc.errno]
else:
    out["device"] = "opened"
    ctypes.set_errno(0)
    out["device_ioctl"] = "ok" if libc.ioctl(fd, 0xAA00, os.O_CLOEXEC) >= 0 else errno.errorcode[ctypes.get_errno()]
# The device's request on any descriptor: the filter answers before the file does.
null = os.open("/dev/null", os.O_RDONLY)
ctypes.set_errno(0)
out["ioctl_route"] = "ok" if libc.ioctl(null, 0xAA00, 0) >= 0 else errno.errorcode[ctypes.get_errno()]
print(json.dumps(out))
"""

SOCKETS = """
import errno, json, socket
FAMILIES = {"vsock": (40, 1), "netlink": (16, 3), "packet": (17, 3), "alg": (38, 5), "key": (15, 3), "xdp": (44, 3),
            "bluetooth": (31, 3), "can": (29, 3), "tipc": (30, 4), "rds": (21, 5), "appletalk": (5, 2), "x25": (9, 5)}
out = {}
for name, (family, kind) in {**FAMILIES, "unix": (1, 1), "inet": (2, 1), "inet6": (10, 1)}.items():
    try:
        socket.socket(family, kind).close()
        out[name] = "ok"
    except OSError as exc:
        out[name] = errno.errorcode.get(exc.errno, exc.errno)
try:
    socket.socketpair(16, 3)
    out["netlink_pair"] = "ok"
except OSError as exc:
    out["netlink_pair"] = errno.errorcode.get(exc.errno, exc.errno)
print(json.dumps(out))
"""

KEYRINGS = HEAD + """
print(json.dumps({
    "add_key": call("add_key", b"user", b"analyst", b"secret", 6, -2),  # KEY_SPEC_PROCESS_KEYRING
    "request_key": call("request_key", b"user", b"analyst", None, 0),
    "keyctl": call("keyctl", 0, -3, 0),  # KEYCTL_GET_KEYRING_ID of the session keyring
}))
"""

PERF_AND_BPF = HEAD + """
import struct
attr = ctypes.create_string_buffer(128)
struct.pack_into("=IIQ", attr, 0, 1, 128, 0)  # PERF_TYPE_SOFTWARE, size, PERF_COUNT_SW_CPU_CLOCK
struct.pack_into("=Q", attr, 40, 1 | 1 << 5 | 1 << 6)  # disabled, exclude_kernel, exclude_hv
bpf_attr = ctypes.create_string_buffer(128)
print(json.dumps({"perf_event_open": call("perf_event_open", attr, 0, -1, -1, 0),
                  "bpf": call("bpf", 0, bpf_attr, 128)}))  # BPF_MAP_CREATE
"""

OTHER_PROCESSES = HEAD + """
import time
secret = ctypes.create_string_buffer(b"child's memory", 16)
pid = os.fork()
if pid == 0:
    time.sleep(60)
    os._exit(0)
out = {"ptrace_attach": call("ptrace", 16, pid, 0, 0)}  # PTRACE_ATTACH
if out["ptrace_attach"] == "ok":
    os.waitpid(pid, 0)
    call("ptrace", 17, pid, 0, 0)  # PTRACE_DETACH
class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
into = ctypes.create_string_buffer(16)
local, remote = IOVec(ctypes.addressof(into), 16), IOVec(ctypes.addressof(secret), 16)
out["process_vm_readv"] = call("process_vm_readv", pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
out["kcmp"] = call("kcmp", os.getpid(), pid, 0, 0, 0)  # KCMP_FILE
os.kill(pid, 9)
os.waitpid(pid, 0)
out["read_no_randomize"] = call("personality", 0x0040000)  # ADDR_NO_RANDOMIZE
out["personality_query"] = call("personality", 0xFFFFFFFF)
print(json.dumps(out))
"""

CORE_DUMPS = """
import glob, json, os, resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
try:
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    raised = True
except (ValueError, OSError):
    raised = False
crash = (
    "import os, resource\\n"
    "for limit in (resource.RLIM_INFINITY, resource.getrlimit(resource.RLIMIT_CORE)[1]):\\n"
    "    try:\\n"
    "        resource.setrlimit(resource.RLIMIT_CORE, (limit, limit))\\n"
    "    except (ValueError, OSError):\\n"
    "        pass\\n"
    "os.abort()\\n"
)
pid = os.posix_spawn(sys.executable, [sys.executable, "-c", crash], dict(os.environ))
_, status = os.waitpid(pid, 0)
print(json.dumps({"soft": soft, "hard": hard, "raised": raised, "signal": os.WTERMSIG(status),
                  "dumped": os.WCOREDUMP(status), "cores": glob.glob("core*")}))
"""

#: Refused calls made through the other ABIs of an x86_64 machine, from a child process (an
#: ABI the machine lacks kills it): i386 through ``int 0x80`` and x32 through ``syscall``
#: with bit 30 set, each ``socket(AF_VSOCK, SOCK_STREAM, 0)``, returning the result.
FOREIGN_ABIS = """
import json, subprocess, sys
child = '''
import ctypes, mmap, sys
code = bytes.fromhex(sys.argv[1])
page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
print(ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(page)))())
'''
I386 = "53" "b867010000" "bb28000000" "b901000000" "31d2" "cd80" "5b" "4863c0" "c3"  # socket = 359
X32 = "b829000040" "bf28000000" "be01000000" "31d2" "0f05" "c3"  # socket = 41 | 0x40000000
out = {}
for name, code in (("i386", I386), ("x32", X32)):
    run = subprocess.run([sys.executable, "-c", child, code], capture_output=True, text=True)
    out[name] = int(run.stdout) if run.returncode == 0 else f"died {run.returncode}"
print(json.dumps(out))
"""

PROBES = {"io_uring": IO_URING, "userfaultfd": USERFAULTFD, "sockets": SOCKETS, "keyrings": KEYRINGS,
          "perf_and_bpf": PERF_AND_BPF, "other_processes": OTHER_PROCESSES, "core_dumps": CORE_DUMPS}
if platform.machine() == "x86_64":
    PROBES["foreign_abis"] = FOREIGN_ABIS


@pytest.fixture(scope="module")
def answers(tmp_path_factory, sales_db) -> dict[str, dict]:
    """What each probe printed, by probe name."""
    steps = [python_step(code) for code in PROBES.values()] + [text_step()]
    script = {"turns": [{"match": ".", "steps": steps}]}
    with scripted(tmp_path_factory.mktemp("ws") / "ws", sales_db, script) as runner:
        summary = runner.run("probe the kernel's interfaces")
        results = results_of(runner, summary.turn_id)
    assert summary.status == "completed"
    out = {}
    for name, result in zip(PROBES, results, strict=True):
        assert result.status == "ok", (name, result.result)
        out[name] = json.loads(result.result["stdout"])
    return out


def test_io_uring_is_refused(answers):
    assert answers["io_uring"] == {"setup": "EPERM", "enter": "EPERM", "register": "EPERM"}


def test_userfaultfd_is_refused_also_through_its_device(answers):
    seen = answers["userfaultfd"]
    assert seen["user_mode"] == "EPERM"
    assert seen["ioctl_route"] == "EPERM"
    assert seen["device"] != "opened" or seen["device_ioctl"] == "EPERM"


def test_only_unix_and_ip_sockets_open(answers):
    seen = answers["sockets"]
    assert {seen.pop(name) for name in ("unix", "inet", "inet6")} == {"ok"}
    assert seen == dict.fromkeys(seen, errno.errorcode[errno.EOPNOTSUPP]), seen


def test_kernel_keyrings_are_refused(answers):
    assert answers["keyrings"] == {"add_key": "EPERM", "request_key": "EPERM", "keyctl": "EPERM"}


def test_perf_events_and_bpf_are_refused(answers):
    assert answers["perf_and_bpf"] == {"perf_event_open": "EPERM", "bpf": "EPERM"}


def test_other_processes_cannot_be_traced_or_read_and_randomisation_stays_on(answers):
    seen = answers["other_processes"]
    assert seen == {"ptrace_attach": "EPERM", "process_vm_readv": "EPERM", "kcmp": "EPERM",
                    "read_no_randomize": "EPERM", "personality_query": "ok"}


def test_core_dumps_cannot_be_turned_on(answers):
    seen = answers["core_dumps"]
    assert seen["hard"] in (0, 1) and seen["soft"] in (0, 1), "RLIM_INFINITY reads -1"
    assert seen["raised"] is False
    assert seen["signal"] == 6 and seen["dumped"] is False and seen["cores"] == []


@pytest.mark.skipif(platform.machine() != "x86_64", reason="i386 and x32 are x86_64's other ABIs")
def test_other_abis_do_not_bypass_the_filter(answers):
    seen = answers["foreign_abis"]
    # Unfiltered, i386's socket() returns a descriptor here, and x32's ENOSYS (not built in).
    assert seen == {"i386": -errno.ENOSYS, "x32": -errno.EPERM}, seen
