"""The kernel's writable folder, as the host handles it: hostile ground.

The model's code may put anything in its folder: a symbolic link to ``/etc/shadow``, a
link in place of ``outputs/`` or ``.config``, a FIFO, a hard link, a sparse file of a
terabyte. So the host never follows a link in it, never creates or writes through a path
in it, and reads a file only through a descriptor it opened without following links,
checked to be a regular file with one name. Every walk goes down by directory descriptors
opened without following links, so a folder swapped for a link while it is read is not
entered; walks are iterative and bounded in depth and in count, so a folder nested ten
thousand deep or holding a million names costs the host a bounded effort, never a crash.

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
    note: str | None = None
    """Why the host did not look further (a folder nested too deep, too many names)."""

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
        if self.note is not None:
            return self.note
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


#: How deep below ``outputs/`` files are looked for, and how many names a scan reads at most.
SCAN_DEPTH = 32
SCAN_NAMES = 20_000


def _entry(rel: str, st: os.stat_result, note: str | None = None) -> Entry:
    return Entry(rel, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino, st.st_nlink, note)


def shown_name(name: str) -> str:
    """A file name as printable, storable text: undecodable bytes and control characters escaped.

    >>> shown_name(os.fsdecode(b"outputs/\\xff\\n.csv"))
    'outputs/\\\\xff\\\\n.csv'
    >>> shown_name("outputs/été.csv")
    'outputs/été.csv'
    """
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def walk(top: int, *, max_depth: int, skip_hidden: bool = False) -> Iterator[tuple[int, str, str, os.stat_result, bool]]:
    """Every name under the folder ``top`` (a descriptor), links not followed, no recursion.

    Yields ``(dir_fd, folder, name, lstat, entered)``: ``folder`` is relative to ``top``,
    ``entered`` tells whether a sub-folder will be walked (it is not past ``max_depth``, or
    when it cannot be opened). At most ``max_depth`` descriptors are open at once; the
    caller's ``top`` stays open.
    """
    stack: list[tuple[int, str, Iterator[str]]] = [(top, "", iter(sorted(os.listdir(top))))]
    try:
        while stack:
            fd, folder, names = stack[-1]
            name = next(names, None)
            if name is None:
                stack.pop()
                if fd != top:
                    os.close(fd)
                continue
            if skip_hidden and name.startswith("."):
                continue
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue  # gone meanwhile
            child: int | None = None
            if stat.S_ISDIR(st.st_mode) and len(stack) <= max_depth:
                try:
                    child = os.open(name, _NOFOLLOW_DIR, dir_fd=fd)
                except OSError:
                    child = None  # swapped for a link, or out of descriptors: not entered
            yield fd, folder, name, st, child is not None
            if child is not None:
                try:
                    listing = iter(sorted(os.listdir(child)))
                except OSError:
                    os.close(child)
                    continue
                stack.append((child, os.path.join(folder, name), listing))
    finally:
        for fd, _, _ in stack:
            if fd != top:
                os.close(fd)


def scan(root: Path, sub: str = "outputs") -> dict[str, Entry]:
    """Every name under ``root/sub``, without following links; hidden names are skipped.

    A missing ``sub`` gives nothing; one that is not a folder (a link to one, say) is
    itself the only entry, so it is reported rather than walked. A folder nested past
    :data:`SCAN_DEPTH` is an entry with a note; past :data:`SCAN_NAMES` names the scan
    stops, and ``sub`` itself carries the note.
    """
    try:
        top = open_folder(root, sub)
    except OSError:
        try:
            st = os.stat(root / sub, follow_symlinks=False)  # root is the host's: trusted
        except OSError:
            return {}
        return {sub: _entry(sub, st)}
    found: dict[str, Entry] = {}
    try:
        for _fd, folder, name, st, entered in walk(top, max_depth=SCAN_DEPTH, skip_hidden=True):
            rel = os.path.normpath(os.path.join(sub, folder, name))
            if stat.S_ISDIR(st.st_mode):
                if not entered:
                    found[rel] = _entry(rel, st, f"a folder nested more than {SCAN_DEPTH} deep: not read")
                continue
            shown = shown_name(rel)
            if shown != rel:  # not storable as a name (undecodable bytes, control characters)
                found[rel] = _entry(shown, st, "a name that is not plain text: not read (rename it)")
            else:
                found[rel] = _entry(rel, st)
            if len(found) >= SCAN_NAMES:
                found[sub] = _entry(sub, os.fstat(top), f"more than {SCAN_NAMES} names: the rest was not read")
                break
    finally:
        os.close(top)
    return found


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


#: How deep ownership is handed to a new kernel; deeper content keeps its old owner.
CHOWN_DEPTH = 256


def chown_tree(root: Path, uid: int, gid: int) -> None:
    """Give ``root`` and everything under it to ``uid:gid``; links themselves, not their targets."""
    os.chown(root, uid, gid, follow_symlinks=False)
    top = os.open(root, _NOFOLLOW_DIR)
    try:
        for dir_fd, _folder, name, _st, _entered in walk(top, max_depth=CHOWN_DEPTH):
            try:
                os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                pass  # gone meanwhile
    finally:
        os.close(top)


def holds_files(root: Path) -> bool:
    """Whether anything but folders is under ``root`` (links count as files, and so does a
    folder too deep to look into)."""
    try:
        top = os.open(root, _NOFOLLOW_DIR)
    except FileNotFoundError:
        return False
    try:
        return any(not (stat.S_ISDIR(st.st_mode) and entered)
                   for _fd, _f, _n, st, entered in walk(top, max_depth=CHOWN_DEPTH))
    finally:
        os.close(top)
