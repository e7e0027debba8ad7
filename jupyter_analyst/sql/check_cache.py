"""Checked queries kept in the workspace, so that another process need not check them again.

A query's check is a pure function of its text, the source (kind, place, dialect) as of its
data version, and the checker itself. A process remembers its own checks (``preparer.py``);
this folder remembers them across processes: a ``jupyter analyst run`` whose SQL steps are
all reused answers their checks from here, and starts no checker process (which would take
longer to import sqlglot than the rest of the turn).

The checker is part of each key (:func:`checker_identity`: its sources and sqlglot's
version), so a check made by another version of it is never taken. A source without files
(``:memory:``) is not kept: it is only itself. The folder is the host's (beside the
database, outside any kernel's mount); an entry that cannot be read is a miss, one that
cannot be written is not kept, and neither fails the query.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from functools import cache
from pathlib import Path

from pydantic import ValidationError

from .query_model import PreparedQuery


def settled(version: str) -> bool:
    """Whether a source's data version says its data is the same while it is unchanged: a
    version of files does; a live database's (``...:live``) or an in-memory one's does not.

    >>> settled("/d/shop.duckdb:1024:1700000000.0"), settled("postgresql://u:***@h/db:live"), settled("memory")
    (True, False, False)
    """
    return version != "memory" and not version.endswith(":live")


#: What a live source's data version means for the steps of a thread and for ``verify``.
LIVE_DATA_NOTE = ("the source gives no data version (a live database, or Spark tables that are not Delta "
                  "tables): steps reused across turns, and verify's match, assume its data did not change")


def data_version_note(version: str | None) -> str | None:
    """What people must be told about ``version``: a live source's caveat, else nothing.

    >>> data_version_note("spark:sc://h:15002:live") == LIVE_DATA_NOTE
    True
    >>> data_version_note("spark:sc://h:15002:delta:orders@3") is None, data_version_note(None) is None
    (True, True)
    """
    return LIVE_DATA_NOTE if version is not None and version.endswith(":live") else None


@cache
def checker_identity() -> str:
    """What the SQL check is made of: a digest of this package's SQL layer (its modules and
    function allow-lists) and sqlglot's version, computed once per process.

    >>> len(checker_identity()), checker_identity() == checker_identity()
    (64, True)
    """
    from importlib.metadata import PackageNotFoundError, version

    from .._version import __version__

    digest = hashlib.sha256(__version__.encode())
    try:
        digest.update(version("sqlglot").encode())
    except PackageNotFoundError:  # the checker then cannot run; a key without it is still one
        digest.update(b"no sqlglot")
    here = Path(__file__).resolve().parent
    for path in sorted([*here.rglob("*.py"), *(here / "allowed").glob("*")]):
        digest.update(str(path.relative_to(here)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


class CheckCache:
    """A folder of checked queries, one JSON file per query, addressed by its key's digest."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, key: tuple[str, ...]) -> Path:
        text = json.dumps([checker_identity(), *key])
        digest = hashlib.sha256(text.encode()).hexdigest()
        return self.folder / digest[:2] / f"{digest}.json"

    def get(self, key: tuple[str, ...]) -> PreparedQuery | None:
        """The check kept for ``key`` (``(sql, kind, spec, dialect, data version)``), or ``None``."""
        try:
            prepared = PreparedQuery.model_validate_json(self._path(key).read_bytes())
        except (OSError, ValidationError, ValueError):
            return None
        # The text is in the file too: an entry of another query (copied, or a collision) is no answer.
        return prepared if prepared.original == key[0] else None

    def put(self, key: tuple[str, ...], prepared: PreparedQuery) -> None:
        """Keep ``prepared`` for ``key``: written whole or not at all (a file of its own, renamed)."""
        path = self._path(key)
        tmp = path.with_name(f".{uuid.uuid4().hex}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(prepared.model_dump_json())
            os.replace(tmp, path)
        except OSError:  # a read-only or full workspace: the query was checked all the same
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
