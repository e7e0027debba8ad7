"""Taking a step's files out of the kernel's folder: within caps, without following links.

The caps are checked on what the files *say* they are (their sizes, their count) before a
single byte is copied, so a step that leaves 5,000 files or three sparse 1 GB files stores
nothing and the model is told why. A file that passes is copied through the descriptor that
was checked (never by its path again) into a host-private staging folder, so what is stored
is exactly what was checked, even if the kernel changes the name meanwhile.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from .workdir import open_folder, open_regular

MB = 2**20


class OutputCaps(BaseModel):
    """How much one step, and one thread in all, may add to the artifact inventory."""

    step_bytes: int = Field(256 * MB, ge=0)
    """Bytes of files and figures one Python step may store."""
    step_files: int = Field(100, ge=0)
    """Files and figures one Python step may store."""
    thread_bytes: int = Field(4096 * MB, ge=0)
    """Bytes of artifacts one thread may hold (datasets included)."""
    thread_files: int = Field(2000, ge=0)
    """Artifacts one thread may hold (datasets included)."""

    def describe(self) -> str:
        """One line for ``doctor`` and the sandbox's page of the docs (docs/sandbox.md).

        >>> OutputCaps().describe()
        'per step 256 MB in 100 files; per thread 4096 MB in 2000 artifacts'
        """
        return (f"per step {self.step_bytes // MB} MB in {self.step_files} files; "
                f"per thread {self.thread_bytes // MB} MB in {self.thread_files} artifacts")


@dataclass
class Staged:
    """A file copied out of the kernel's folder, ready to be moved into the blob store."""

    relpath: str
    path: Path
    size: int


@dataclass
class Collection:
    """What a step's files became: staged copies, and what was refused with the reason."""

    staged: list[Staged] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)

    def discard(self) -> None:
        """Remove the staged copies that were not handed over."""
        for item in self.staged:
            item.path.unlink(missing_ok=True)


def over_cap(caps: OutputCaps, *, files: int, size: int, thread_files: int, thread_bytes: int) -> str | None:
    """Why ``files`` new outputs of ``size`` bytes may not be stored, or ``None``.

    >>> over_cap(OutputCaps(step_files=2), files=3, size=10, thread_files=0, thread_bytes=0)
    'the step made 3 files and figures; a step may store 2'
    >>> over_cap(OutputCaps(), files=1, size=10, thread_files=0, thread_bytes=0) is None
    True
    """
    if files > caps.step_files:
        return f"the step made {files} files and figures; a step may store {caps.step_files}"
    if size > caps.step_bytes:
        return f"the step made {_mb(size)} of files and figures; a step may store {_mb(caps.step_bytes)}"
    return over_thread_cap(caps, files=files, size=size, thread_files=thread_files, thread_bytes=thread_bytes)


def over_thread_cap(caps: OutputCaps, *, files: int, size: int, thread_files: int, thread_bytes: int) -> str | None:
    """Why the thread may not take ``files`` more artifacts of ``size`` bytes, or ``None``."""
    if thread_files + files > caps.thread_files:
        return (f"the thread holds {thread_files} artifacts; with {files} more it would pass its cap of "
                f"{caps.thread_files}")
    if thread_bytes + size > caps.thread_bytes:
        return (f"the thread holds {_mb(thread_bytes)} of artifacts; with {_mb(size)} more it would pass its cap "
                f"of {_mb(caps.thread_bytes)}")
    return None


def collect(
    root: Path,
    relpaths: list[str],
    *,
    caps: OutputCaps,
    staging: Path,
    figures_bytes: int = 0,
    figures: int = 0,
    thread_files: int = 0,
    thread_bytes: int = 0,
) -> tuple[Collection, str | None]:
    """Stage the step's new files from ``root`` within ``caps``; ``(collection, refusal)``.

    ``figures``/``figures_bytes`` are the step's displayed images, which count towards the
    caps too. When the step as a whole is over a cap, nothing is staged and ``refusal``
    says why (every file is then listed as refused).
    """
    out = Collection()
    sized: list[tuple[str, int]] = []
    for rel in relpaths:
        size = _plain_size(root, rel)
        if size is None:
            out.refused.append((rel, "not a plain file in the kernel's folder (links are never followed)"))
        else:
            sized.append((rel, size))
    # Decided on the sizes the files declare, before anything is opened or copied.
    total = figures_bytes + sum(size for _, size in sized)
    refusal = over_cap(caps, files=figures + len(sized), size=total, thread_files=thread_files,
                       thread_bytes=thread_bytes)
    if refusal is not None:
        out.refused += [(rel, "over the cap") for rel, _ in sized]
        return out, refusal
    staging.mkdir(parents=True, exist_ok=True)
    try:
        for rel, declared in sized:
            try:
                fd, st = open_regular(root, rel)
            except OSError:
                out.refused.append((rel, "not a plain file in the kernel's folder (links are never followed)"))
                continue
            try:
                staged = _copy_out(fd, declared, staging) if st.st_size == declared else None
            finally:
                os.close(fd)
            if staged is None:
                out.refused.append((rel, "it changed while it was read"))
            else:
                out.staged.append(Staged(rel, staged, declared))
    except BaseException:
        out.discard()
        raise
    return out, None


def _plain_size(root: Path, relpath: str) -> int | None:
    """The size of the plain file ``root/relpath`` (no link followed anywhere), else ``None``."""
    parent, name = os.path.split(relpath)
    try:
        dir_fd = open_folder(root, parent)
    except OSError:
        return None
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    return st.st_size if stat.S_ISREG(st.st_mode) and st.st_nlink == 1 else None


def _copy_out(fd: int, size: int, staging: Path) -> Path | None:
    """Copy exactly ``size`` bytes from ``fd``; ``None`` when the file is not that size now."""
    tmp_fd, tmp = tempfile.mkstemp(dir=staging, prefix=".out-")
    try:
        with os.fdopen(tmp_fd, "wb") as dest:
            left = size
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                dest.write(chunk)
                left -= len(chunk)
            grew = bool(os.read(fd, 1))
        if left or grew:
            os.unlink(tmp)
            return None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _mb(size: int) -> str:
    return f"{size / MB:.0f} MB" if size >= MB else f"{size} bytes"
