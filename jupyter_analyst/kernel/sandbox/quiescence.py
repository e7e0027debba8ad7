"""Whether anything of a step still runs in its kernel, told from outside the kernel.

The kernel is hostile, and everything it says can be forged by the model's code, which runs
inside it and holds the session key: an early ``status: idle`` under the step's own message
id, an ``execute_reply``, any list of its threads it would report. So the end of a step is
checked where the code cannot write: in ``/proc``, which shows the host, for every thread of
the kernel's processes, whether it runs and which system call it waits in, with which
arguments, and for every process its signal handlers, timers and file descriptors.

Why this check, and what it can tell
------------------------------------
A kernel that has really finished a step sits, thread by thread, where it sat when it had
just started (its *idle shape*, recorded once after the host's own set-up cell, before any
model code ran): the main thread, the ZMQ and heartbeat threads and the event loops of the
IOPub, control and shell threads wait without a timeout on the same descriptors. Threads
that libraries start and keep for later (OpenBLAS, Arrow's thread pools, jemalloc) park in
a ``futex`` wait without a timeout, which only another thread of the kernel can end. The
step's code still runs, or will run by itself later, exactly when something else is true:

* a thread runs, or waits in any other way (a sleep, a wait with a timeout, a ``select``
  or ``read`` of its own): a thread started by the step, or the main thread still in the
  step's code after a forged ``idle``;
* a thread of the idle shape waits elsewhere, or now with a timeout (a timer scheduled on
  one of the kernel's own event loops; the set-up cell stops the IOPub thread's periodic
  timer, so that none is left in the idle shape);
* a timer is armed (``timerfd``, POSIX timers), a signal waits for its handler, a handler
  for a timer's signal was added (``setitimer``/``alarm``), a file is watched (``inotify``),
  an ``io_uring`` exists;
* a process the step started is still alive (the session has killed them all by then).

Then the step ran on past its end, and the session replaces the kernel (restored lazily, as
after a death). The check is made twice with nothing changed in between (every thread's
context-switch count the same), so a thread woken between two looks is seen; a kernel still
settling (an OpenBLAS worker spinning before it parks, the last output being flushed) is
looked at again for up to a second or two before it is judged.

What it cannot tell, and what covers that
-----------------------------------------
Code a step leaves to be *triggered by a later step's own activity* (an IPython hook, a
patched handler, a thread parked on a lock that a later cell releases) runs only inside that
later step, as a function the step defined would: it is the kernel's state, replayed in the
same order by the audit notebook. And memory corruption (``ctypes``) that makes one of the
kernel's native threads run Python on its own timer is beyond what ``/proc`` shows. For
both, the kernel is also *frozen* between steps (cgroups.py): nothing of it runs outside a
step at all, whatever this check missed.

Legitimate library pools do not trigger it: they park without a timeout once their work is
done, and jemalloc's background thread, which waits with a timeout while it returns memory,
does so on the one address it waited on in the idle shape. Worker threads that spin before
they park are told to park at once (``OPENBLAS_THREAD_TIMEOUT``, ``OMP_WAIT_POLICY``,
``KMP_BLOCKTIME`` in the kernel's environment); DuckDB's worker waits with a timeout for
about a second after a query, which the step then waits out. A library thread that really
does wake by itself (tqdm's monitor, which the set-up cell turns off; a
``multiprocessing.pool.ThreadPool``) does run after the step, and so is reported.

What it costs, measured on a shared 2-core machine: a look at ``/proc`` takes 0.6 ms for
the 19 threads of a fresh kernel, a check at least two looks (more while worker threads
park or output is flushed), freezing 0.25 ms and thawing 0.2 ms. Steps such as ``x = 1``,
``print(1)`` or a small pandas sum took 7-14 ms instead of 5-8 ms, the kernel's waking
from the freezer included; the figures varied with the machine's load by as much.
"""

from __future__ import annotations

import asyncio
import os
import platform
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

# ------------------------------------------------------------------ system calls

