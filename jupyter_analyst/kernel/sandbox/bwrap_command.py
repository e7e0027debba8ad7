"""The command that runs a kernel inside the sandbox: its policy (:class:`SandboxPolicy`),
bubblewrap's mounts and what the kernel's uid can reach of them, the rlimits (``prlimit``),
the uid drop (``setpriv``) and the scrubbed environment.

Everything here is a function of its inputs (and of the host folders it looks at), so the
command can be shown and tested.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from .reach import _PACKAGE, HOST, Blocked, Need, View, blocker, interpreter_files, may, refusal, unreachable
from .system_view import ACCOUNT, ETC, HOSTNAME, SEAL, system_args, system_mounts

#: The first uid kernels are given when the sandbox is started as root (see identity.py).
KERNEL_UID_FIRST = 900_000_000

#: Environment variables that may reach the kernel (plus the ``LC_*`` family).
ENV_ALLOW = frozenset({
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM", "PYTHONHASHSEED", "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE",
    "SOURCE_DATE_EPOCH", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_MAX_THREADS",
    "VECLIB_MAXIMUM_THREADS", "MPLBACKEND", "JPY_SESSION_NAME", "OPENBLAS_THREAD_TIMEOUT", "OMP_WAIT_POLICY",
    "KMP_BLOCKTIME",
})


class SandboxPolicy(BaseModel):
    """How tightly a kernel is held; every limit is configurable."""

    enabled: bool = True
    """Wrap the kernel in bubblewrap (when it is installed)."""
    memory_mb: int = Field(4096, ge=64)
    """Memory for the kernel and its children (cgroup; address space without a cgroup)."""
    cpu_seconds: int = Field(3600, ge=1)
    """CPU time of one kernel process before it is stopped (RLIMIT_CPU)."""
    message_mb: int = Field(64, ge=1)
    """The largest message the host reads from the kernel (see relay.py): past it, cut."""
    processes: int = Field(256, ge=8)
    """Processes and threads (cgroup pids.max; RLIMIT_NPROC as a backstop)."""
    file_size_mb: int = Field(1024, ge=1)
    """Largest file the kernel may write (RLIMIT_FSIZE)."""
    open_files: int = Field(1024, ge=64)
    """Open file descriptors (RLIMIT_NOFILE)."""
    network: bool = False
    """Let the kernel reach the network (off: its own empty network namespace)."""
    extra_env: dict[str, str] = {}
    """Further variables to pass into the kernel."""
    bwrap_path: str | None = None
    """The bubblewrap executable (default: ``bwrap`` on PATH)."""
    uid_first: int = Field(KERNEL_UID_FIRST, ge=1000)
    """Started as root, each kernel runs as a uid of its own from ``uid_first`` on."""
    uid_count: int = Field(4096, ge=1)
    """How many uids kernels may use: the most sandboxed kernels on one machine at once."""


def scrub_environment(env: Mapping[str, str], *, home: Path, extra: Mapping[str, str] = {}) -> dict[str, str]:
    """The kernel's environment: only allow-listed variables, HOME set to its folder.

    ``USER`` and ``LOGNAME`` name the kernel's account as the sandbox's password file does
    (system_view.py); without bubblewrap its uid may have no entry in the host's.

    >>> sorted(scrub_environment({"PATH": "/bin", "OPENAI_API_KEY": "sk-1", "LC_ALL": "C"}, home=Path("/w")))
    ['HOME', 'LC_ALL', 'LOGNAME', 'MPLCONFIGDIR', 'PATH', 'USER', 'XDG_CACHE_HOME']
    """
    out = {k: v for k, v in env.items() if k in ENV_ALLOW or k.startswith("LC_")}
    out["HOME"] = str(home)
    out["USER"] = out["LOGNAME"] = ACCOUNT
    out["MPLCONFIGDIR"] = str(home / ".config" / "matplotlib")
    out["XDG_CACHE_HOME"] = str(home / ".cache")
    out.update(extra)
    return out


def find_bwrap(configured: str | None = None) -> str | None:
    """The bubblewrap executable, if installed (``configured`` overrides the PATH lookup)."""
    if configured is not None:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("bwrap")


def running_as_root() -> bool:
    """Whether this process is root (the kernel then drops to a uid of its own)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def interpreter_paths() -> list[Path]:
    """Folders the kernel's Python needs to read: its real prefix, the venv, this package.

    The parent's ``sys.path`` is deliberately not used: it may hold the current folder,
    which can be a workspace with other threads in it.
    """
    package = _PACKAGE  # jupyter_analyst itself, for its runtime helper
    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), package}
    return sorted(paths, key=lambda p: (len(p.parts), str(p)))


