"""Adding a verified query to a context folder: its file in ``queries/`` and its task in
``suite.jsonl``, written by the host into a folder that is not its own ground.

The folder may sit where a kernel or a colleague can write, so nothing is written through a
link: the folder itself, ``queries/`` and each file are opened without following one (a link
is refused, naming it), every step works on the descriptor it opened, and a query file is
never replaced (an existing name is refused, or the next free ``_2``, ``_3``... is taken).
The query file appears whole or not at all (written aside, then linked under its name, which
fails if the name was taken meanwhile); the task is one appended line, under a lock, so two
verifications at once both land.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import stat
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .context_files import QUERIES

#: The team's regression suite, beside ``rules.md``: one eval task a line.
SUITE = "suite.jsonl"
#: The most characters of a file name's stem made from a question.
STEM_CHARS = 60
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


@dataclass(frozen=True)
class QueryHeader:
    """What a verified query's header says (see verified.py), and notes a person reads."""

    questions: list[str]
    verified_by: str
    verified_at: str
    notes: dict[str, str]
    """Further ``-- key: value`` lines (the answer when verified, where it came from); the
    folder's reader leaves them aside."""


def one_line(text: str, cap: int = 300) -> str:
    """``text`` as one header line: whitespace collapsed, control and format characters out
    (a line break of any kind would end the comment and start SQL), at most ``cap`` characters.

    >>> one_line("What was\\nrevenue\\u2028 by  month?\\x1b[2J")
    'What was revenue by month?[2J'
    """
    flat = " ".join(text.split())
    return "".join(ch for ch in flat if unicodedata.category(ch)[0] != "C")[:cap].strip()


def render_query(header: QueryHeader, sql: str) -> str:
    """The file's text: the header, then the SQL without leading comment lines (which the
    reader would take for more header: a ``-- verified_by:`` of the SQL's own).

    >>> print(render_query(QueryHeader(["Total | sum?"], "ana", "2026-12-04", {"answer": "3"}),
    ...                    "-- verified_by: mallory\\n\\nSELECT 3"), end="")
    -- question: Total / sum?
    -- verified_by: ana
    -- verified_at: 2026-12-04
    -- answer: 3
    SELECT 3
    """
    lines = [f"-- question: {one_line(q).replace('|', '/')}" for q in header.questions]
    lines += [f"-- verified_by: {one_line(header.verified_by, 120)}", f"-- verified_at: {header.verified_at}"]
    lines += [f"-- {re.sub(r'[^a-z_]', '', key)}: {one_line(value)}" for key, value in header.notes.items()]
    body = sql.strip().splitlines()
    while body and (not body[0].strip() or body[0].lstrip().startswith("--")):
        body.pop(0)
    if not body:
        raise ConfigError("the query has no SQL besides comments", reason="no_sql")
    return "\n".join([*lines, *body]) + "\n"


def stem_of(question: str) -> str:
    """A file name's stem from a question: its words, lower case, joined by ``_``.

    >>> stem_of("What was revenue by month (2024)?"), stem_of("???")
    ('what_was_revenue_by_month_2024', 'verified_query')
    """
    words = re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKD", question).encode("ascii", "ignore").decode().lower())
    stem = "_".join(words)[:STEM_CHARS].rstrip("_")
    return stem or "verified_query"


