"""Whether a kernel's uid can reach the files it runs from, checked before it starts.

Started as root, a kernel drops to a leased uid that owns nothing and is in no group: it
enters a folder only where *others* may. An install under a private folder (a home folder,
a ``mktemp -d`` folder, both 0700) is then out of its reach, and the kernel fails in ways
that say nothing of the cause (``No module named ipykernel_launcher``), or worse, runs on
another Python's standard library that it happened to find.

* **With bubblewrap** the kernel sees a file system the sandbox builds: the folders above
  each of its mounts are made 0755 where the sandbox makes them (under its fresh ``/tmp``,
  ``/home``, ``/root``, ``/run``, ``/etc``, or outside ``/usr``); where they are the host's
  (inside ``/usr`` or another mount) a folder the uid cannot enter is
  covered with an empty 0755 tmpfs, which hides only what the uid could not see anyway.
  (see :class:`View` and ``sandbox.kernel_mounts``).
* **Without bubblewrap** the kernel sees the host's folders as they are.

What is still out of reach (a private folder inside the install itself, files only their
owner may read) is refused before the kernel starts, with one line naming the folder and
what to do; ``jupyter analyst doctor`` says the same.
"""

from __future__ import annotations

import importlib.util
import os
import stat
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ...errors import KernelError

Need = Literal["read", "enter"]


def may(st: os.stat_result, uid: int, gid: int, bits: int) -> bool:
    """Whether ``uid``/``gid`` (in no other group) has the permission ``bits`` (4 read, 1 enter).

    Only one class of bits applies: the owner's to the owner, the group's to the group,
    the others' to everyone else.

    >>> st = os.stat_result((0o40700, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    >>> may(st, 0, 0, 1), may(st, 900000000, 900000000, 1)
    (True, False)
    """
    mode = st.st_mode
    if st.st_uid == uid:
        return bool(mode & (bits << 6))
    if st.st_gid == gid:
        return bool(mode & (bits << 3))
    return bool(mode & bits)


class View:
    """Which folders of the kernel's file system are the host's, with the host's permissions.

    A list of mount points, each the host's (a bind) or the sandbox's own (a tmpfs or a
    folder it made, 0755); a folder belongs to the deepest mount point at or above it.
    """

    def __init__(self, host: Iterable[Path] = (), fresh: Iterable[Path] = ()) -> None:
        self._mounts: dict[Path, bool] = {Path("/"): False}
        for path in fresh:
            self.mount(Path(path), host=False)
        for path in host:
            self.mount(Path(path), host=True)

    def mount(self, path: Path, *, host: bool) -> None:
        """A mount at ``path``, on top of what was there."""
        self._mounts[Path(path)] = host

    def shows_host(self, path: Path) -> bool:
        """Whether ``path`` is the host's own folder or file (its permissions apply).

        >>> view = View(host=[Path("/usr")], fresh=[Path("/tmp")])
        >>> view.shows_host(Path("/usr/lib")), view.shows_host(Path("/tmp/x")), view.shows_host(Path("/srv"))
        (True, False, False)
        """
        for candidate in (Path(path), *Path(path).parents):
            if candidate in self._mounts:
                return self._mounts[candidate]
        return False


#: The kernel without bubblewrap: every folder is the host's.
HOST = View(host=[Path("/")])

#: The jupyter_analyst package's own folder (its runtime helper runs in the kernel): read off
#: the root package, which is imported before any of its modules, so it holds wherever this
#: module lives.
_PACKAGE = Path(sys.modules[__name__.split(".")[0]].__file__ or "").resolve().parent


@dataclass(frozen=True)
class Blocked:
    """A folder (or file) the kernel's uid cannot pass, and what lies behind it."""

    path: Path
    mode: int
    owner: int
    needed: Path
    need: Need

    def describe(self) -> str:
        what = "enter" if self.need == "enter" or self.path != self.needed else "read"
        behind = "" if self.path == self.needed else f", which holds {self.needed}"
        return f"cannot {what} {self.path} (mode {self.mode:04o}, owner uid {self.owner}){behind}"


def blocker(path: Path, uid: int, gid: int, *, view: View = HOST, need: Need = "read") -> Blocked | None:
    """The first folder on the way to ``path`` that the uid cannot enter, or ``path`` itself
    when the uid cannot ``need`` it (read a file, or read and enter a folder); ``None`` when
    it can. Folders the sandbox made (see :class:`View`) are 0755 and always pass.
    """
    path = Path(path)
    for folder in reversed(path.parents):
        if view.shows_host(folder):
            st = os.stat(folder)
            if not may(st, uid, gid, 1):
                return Blocked(folder, stat.S_IMODE(st.st_mode), st.st_uid, path, need)
    if not view.shows_host(path):
        return None
    st = os.stat(path)
    ok = may(st, uid, gid, 1) if need == "enter" else may(st, uid, gid, 4)
    if ok and need == "read" and stat.S_ISDIR(st.st_mode):
        ok = may(st, uid, gid, 1)
    return None if ok else Blocked(path, stat.S_IMODE(st.st_mode), st.st_uid, path, need)


def interpreter_files() -> list[Path]:
    """Files the kernel's Python reads before anything else: the interpreter, ``pyvenv.cfg``,
    the standard library, ipykernel's launcher and this package."""
    files = [Path(sys.executable).resolve(), Path(os.__file__).resolve()]
    config = Path(sys.prefix) / "pyvenv.cfg"
    if config.is_file():
        files.append(config.resolve())
    launcher = importlib.util.find_spec("ipykernel_launcher")
    if launcher is not None and launcher.origin:
        files.append(Path(launcher.origin).resolve())
    files.append(_PACKAGE / "__init__.py")
    return files


def unreachable(needs: Sequence[tuple[Path, Need]], uid: int, gid: int, view: View = HOST) -> list[Blocked]:
    """What the uid cannot reach of ``needs``, one entry per blocking folder."""
    found: dict[Path, Blocked] = {}
    for path, need in needs:
        if not Path(path).exists():
            continue
        hit = blocker(Path(path), uid, gid, view=view, need=need)
        if hit is not None and hit.path not in found:
            found[hit.path] = hit
    return list(found.values())


def remedy(blocked: Sequence[Blocked], *, bubblewrap: bool) -> str:
    """What to do about ``blocked`` folders, with or without bubblewrap."""
    folders = " ".join(str(b.path) for b in blocked)
    if bubblewrap:
        return (f"let other users read them (chmod o+rX {folders}) or install Python and jupyter-analyst where "
                "other users can read them")
    return (f"install bubblewrap (the sandbox then makes the folders above the install for the kernel), let other "
            f"users enter them (chmod o+x {folders}), or install Python and jupyter-analyst where other users can "
            "read them")


def refusal(blocked: Sequence[Blocked], uid: int, *, bubblewrap: bool) -> KernelError:
    """One line: which folders the kernel's uid cannot reach, and what to do about it."""
    what = "; it ".join(b.describe() for b in blocked)
    return KernelError(
        f"the kernel's uid {uid} {what}: {remedy(blocked, bubblewrap=bubblewrap)}", reason="sandbox_unreachable",
        hint="`jupyter analyst doctor` checks this before any kernel starts",
    )