#: The calls a thread of an idle kernel waits in, per machine.
_CALLS: dict[str, dict[str, int]] = {
    "x86_64": {"read": 0, "poll": 7, "select": 23, "nanosleep": 35, "wait4": 61, "futex": 202, "restart_syscall": 219,
               "clock_nanosleep": 230, "epoll_wait": 232, "pselect6": 270, "ppoll": 271, "epoll_pwait": 281,
               "epoll_pwait2": 441, "futex_waitv": 449},
    "aarch64": {"read": 63, "epoll_pwait": 22, "pselect6": 72, "ppoll": 73, "futex": 98, "nanosleep": 101,
                "clock_nanosleep": 115, "restart_syscall": 128, "wait4": 260, "epoll_pwait2": 441, "futex_waitv": 449},
}
_NAMES = {arch: {nr: name for name, nr in calls.items()} for arch, calls in _CALLS.items()}

#: ``futex`` operations that wait (FUTEX_WAIT, LOCK_PI, WAIT_BITSET, WAIT_REQUEUE_PI, LOCK_PI2).
_FUTEX_WAITS = frozenset({0, 6, 9, 11, 13})
_FUTEX_CMD = 0x7F  # without FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME
_INT_MINUS_ONE = 0xFFFFFFFF  # an ``int`` timeout of -1 as /proc shows a register

#: Calls whose first argument is a descriptor (or a pid): a thread of the idle shape must wait
#: on the same one. The others' first argument is a pointer, which may change between calls.
_BY_FIRST = frozenset({"read", "wait4", "epoll_wait", "epoll_pwait", "epoll_pwait2"})
_SLEEPS = frozenset({"nanosleep", "clock_nanosleep"})
#: Signals a timer of the process sends (SIGALRM, SIGVTALRM, SIGPROF) or a descriptor's
#: data (SIGIO): a handler for one of them runs code later, by itself.
_TIMER_SIGNALS = sum(1 << (n - 1) for n in (14, 26, 27, 29))
#: Where each call keeps its timeout: ``(argument, "int")`` for milliseconds (-1: none),
#: ``(argument, "ptr")`` for a pointer (NULL: none).
_TIMEOUTS = {"poll": (2, "int"), "epoll_wait": (3, "int"), "epoll_pwait": (3, "int"), "epoll_pwait2": (3, "ptr"),
             "ppoll": (2, "ptr"), "select": (4, "ptr"), "pselect6": (4, "ptr"), "futex": (3, "ptr"),
             "futex_waitv": (3, "ptr")}


def supported() -> bool:
    """Whether this machine's system-call numbers are known here."""
    return platform.machine() in _CALLS


@dataclass(frozen=True)
class Wait:
    """What one thread does, as ``/proc`` shows it.

    ``call`` is the name of the system call it waits in (``None`` when it runs, or waits in a
    call not listed here, whose number is then in ``nr``); ``args`` are the call's six
    arguments.
    """

    tid: int
    state: str
    call: str | None = None
    nr: int | None = None
    args: tuple[int, ...] = ()
    switches: int = 0

    @property
    def running(self) -> bool:
        return self.state == "R" or self.nr is None

    @property
    def timed(self) -> bool:
        """Whether the wait ends by itself after a while (a timeout)."""
        if self.call in _SLEEPS:
            return True
        where = _TIMEOUTS.get(self.call or "")
        if where is None:
            return False
        index, kind = where
        value = self.args[index] if index < len(self.args) else 0
        return (value & _INT_MINUS_ONE) != _INT_MINUS_ONE if kind == "int" else value != 0

    @property
    def parked(self) -> bool:
        """Waiting, without a timeout, for another thread of the kernel to wake it."""
        if self.call == "futex":
            return (self.args[1] & _FUTEX_CMD) in _FUTEX_WAITS and not self.timed
        return self.call == "futex_waitv" and not self.timed

    def describe(self) -> str:
        if self.running:
            return "runs"
        if self.call in _SLEEPS:
            return "sleeps"
        what = self.call or f"system call {self.nr}"
        return f"waits in {what}" + (" with a timeout" if self.timed else "")