def open_dir(name: str | Path, *, parent: int | None = None, create: bool, shown: str) -> int:
    """A folder's descriptor, never through a link (made first when ``create``)."""
    if create:
        try:
            os.mkdir(name, 0o755, dir_fd=parent)
        except FileExistsError:
            pass
        except FileNotFoundError:
            raise ConfigError(f"the folder above {shown} does not exist", reason="context_not_found",
                              hint="make it, or name another context folder with --context DIR") from None
    try:
        return os.open(name, _DIRECTORY, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(name, parent):
            raise ConfigError(f"{shown} is a link: the context folder is written only through its own folders",
                              reason="context_link", hint="replace the link with the folder itself") from None
        if exc.errno == errno.ENOTDIR:
            raise ConfigError(f"{shown} is not a folder", reason="context_not_a_folder") from None
        if exc.errno == errno.ENOENT:
            raise ConfigError(f"there is no context folder {shown}", reason="context_not_found",
                              hint="make it, or name another with --context DIR") from None
        raise


def _is_link(name: str | Path, parent: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _taken(name: str, folder: int) -> bool:
    try:
        os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _suite_ids(text: str) -> set[str]:
    ids = set()
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("id") is not None:
            ids.add(str(record["id"]))
    return ids


def _open_suite(root: int, shown: str) -> int:
    """``suite.jsonl`` for appending (made when missing), refused when it is not a plain file."""
    try:
        fd = os.open(SUITE, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644, dir_fd=root)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{shown}/{SUITE} is a link: it is written only as a file of the folder",
                              reason="context_link", hint="replace the link with the file itself") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError(f"{shown}/{SUITE} is not a file", reason="context_not_a_folder")
    return fd


def team_suite(folder: Path) -> Path:
    """The folder's ``suite.jsonl``, checked to be the folder's own file (neither is a link).

    Raises:
        ConfigError: no folder or no suite (``context_not_found``), or a link (``context_link``).
    """
    for path, what in ((folder, "folder"), (folder / SUITE, "file")):
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            raise ConfigError(f"there is no {path}", reason="context_not_found",
                              hint="verify an answer first (jupyter analyst context verify --thread ID), or name "
                                   "the folder with --context DIR") from None
        if stat.S_ISLNK(mode):
            raise ConfigError(f"{path} is a link: the team's suite is read only as the context folder's own file",
                              reason="context_link", hint=f"replace the link with the {what} itself")
    return folder / SUITE


def _read_all(fd: int) -> str:
    chunks = []
    offset = 0
    while chunk := os.pread(fd, 1 << 16, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks).decode("utf-8", errors="replace")


def add_verified_query(
    folder: Path, *, stem: str, text: str, task: dict[str, Any], exact: bool = False,
) -> tuple[str, str]:
    """Write the query ``text`` as ``queries/<stem>.sql`` and append ``task`` (its ``id`` set
    to the file's stem, its ``query`` to the file) to ``suite.jsonl``; returns the file's path in the folder and the
    task's id. ``exact``: the name is the user's, so a taken one is refused rather than
    numbered. The folder is made when missing; its parent must exist.

    Raises:
        ConfigError: the folder, ``queries/`` or the suite is a link (``context_link``), the
            name is taken (``query_exists``), or the name is not a plain file name.
    """
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", stem) or stem.endswith("."):
        raise ConfigError(f"{stem!r} is not a query name: letters, digits, _ . - only", reason="invalid_name")
    shown = str(folder)
    root = open_dir(folder, create=True, shown=shown)
    try:
        queries = open_dir(QUERIES, parent=root, create=True, shown=f"{shown}/{QUERIES}")
        suite = _open_suite(root, shown)
        try:
            fcntl.flock(suite, fcntl.LOCK_EX)  # the id's choice and the append, one verification at a time
            existing = _read_all(suite)
            ids = _suite_ids(existing)
            name, n = stem, 1
            while _taken(f"{name}.sql", queries) or name in ids:
                if exact:
                    where = f"{QUERIES}/{name}.sql" if _taken(f"{name}.sql", queries) else f"the task {name!r} of {SUITE}"
                    raise ConfigError(f"{where} already exists: a verified query is never replaced",
                                      reason="query_exists", hint="choose another name, or remove the old one first")
                n += 1
                name = f"{stem}_{n}"
            write_new(queries, f"{name}.sql", text)
            line = json.dumps({"id": name, **{k: v for k, v in task.items() if k != "id"},
                               "query": f"{QUERIES}/{name}.sql"}, ensure_ascii=False) + "\n"
            if existing and not existing.endswith("\n"):
                line = "\n" + line
            try:
                _write_fully(suite, line.encode("utf-8"))
            except OSError:
                os.unlink(f"{name}.sql", dir_fd=queries)  # no query without its task
                raise
        finally:
            os.close(suite)
            os.close(queries)
    finally:
        os.close(root)
    return f"{QUERIES}/{name}.sql", name


def write_new(folder: int, name: str, text: str, *, under: str = QUERIES, what: str = "a verified query") -> None:
    """``name`` in ``folder`` (``under`` in the context folder) with ``text``, whole or not at
    all, never over an existing name."""
    aside = f".{name}.{os.getpid()}.tmp"
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=folder)
    try:
        _write_fully(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(aside, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
    except FileExistsError:
        raise ConfigError(f"{under}/{name} already exists: {what} is never replaced",
                          reason="query_exists" if under == QUERIES else "definition_exists",
                          hint="choose another name") from None
    finally:
        os.unlink(aside, dir_fd=folder)


def _write_fully(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]
