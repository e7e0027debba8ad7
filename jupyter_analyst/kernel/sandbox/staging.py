"""The kernel's folder when the working folder is the user's own (papermill's ``--cwd``).

Started as root, a kernel runs as a leased uid that owns nothing and is in no group
(identity.py). A user's folder is often private (a home folder is 0750, ``mktemp -d`` makes
0700) and the data in it 0600: that uid can read none of it, and handing it the folder
(``chown``) would take the user's files from the user. So the host never changes the
user's folder or what is in it; the kernel works in a staging folder the host makes, which
is the kernel uid's and no one else's (0700), and which bubblewrap mounts at the user
folder's path, so the notebook's relative paths and ``os.getcwd()`` are as they were:

* **in**: the inputs the user named (papermill's ``-p`` values, ``verify``'s source) that
  lie in the working folder are copied into the staging folder at the same names; those
  elsewhere that the uid cannot read are copied beside it and mounted read-only at their
  own paths. The host reads only what the user named, never follows a link inside a named
  folder, and copies at most :data:`COPY_NAMES` names of one.
* **out**: once none of the kernel's processes is left, each plain file it made is copied
  back into the user's folder. The staging folder is the kernel's, hostile ground
  (workdir.py): a link, a hard link or a special file there is reported and not copied.
  In the user's folder the host writes a new file of its own and renames it into place,
  so it never writes through a name that is there, and it leaves a name that is a link or
  a folder there alone, as it does every link on the way (folders are opened without
  following links). A new file or folder takes the owner of the folder it is in; a
  replaced file keeps its owner and mode. Hidden names (the kernel's ``HOME`` caches) and
  the inputs stay behind, as they were read-only before.

Each kernel's staging folder is its uid's, 0700, inside a root folder others may only pass
through: another kernel (another uid) cannot enter it, and under bubblewrap does not see
it at all.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import KernelError
from ..workdir import open_folder, open_regular, scan, walk

NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
NOFOLLOW_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

#: The most names copied in from one named folder (past it the kernel is refused, not started).
COPY_NAMES = 20_000
#: How deep a named folder is copied.
COPY_DEPTH = 32


def _copy_bytes(src: int, dst: int) -> None:
    """Every byte of the file ``src`` into ``dst`` (both descriptors)."""
    offset = 0
    while True:
        sent = os.sendfile(dst, src, offset, 1 << 24)
        if sent == 0:
            return
        offset += sent


def _new_file(dir_fd: int, name: str, src: int, owner: tuple[int, int], mode: int) -> None:
    """``name`` in the folder ``dir_fd``: a file the host makes now, never one that was there."""
    fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        _copy_bytes(src, fd)
        os.fchown(fd, *owner)
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def _new_folder(dir_fd: int, name: str, owner: tuple[int, int], mode: int) -> int:
    """A descriptor of the folder ``name`` the host makes in ``dir_fd``, given to ``owner``."""
    os.mkdir(name, mode, dir_fd=dir_fd)
    fd = os.open(name, NOFOLLOW_DIR, dir_fd=dir_fd)
    os.fchown(fd, *owner)
    os.fchmod(fd, mode)
    return fd


@dataclass
class Stage:
    """One kernel's staging folder: ``root/work`` stands for the user's working folder
    ``user`` (when the kernel has one), ``root/in`` holds copies of inputs elsewhere."""

    root: Path
    ids: tuple[int, int]
    user: Path | None = None
    inputs: set[str] = field(default_factory=set)
    """The names under ``work`` copied in: never copied back out."""
    copies: dict[Path, Path] = field(default_factory=dict)
    """Inputs elsewhere, by their path, and the copy the host made of each (mounted there)."""

    @property
    def work(self) -> Path:
        return self.root / "work"

    @classmethod
    def create(cls, ids: tuple[int, int], user: Path | None = None) -> Stage:
        root = Path(tempfile.mkdtemp(prefix="ja-stage-"))
        os.chmod(root, 0o711)  # the kernel's uid passes through to its own folders, no one lists them
        for name in ("work", "in"):
            os.mkdir(root / name, 0o700)
            os.chown(root / name, *ids)
        return cls(root, ids, None if user is None else Path(user))

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    # -- in ---------------------------------------------------------------------------------

    def bring_in(self, path: Path) -> None:
        """Copy the named input ``path`` (in the user's folder) into the staging folder."""
        assert self.user is not None
        rel = os.path.normpath(os.path.relpath(path, self.user))
        parent, name = os.path.split(rel)
        dir_fd = os.open(self.work, NOFOLLOW_DIR)
        try:
            for part in Path(parent).parts:
                child = self._folder(dir_fd, part)
                os.close(dir_fd)
                dir_fd = child
            if rel == ".":  # the working folder itself was named
                self._copy_tree(path, dir_fd, "")
            else:
                self._copy(path, dir_fd, name, rel)
        finally:
            os.close(dir_fd)

    def set_aside(self, path: Path) -> Path:
        """A copy of the named input ``path`` (outside the user's folder), to mount at it."""
        slot = str(len(self.copies))
        name = path.name or "root"
        parent = os.open(self.root / "in", NOFOLLOW_DIR)
        try:
            dir_fd = self._folder(parent, slot)
        finally:
            os.close(parent)
        try:
            self._copy(path, dir_fd, name, None)
        finally:
            os.close(dir_fd)
        self.copies[Path(path)] = self.root / "in" / slot / name
        return self.copies[Path(path)]

    def _folder(self, dir_fd: int, name: str) -> int:
        """The kernel's folder ``name`` in ``dir_fd`` (of the staging folder, made by the host)."""
        try:
            return _new_folder(dir_fd, name, self.ids, 0o700)
        except FileExistsError:
            return os.open(name, NOFOLLOW_DIR, dir_fd=dir_fd)

    def _file(self, dir_fd: int, name: str, src: int, rel: str | None) -> None:
        """The file ``src`` as ``name`` (an input at ``rel`` under the staging folder, if there)."""
        if not stat.S_ISREG(os.fstat(src).st_mode):
            return  # a FIFO or a device: nothing to copy
        os.set_blocking(src, True)
        try:
            _new_file(dir_fd, name, src, self.ids, 0o400)
        except FileExistsError:
            return  # named twice (a file and a folder holding it): copied once
        if rel is not None:
            self.inputs.add(rel)

    def _copy(self, path: Path, dir_fd: int, name: str, rel: str | None) -> None:
        """``path`` as ``name`` in ``dir_fd``; the caller resolved it (its links were the user's)."""
        st = os.stat(path, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            child = self._folder(dir_fd, name)
            try:
                self._copy_tree(path, child, rel)
            finally:
                os.close(child)
            return
        src = os.open(path, NOFOLLOW_FILE)
        try:
            self._file(dir_fd, name, src, rel)
        finally:
            os.close(src)

    def _copy_tree(self, path: Path, dest: int, rel: str | None) -> None:
        """The plain files and folders under ``path``, links not followed, into ``dest``."""
        top = os.open(path, NOFOLLOW_DIR)
        made: dict[str, int] = {"": dest}
        mine = os.stat(self.root)
        count = 0
        try:
            for dir_fd, folder, name, st, entered in walk(top, max_depth=COPY_DEPTH):
                count += 1
                if count > COPY_NAMES:
                    raise KernelError(
                        f"{path} holds more than {COPY_NAMES} names: too many to copy for the kernel's uid, which "
                        "cannot read it where it is", reason="sandbox_unreachable",
                        hint=f"name a smaller folder, or let other users read it (chmod o+rX {path})")
                here = made.get(folder)
                if here is None or (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino):
                    continue  # inside a folder not copied, or the staging folder itself
                inner = os.path.join(folder, name)
                if stat.S_ISDIR(st.st_mode):
                    if entered:
                        made[inner] = self._folder(here, name)
                elif stat.S_ISREG(st.st_mode):
                    try:
                        src = os.open(name, NOFOLLOW_FILE, dir_fd=dir_fd)
                    except OSError:
                        continue  # swapped for a link meanwhile, or unreadable: not copied
                    try:
                        self._file(here, name, src, None if rel is None else os.path.normpath(os.path.join(rel, inner)))
                    finally:
                        os.close(src)
        finally:
            os.close(top)
            for key, fd in made.items():
                if key:
                    os.close(fd)

    # -- out --------------------------------------------------------------------------------

    def bring_out(self) -> list[str]:
        """Copy what the kernel made back into the user's folder; why each name was not."""
        assert self.user is not None
        notes: list[str] = []
        for rel, entry in sorted(scan(self.work, "").items()):
            if rel in self.inputs:
                continue
            why = entry.problem()
            if why is None:
                try:
                    src, st = open_regular(self.work, rel)
                except OSError:
                    why = "changed while it was read"
                else:
                    try:
                        why = place(self.user, rel, src, st.st_mode & 0o644)
                    finally:
                        os.close(src)
            if why is not None:
                notes.append(f"{entry.relpath}: {why}")
        return notes


def place(user: Path, rel: str, src: int, mode: int) -> str | None:
    """Write the file ``src`` at ``user/rel``; why not, or ``None`` when it is there.

    Folders are opened without following links (one is made where missing, given to the
    owner of the folder it is in). The file is a new one of the host's, renamed over the
    name: a plain file there is replaced, keeping its owner and mode; anything else (a
    link, a folder, a FIFO) is left as it is.
    """
    parent, name = os.path.split(rel)
    try:
        dir_fd = open_folder(user)
    except OSError as exc:
        return f"the working folder cannot be opened ({exc.strerror})"
    try:
        for part in Path(parent).parts:
            here = os.fstat(dir_fd)
            try:
                child = os.open(part, NOFOLLOW_DIR, dir_fd=dir_fd)
            except FileNotFoundError:
                child = _new_folder(dir_fd, part, (here.st_uid, here.st_gid), 0o755)
            except OSError:
                return f"{part} in the working folder is a link or not a folder: not written through"
            os.close(dir_fd)
            dir_fd = child
        try:
            old: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        if old is not None and not stat.S_ISREG(old.st_mode):
            return "the working folder has a link, a folder or a special file of that name: left as it is"
        here = os.fstat(dir_fd)
        owner = (old.st_uid, old.st_gid) if old is not None else (here.st_uid, here.st_gid)
        keep = stat.S_IMODE(old.st_mode) & 0o777 if old is not None else mode
        temp = f".ja-out-{secrets.token_hex(8)}"
        try:
            _new_file(dir_fd, temp, src, owner, keep)
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            try:
                os.unlink(temp, dir_fd=dir_fd)
            except FileNotFoundError:
                pass
            return f"not written ({exc.strerror or exc})"
        return None
    finally:
        os.close(dir_fd)