@dataclass(frozen=True)
class Process:
    """One process of the kernel: its threads and what could wake it later."""

    pid: int
    threads: dict[int, Wait]
    caught: int = 0
    """The mask of signals it has handlers for."""
    pending: int = 0
    """The mask of signals sent to it and not yet handled."""
    timers: int = 0
    wakers: tuple[str, ...] = ()
    """Armed timer descriptors, inotify watches and io_uring rings."""


@dataclass
class View:
    """The kernel's processes at one moment."""

    processes: dict[int, Process] = field(default_factory=dict)

    def switches(self) -> dict[int, int]:
        return {t.tid: t.switches for p in self.processes.values() for t in p.threads.values()}


def _read(path: str) -> str | None:
    # os-level calls: a look reads some sixty of these small files.
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, 65536).decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _wait(pid: int, tid: int, arch: str) -> Wait | None:
    base = f"/proc/{pid}/task/{tid}"
    stat = _read(f"{base}/stat")
    if stat is None:
        return None  # ended meanwhile
    state = stat.rsplit(")", 1)[-1].split()[0]
    # How many times it has run on a processor: any wake-up between two looks changes it.
    sched = (_read(f"{base}/schedstat") or "").split()
    if len(sched) > 2:
        switches = int(sched[2])
    else:  # a kernel built without scheduler statistics
        status = _read(f"{base}/status") or ""
        switches = sum(int(line.split()[1]) for line in status.splitlines()
                       if line.startswith(("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")))
    if state in ("Z", "X"):
        return Wait(tid, state, call="exit", nr=-1, switches=switches)
    line = (_read(f"{base}/syscall") or "running").split()
    if not line or line[0] == "running" or line[0] == "-1":
        return Wait(tid, state, switches=switches)
    nr = int(line[0])
    args = tuple(int(a, 16) for a in line[1:7])
    return Wait(tid, state, call=_NAMES.get(arch, {}).get(nr), nr=nr, args=args, switches=switches)


def _status_field(status: str, name: str) -> int:
    for line in status.splitlines():
        if line.startswith(name + ":"):
            return int(line.split()[1], 16)
    return 0


def _wakers(pid: int) -> tuple[str, ...]:
    """Descriptors that can wake the process by themselves: armed timers, watches, rings."""
    found: list[str] = []
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return ()
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if not target.startswith("anon_inode:"):
            continue
        if "timerfd" in target:
            info = _read(f"/proc/{pid}/fdinfo/{fd}") or ""
            armed = any(line.startswith("it_value:") and line.split(":", 1)[1].strip() != "(0, 0)"
                        for line in info.splitlines())
            if armed:
                found.append("an armed timer (timerfd)")
        elif "inotify" in target:
            found.append("a file watch (inotify)")
        elif "io_uring" in target:
            found.append("an io_uring")
    return tuple(sorted(found))


def look(pids: Iterable[int], *, arch: str | None = None) -> View:
    """The kernel's processes ``pids`` as they are now (those that ended are left out)."""
    arch = arch or platform.machine()
    view = View()
    for pid in pids:
        try:
            tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
        except OSError:
            continue
        status = _read(f"/proc/{pid}/status") or ""
        threads = {}
        for tid in tids:
            wait = _wait(pid, tid, arch)
            if wait is not None:
                threads[tid] = wait
        if not threads or all(t.state in ("Z", "X") for t in threads.values()):
            continue  # a zombie waiting to be reaped runs nothing
        timers = (_read(f"/proc/{pid}/timers") or "").count("ID:")
        view.processes[pid] = Process(
            pid, threads, caught=_status_field(status, "SigCgt"),
            pending=_status_field(status, "SigPnd") | _status_field(status, "ShdPnd"),
            timers=timers, wakers=_wakers(pid),
        )
    return view


# ------------------------------------------------------------------ the judgement


