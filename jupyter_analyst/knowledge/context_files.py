"""Reading a context folder as hostile input: its files come from elsewhere (a repository, a
colleague), so the host reads only the folder's own regular files, within caps.

No link is followed (one to a file inside the folder neither: a link is a problem named
once, and the turn goes on without it); a file is opened with ``O_NOFOLLOW`` and checked
to be a regular file on the descriptor it was read from, so a file swapped for a link or a
pipe between the listing and the read is refused too. Hidden files and folders are skipped,
as git tools and dbt skip them.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from .definitions import ContextProblem

#: The most bytes of one file read (a semantic model of hundreds of measures is some 100 kB).
MAX_FILE_BYTES = 256 * 1024
#: The most bytes of the whole folder read.
MAX_TOTAL_BYTES = 4 * 1024 * 1024
#: The most files read.
MAX_FILES = 400
#: How deep folders are walked.
MAX_DEPTH = 6
RULES = "rules.md"
QUERIES = "queries"


@dataclass(frozen=True)
class FolderFile:
    """One file of the folder: its path relative to the folder (``/``-separated) and text."""

    path: str
    text: str

    @property
    def is_rules(self) -> bool:
        return self.path == RULES

    @property
    def is_query(self) -> bool:
        return self.path.startswith(f"{QUERIES}/") and self.path.endswith(".sql")

    @property
    def is_yaml(self) -> bool:
        return self.path.endswith((".yml", ".yaml"))


def _read(path: Path, cap: int) -> bytes:
    """The bytes of the regular file at ``path``, never through a link; at most ``cap``+1."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError("not a regular file")
        chunks, size = [], 0
        while size <= cap and (chunk := os.read(fd, min(65_536, cap + 1 - size))):
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _wanted(relative: str) -> bool:
    if relative == RULES:
        return True
    if relative.endswith(".sql"):
        return relative.startswith(f"{QUERIES}/")
    return relative.endswith((".yml", ".yaml"))


def read_folder(root: Path) -> tuple[list[FolderFile], list[ContextProblem]]:
    """The folder's files the context is made of, in a stable order, and those not read.

    ``rules.md`` at the top, ``*.yml``/``*.yaml`` anywhere, ``queries/**/*.sql``.
    """
    files: list[FolderFile] = []
    problems: list[ContextProblem] = []
    total = 0

    def walk(folder: Path, prefix: str, depth: int) -> None:
        nonlocal total
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            problems.append(ContextProblem(file=prefix.rstrip("/") or ".", message=f"cannot be listed: {exc.strerror}"))
            return
        for entry in entries:
            relative = prefix + entry.name
            if entry.name.startswith("."):
                continue
            if entry.is_symlink():
                problems.append(ContextProblem(file=relative, message="a link: not followed (a context folder is "
                                                                      "read only through its own files)"))
                continue
            if entry.is_dir(follow_symlinks=False):
                if depth < MAX_DEPTH:
                    walk(Path(entry.path), relative + "/", depth + 1)
                continue
            if not _wanted(relative):
                continue
            if len(files) >= MAX_FILES:
                problems.append(ContextProblem(file=relative, message=f"not read: the folder's first {MAX_FILES} "
                                                                      "files are read"))
                return
            try:
                data = _read(Path(entry.path), MAX_FILE_BYTES)
            except OSError as exc:
                reason = "a link: not followed" if exc.errno == getattr(os, "ELOOP", -1) else exc.strerror or str(exc)
                problems.append(ContextProblem(file=relative, message=f"not read: {reason}"))
                continue
            if len(data) > MAX_FILE_BYTES:
                problems.append(ContextProblem(file=relative, message=f"not read: larger than {MAX_FILE_BYTES // 1024} kB"))
                continue
            if total + len(data) > MAX_TOTAL_BYTES:
                problems.append(ContextProblem(file=relative, message=f"not read: the folder's files pass "
                                                                      f"{MAX_TOTAL_BYTES // 1024 // 1024} MB in all"))
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = data[: exc.start].count(b"\n") + 1
                problems.append(ContextProblem(file=relative, line=line, message="not UTF-8 text"))
                continue
            total += len(data)
            files.append(FolderFile(relative, text))

    walk(root, "", 0)
    return files, problems
