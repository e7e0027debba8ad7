"""File-system failures as one clear error: a read-only or full workspace (or destination).

Writes reach the disk through SQLite, the blob store, notebooks and the query engine, each
failing in its own words (``OSError`` numbers, SQLite result codes, an engine's message).
:func:`unavailable` recognises the two failures a user can do something about, read-only
and full, in all of them, and names the folder concerned.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from .errors import DiskUnavailable

_READ_ONLY = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
# SQLite's primary result codes (the low byte of an extended one).
_SQLITE_READONLY, _SQLITE_FULL = 8, 13
_SQLITE_CANTOPEN, _SQLITE_IOERR = 14, 10


def _kind_of(exc: BaseException) -> str | None:
    """``"read_only"``, ``"full"`` or ``None``, from the error or the errors behind it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno is not None:
            if current.errno in _READ_ONLY:
                return "read_only"
            if current.errno in _FULL:
                return "full"
        if isinstance(current, sqlite3.Error):
            code = (getattr(current, "sqlite_errorcode", None) or 0) & 0xFF
            if code == _SQLITE_READONLY:
                return "read_only"
            if code == _SQLITE_FULL:
                return "full"
        # Engines (DuckDB, drivers) pass the OS's own words on in their messages.
        text = str(current)
        if os.strerror(errno.ENOSPC) in text or os.strerror(errno.EDQUOT) in text:
            return "full"
        if os.strerror(errno.EROFS) in text:
            return "read_only"
        current = current.__cause__ or current.__context__
    return None


def _probe(where: Path) -> str | None:
    """What the file system holding ``where`` (or its nearest existing folder) is like now."""
    path = Path(where)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        stats = os.statvfs(path)
    except OSError:
        return None
    if stats.f_flag & os.ST_RDONLY:
        return "read_only"
    if stats.f_bavail == 0 or stats.f_favail == 0:
        return "full"
    return None


def _opaque(exc: BaseException) -> bool:
    """Errors that do not say why (SQLite's "unable to open", "disk I/O error")."""
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    return isinstance(exc, sqlite3.Error) and code in (_SQLITE_CANTOPEN, _SQLITE_IOERR)


def unavailable(exc: BaseException, where: Path | str, *, workspace: bool = True) -> DiskUnavailable | None:
    """The :class:`DiskUnavailable` that ``exc`` stands for, or ``None`` for other failures.

    ``where`` is the folder named: the workspace's root, or (``workspace=False``) the file
    that could not be written.
    """
    kind = _kind_of(exc) or (_probe(Path(where)) if _opaque(exc) or isinstance(exc, OSError) else None)
    if kind is None:
        return None
    detail = getattr(exc, "strerror", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
    if workspace:
        if kind == "read_only":
            return DiskUnavailable(f"workspace is read-only: {where}", reason="workspace_read_only",
                                   hint="make it writable, or pass --workspace DIR on a writable disk", detail=detail)
        return DiskUnavailable(f"no space left in {where}", reason="workspace_full",
                               hint="free some space (or pass --workspace DIR on another disk) and run again; "
                                    "completed steps are kept", detail=detail)
    if kind == "read_only":
        return DiskUnavailable(f"cannot write {where}: the file system is read-only", reason="read_only",
                               hint="write it to a writable folder", detail=detail)
    return DiskUnavailable(f"cannot write {where}: no space left on the disk", reason="disk_full",
                           hint="free some space, or write it to another disk", detail=detail)