def why_busy(idle: View, now: View, rested: View | None = None) -> str | None:
    """Why ``now`` is not a kernel at rest, against its ``idle`` shape; ``None`` when it is.

    ``rested`` is the kernel as it was last found at rest (before it was frozen). A thread
    the freezer interrupted resumes its wait through ``restart_syscall``, which hides the
    call; it is still in the wait it was in then, if it was there then.

    >>> calm = Wait(1, "S", "epoll_wait", 232, (55, 0, 2, 0xFFFFFFFF, 0, 0))
    >>> idle = View({1: Process(1, {1: calm})})
    >>> why_busy(idle, View({1: Process(1, {1: calm, 2: Wait(2, "S", "futex", 202, (9, 0x189, 0, 0, 0, 0))})}))
    >>> why_busy(idle, View({1: Process(1, {1: calm, 2: Wait(2, "S", "clock_nanosleep", 230, (1, 0, 5, 0, 0, 0))})}))
    'thread 2 sleeps'
    >>> why_busy(idle, View({1: Process(1, {1: Wait(1, "S", "epoll_wait", 232, (55, 0, 2, 30, 0, 0))})}))
    'thread 1 waits in epoll_wait with a timeout'
    """
    for pid, proc in now.processes.items():
        before = idle.processes.get(pid)
        if before is None:
            return f"process {pid}, started by the step, is still running"
        if proc.pending & proc.caught:
            return f"a signal is pending for a handler of process {pid}"
        if proc.caught & ~before.caught & _TIMER_SIGNALS:
            return f"process {pid} handles a timer's signal it did not before"
        if proc.timers > before.timers:
            return f"process {pid} has a timer armed"
        new_wakers = sorted(set(proc.wakers) - set(before.wakers))
        if new_wakers:
            return f"process {pid} holds {new_wakers[0]}"
        earlier = (rested or idle).processes.get(pid)
        for tid, wait in proc.threads.items():
            if wait.call == "restart_syscall" and earlier is not None and tid in earlier.threads:
                continue
            problem = _thread_problem(wait, before.threads.get(tid))
            if problem is not None:
                return f"thread {tid} {problem}"
    return None


def _thread_problem(wait: Wait, idle: Wait | None) -> str | None:
    if wait.call == "exit":
        return None
    if wait.running:
        return "runs"
    if wait.parked:
        return None
    if idle is None:
        return wait.describe()  # a thread the step started waits for something else
    if wait.call == "futex" and idle.call == "futex" and wait.args[0] == idle.args[0]:
        return None  # a native thread's own timed wait, as when the kernel was idle (jemalloc)
    # As in the idle shape: the same call, on the same descriptor, with a timeout only if it
    # had one then (the parent poller's sleep when there is no sandbox).
    same = wait.nr == idle.nr and (wait.call not in _BY_FIRST or wait.args[:1] == idle.args[:1])
    return None if same and (idle.timed or not wait.timed) else wait.describe()


async def settle(pids: Callable[[], Iterable[int]], idle: View, rested: View | None = None, *,
                 within_s: float = 2.0) -> tuple[str | None, View]:
    """Wait until the kernel is at rest (two looks alike, nothing busy); ``(why it is not by
    the end of within_s seconds, or None once it is; the last look)``."""
    deadline = time.monotonic() + within_s
    pause = 0.001
    last: View | None = None
    while True:
        now = look(pids())
        why = why_busy(idle, now, rested)
        if why is None and last is not None and last.switches() == now.switches():
            return None, now
        last = now if why is None else None
        if time.monotonic() >= deadline:
            return why or "it did not come to rest", now
        if why is not None:
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)


async def idle_shape(pids: Callable[[], Iterable[int]], *, within_s: float = 10.0) -> View:
    """The kernel's shape right after its set-up: two looks alike with no thread running."""
    deadline = time.monotonic() + within_s
    last: View | None = None
    pause = 0.001
    while True:
        now = look(pids())
        quiet = not any(t.running for p in now.processes.values() for t in p.threads.values())
        if quiet and last is not None and last.switches() == now.switches():
            return now
        if time.monotonic() >= deadline:
            return now
        last = now if quiet else None
        if not quiet:
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)