#: RLIMIT_CORE, soft and hard: no core dump at all. 0 would stop only a dump to a file: for
#: a piped ``core_pattern`` (apport, systemd-coredump) the kernel ignores the limit and runs
#: the root helper on the whole core, except at exactly 1, which it reserves to abort the
#: dump before starting the helper; and 1 byte is below the smallest file dump (a page).
CORE_LIMIT = 1
#: RLIMIT_MEMLOCK: Linux's own default, so pages the kernel locks stay few whatever root's
#: limit is.
MEMLOCK_BYTES = 8 * 2**20


def limit_command(policy: SandboxPolicy, *, address_space: bool) -> list[str]:
    """``prlimit`` arguments for the policy's rlimits (each sets the soft and the hard limit,
    so the kernel's code cannot raise any of them again).

    Besides the policy's: no core dumps (:data:`CORE_LIMIT`), few locked pages, and no
    real-time or raised scheduling priority (a real-time busy loop would hold a CPU away
    from the host until ``cpu_seconds`` run out).

    >>> limit_command(SandboxPolicy(memory_mb=100, cpu_seconds=5, processes=10, file_size_mb=1,
    ...                             open_files=64), address_space=True)[1:]  # doctest: +NORMALIZE_WHITESPACE
    ['--cpu=5', '--nproc=10', '--fsize=1048576', '--nofile=64', '--core=1', '--memlock=8388608', '--rtprio=0',
     '--nice=0', '--as=104857600', '--']
    """
    args = [
        shutil.which("prlimit") or "prlimit",
        f"--cpu={policy.cpu_seconds}",
        f"--nproc={policy.processes}",
        f"--fsize={policy.file_size_mb * 2**20}",
        f"--nofile={policy.open_files}",
        f"--core={CORE_LIMIT}",
        f"--memlock={MEMLOCK_BYTES}",
        "--rtprio=0",
        "--nice=0",
    ]
    if address_space:
        args.append(f"--as={policy.memory_mb * 2**20}")
    return [*args, "--"]


def drop_privileges_command(uid: int, gid: int) -> list[str]:
    """``setpriv`` arguments that become an unprivileged user for good.

    >>> drop_privileges_command(900000001, 900000001)[1:]
    ['--reuid=900000001', '--regid=900000001', '--clear-groups', '--no-new-privs', '--']
    """
    return [shutil.which("setpriv") or "setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups",
            "--no-new-privs", "--"]


#: Folders the sandbox replaces with an empty tmpfs of its own.
FRESH_FOLDERS = ("/tmp", "/root", "/home", "/run")
#: Folders the sandbox makes itself: the fresh ones, ``/dev``, ``/proc``, and ``/etc``
#: (holding only its allow-list, see system_view.py).
MADE_FOLDERS = (*FRESH_FOLDERS, "/dev", "/proc", str(ETC))


def kernel_mounts(
    binds: Sequence[tuple[Path, bool]], *, identity: tuple[int, int] | None, sources: Mapping[Path, Path] = {},
) -> tuple[list[str], View]:
    """bubblewrap arguments that mount ``binds`` (``(path, writable)``), and the view they make.

    ``sources`` maps a bind's path in the sandbox to the host folder or file mounted there
    when they differ: a staging folder the host made for the kernel's uid (staging.py),
    which the view counts as the sandbox's own, not as the host's.

    Binds go shallowest first, so one inside another lies on top of it. bubblewrap makes
    missing mount points private (0700), so each folder above a bind that the sandbox makes
    is made 0755 first. A folder above a bind that is the host's (inside ``/usr`` or
    another bind) and that ``identity`` cannot enter is covered with an empty 0755
    tmpfs: it hid nothing that uid could see, and the bind below it becomes reachable
    (a 0700 folder holding the install). A bind itself is never covered.
    """
    args: list[str] = []
    system = system_mounts()
    view = View(host=system, fresh=[Path(p) for p in MADE_FOLDERS])
    made = {Path("/"), *system, *(Path(p) for p in MADE_FOLDERS)}
    for path, writable in sorted(binds, key=lambda bind: len(Path(bind[0]).parts)):
        path = Path(path)
        for folder in reversed(path.parents):
            if folder in made:
                continue
            made.add(folder)
            if not view.shows_host(folder):
                args += ["--perms", "0755", "--dir", str(folder)]
            elif identity is not None and not may(os.stat(folder), *identity, 1):
                args += ["--perms", "0755", "--tmpfs", str(folder)]
                view.mount(folder, host=False)
        source = sources.get(path)
        args += ["--bind" if writable else "--ro-bind", str(source or path), str(path)]
        view.mount(path, host=source is None)
        made.add(path)  # never covered: what cannot be entered there is reported, not hidden
    return args, view


