"""The kernel's writable folder, as the host handles it: hostile ground.

The model's code may put anything in its folder: a symbolic link to ``/etc/shadow``, a
link in place of ``outputs/`` or ``.config``, a FIFO, a hard link, a sparse file of a
terabyte. So the host never follows a link in it, never creates or writes through a path
in it, and reads a file only through a descriptor it opened without following links,
checked to be a regular file with one name. Every walk goes down by directory descriptors
(``os.fwalk``), so a folder swapped for a link while it is read is not entered.

The folder itself is made by the host in a host-owned parent, so its own path is trusted;
every name *inside* it is not.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

_NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NOFOLLOW_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Entry:
    """One name found in the kernel's folder, as ``lstat`` saw it (links are not followed)."""

    relpath: str
    """The path relative to the kernel's folder, e.g. ``outputs/chart.png``."""
    mode: int
    size: int
    mtime_ns: int
    inode: int
    links: int

    @property
    def signature(self) -> tuple[int, int, int]:
        """What changes when the file is rewritten: size, modification time, inode."""
        return (self.size, self.mtime_ns, self.inode)

    def problem(self) -> str | None:
        """Why the host will not read this entry, or ``None`` for a plain file.

        >>> Entry("outputs/x", stat.S_IFLNK | 0o777, 11, 0, 1, 1).problem()
        'a symbolic link (links are never followed)'
        >>> Entry("outputs/x", stat.S_IFREG | 0o644, 11, 0, 1, 2).problem()
        'a hard link to another file'
        >>> Entry("outputs/x.csv", stat.S_IFREG | 0o644, 11, 0, 1, 1).problem() is None
        True
        """
        if stat.S_ISLNK(self.mode):
            return "a symbolic link (links are never followed)"
        if not stat.S_ISREG(self.mode):
            return "not a regular file"
        if self.links != 1:
            return "a hard link to another file"
        return None


def open_folder(root: Path, relpath: str = "") -> int:
    """A descriptor of ``root/relpath``; no component below ``root`` may be a link.

    Raises ``OSError`` (``ELOOP``/``ENOTDIR``) when one is a link or not a folder.
    """
    fd = os.open(root, _NOFOLLOW_DIR)
    try:
        for part in Path(relpath).parts:
            if part in ("", "."):
                continue
            if part == "..":
                raise OSError(f"'..' in {relpath!r}")
            child = os.open(part, _NOFOLLOW_DIR, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def scan(root: Path, sub: str = "outputs") -> dict[str, Entry]:
    """Every name under ``root/sub``, without following links; hidden names are skipped.

    A missing ``sub`` gives nothing; one that is not a folder (a link to one, say) is
    itself the only entry, so it is reported rather than walked.
    """
    try:
        top = open_folder(root, sub)
    except OSError:
        try:
            st = os.stat(root / sub, follow_symlinks=False)  # root is the host's: trusted
        except OSError:
            return {}
        return {sub: Entry(sub, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino, st.st_nlink)}
    found: dict[str, Entry] = {}
    try:
        for folder, dirs, files, dir_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            names = [n for n in files if not n.startswith(".")]
            # fwalk lists links to folders among the folders: they are entries too.
            names += [d for d in dirs if _is_link(d, dir_fd)]
            for name in names:
                try:
                    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except OSError:
                    continue
                rel = os.path.normpath(os.path.join(sub, folder, name))
                found[rel] = Entry(rel, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino, st.st_nlink)
    finally:
        os.close(top)
    return found


def _is_link(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_regular(root: Path, relpath: str) -> tuple[int, os.stat_result]:
    """A read descriptor of the plain file ``root/relpath``, opened without following links.

    Raises ``OSError`` when any part is a link, or the file is not a regular file with a
    single name (a FIFO, a device, a hard link to something else).
    """
    parent, name = os.path.split(relpath)
    dir_fd = open_folder(root, parent)
    try:
        fd = os.open(name, _NOFOLLOW_FILE, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        raise OSError(f"{relpath} is not a plain file")
    os.set_blocking(fd, True)
    return fd, st


def walk_tree(root: Path) -> Iterator[tuple[int, list[str]]]:
    """``(dir_fd, names)`` of every folder under ``root`` (``root`` included), links not followed."""
    for _folder, dirs, files, dir_fd in os.fwalk(root, follow_symlinks=False):
        yield dir_fd, [*dirs, *files]


def chown_tree(root: Path, uid: int, gid: int) -> None:
    """Give ``root`` and everything under it to ``uid:gid``; links themselves, not their targets."""
    os.chown(root, uid, gid, follow_symlinks=False)
    for dir_fd, names in walk_tree(root):
        for name in names:
            try:
                os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                pass  # gone meanwhile


def holds_files(root: Path) -> bool:
    """Whether anything but folders is under ``root`` (links count as files)."""
    if not root.exists():
        return False
    for _folder, dirs, files, dir_fd in os.fwalk(root, follow_symlinks=False):
        if files or any(_is_link(d, dir_fd) for d in dirs):
            return True
    return False


def make_private_folder(path: Path, mode: int = 0o755) -> Path:
    """Create ``path`` (its parent is the host's) as a fresh folder; an existing link is refused."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            raise
    return path