def kernel_binds(
    workdir: Path, writable: Sequence[Path] = (), readable: Sequence[Path] = (),
) -> list[tuple[Path, bool]]:
    """What a kernel's sandbox mounts besides the system: ``(path, writable)`` pairs."""
    return [*((Path(p), False) for p in [*interpreter_paths(), *readable]),
            *((Path(p), True) for p in [workdir, *writable])]


def out_of_reach(
    identity: tuple[int, int], *, workdir: Path | None = None, readable: Sequence[Path] = (),
    binds: Sequence[tuple[Path, bool]] | None = None, sources: Mapping[Path, Path] = {},
) -> list[Blocked]:
    """What the kernel's uid cannot reach of its interpreter, its data and its folder.

    ``binds`` are the sandbox's mounts (:func:`kernel_binds`, ``sources`` as for
    :func:`kernel_mounts`); ``None`` is a kernel without bubblewrap, which sees the host's
    folders as they are.
    """
    view = HOST if binds is None else kernel_mounts(binds, identity=identity, sources=sources)[1]
    needs: list[tuple[Path, Need]] = [(p, "read") for p in [*interpreter_paths(), *interpreter_files(), *readable]]
    if workdir is not None:
        needs.append((Path(workdir).parent, "enter"))  # the folder itself becomes the kernel's
    return unreachable(needs, *identity, view)


def unreadable(
    identity: tuple[int, int], paths: Sequence[Path], *, binds: Sequence[tuple[Path, bool]],
    sources: Mapping[Path, Path] = {},
) -> list[Path]:
    """Which of ``paths`` (each mounted at itself among ``binds``) the kernel's uid could not read."""
    view = kernel_mounts(binds, identity=identity, sources=sources)[1]
    return [Path(p) for p in paths if blocker(Path(p), *identity, view=view, need="read") is not None]


def check_reach(
    identity: tuple[int, int], *, workdir: Path, readable: Sequence[Path] = (),
    binds: Sequence[tuple[Path, bool]] | None = None, sources: Mapping[Path, Path] = {},
) -> None:
    """Refuse, in one line, a kernel whose uid cannot reach what it runs from (see reach.py)."""
    blocked = out_of_reach(identity, workdir=workdir, readable=readable, binds=binds, sources=sources)
    if blocked:
        raise refusal(blocked, identity[0], bubblewrap=binds is not None)


def bwrap_command(
    cmd: Sequence[str],
    *,
    bwrap: str,
    workdir: Path,
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
    policy: SandboxPolicy,
    identity: tuple[int, int] | None,
    address_space_limit: bool,
    seccomp_fd: int | None = None,
    sources: Mapping[Path, Path] = {},
    etc_fds: Mapping[Path, int] = {},
) -> list[str]:
    """The full command that runs ``cmd`` (a kernel's argv) inside the sandbox.

    Later mounts go on top of earlier ones, so the order is: the system read-only (``/usr``
    and ``/etc``'s allow-list, see system_view.py), fresh ``/tmp``, ``/dev`` and ``/proc``,
    then the interpreter, the data (files too: the connection file) and the writable
    folders (see :func:`kernel_mounts`). ``identity`` is the ``(uid, gid)`` to drop to (when
    started as root); ``sources`` as for :func:`kernel_mounts` (a staging folder mounted at
    ``workdir``); ``etc_fds`` the descriptors of the sandbox's own files of ``/etc``
    (``system_view.etc_files``, ``data_fds``).
    """
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--hostname", HOSTNAME]
    if not policy.network:
        args.append("--unshare-net")
    if identity is None:
        args.append("--unshare-user-try")
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += system_args(network=policy.network, files=etc_fds)
    for path in FRESH_FOLDERS:
        args += ["--perms", "0755", "--tmpfs", path]
    args += ["--dev", "/dev", "--proc", "/proc"]
    args += kernel_mounts(kernel_binds(workdir, writable, readable), identity=identity, sources=sources)[0]
    args += [*SEAL, "--chdir", str(workdir), "--unsetenv", "JPY_PARENT_PID", "--"]
    inner = limit_command(policy, address_space=address_space_limit)
    if identity is not None:
        inner += drop_privileges_command(*identity)
    return [*args, *inner, *cmd]


def unsandboxed_command(cmd: Sequence[str], *, policy: SandboxPolicy, identity: tuple[int, int] | None) -> list[str]:
    """Without bubblewrap: rlimits (and the uid drop) only."""
    inner = limit_command(policy, address_space=True)
    if identity is not None:
        inner += drop_privileges_command(*identity)
    return [*inner, *cmd]


NO_BWRAP_WARNING = (
    "WARNING: bubblewrap (bwrap) is not installed: the kernel runs WITHOUT isolation (it sees this "
    "machine's files and network), with resource limits and the seccomp filter only. Install it "
    "(Debian/Ubuntu: apt-get install bubblewrap) and run `jupyter analyst doctor`."
)
