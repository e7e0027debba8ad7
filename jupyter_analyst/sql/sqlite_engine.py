"""SQLite as a source engine: a database file opened read-only, behind SQLite's own walls.

The file opens in SQLite's read-only URI mode (``mode=ro``; a missing file is refused, never
created empty), every connection runs with ``PRAGMA query_only``, no extension loading and a
cap on any value's size, and each model query runs under an authorizer that allows reading
and calling allowed functions only (``sealed.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import SourceError
from .sealed import EngineLimits, QueryGuard, harden_sqlite, sqlite_authorizer
from .source_engine import ESTIMATE_TIMEOUT_S, estimates_from, file_version, source_not_found
from .sqlalchemy_engine import SQLAlchemySource

#: The first bytes of every SQLite database file.
SQLITE_MAGIC = b"SQLite format 3\x00"


class SQLiteSource(SQLAlchemySource):
    """A SQLite database (a file, or in memory) through SQLAlchemy."""

    dialect = "sqlite"

    def prepare_url(self, url: Any) -> Any:
        url, self.path = _read_only_sqlite(url)
        return url

    def harden(self, engine: Any) -> None:
        harden_sqlite(engine)

    def check_connection(self, conn: Any) -> None:
        if self.path is not None:
            # Opening a file checks nothing; reading its catalogue tells a database from any
            # other file.
            conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").all()

    def open_query(self, conn: Any, timeout_s: float) -> QueryGuard:
        guard = QueryGuard(conn)
        if hasattr(guard.raw, "set_authorizer"):
            guard.raw.set_authorizer(sqlite_authorizer)
        return guard

    def row_estimates(self) -> dict[str, int]:
        """The rows ``ANALYZE`` recorded in ``sqlite_stat1`` (the first figure of each entry),
        where the database was analysed; none otherwise (SQLite keeps no other estimate)."""
        if self.probe("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'", ESTIMATE_TIMEOUT_S) != [(1,)]:
            return {}
        return estimates_from(self.probe("SELECT tbl, MAX(CAST(stat AS INTEGER)) FROM sqlite_stat1 GROUP BY tbl",
                                         ESTIMATE_TIMEOUT_S))

    def data_version(self) -> str:
        if self.path is not None:
            return f"sqlite:{file_version([self.path])}"
        return super().data_version()


def is_sqlite_file(spec: str) -> bool:
    """Whether ``spec`` is the path of a SQLite database file."""
    path = Path(spec).expanduser()
    if not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == SQLITE_MAGIC
    except OSError:  # unreadable: another kind may say why
        return False


def open_sqlite_file(spec: str, limits: EngineLimits | None) -> SQLiteSource:
    """The SQLite database at the path ``spec``."""
    from sqlalchemy.engine import URL

    # Built as a URL object: a file name may hold '?' or '#', which URL text would split.
    url = URL.create("sqlite", database=str(Path(spec).expanduser().resolve()))
    return SQLiteSource(spec, url=url, limits=limits)


def _read_only_sqlite(url: Any) -> tuple[Any, Path | None]:
    """A SQLite URL that opens its file read-only, and that file (``None`` in memory).

    SQLite creates a missing file when asked to open it for writing, so a typo would make
    an empty database and every query would find nothing. A file is therefore opened in
    SQLite's read-only URI mode (``mode=ro``), and one that does not exist is refused.

    Raises:
        SourceError: ``source_not_found`` for a missing file, ``source_unreadable`` for
            something that is not a file.
    """
    database = url.database or ""
    query = dict(url.query)
    is_uri = str(query.get("uri", "")).lower() in ("true", "1")
    if is_uri and database.startswith("file:"):
        database = database.removeprefix("file:").split("?", 1)[0]
        if database.startswith("//"):  # file://host/path: only the local host exists for SQLite
            database = "/" + database[2:].partition("/")[2]
    if database in ("", ":memory:") or query.get("mode") == "memory":
        return url, None
    path = Path(database).expanduser().resolve()
    if not path.exists():
        raise source_not_found(str(path))
    if not path.is_file():
        raise SourceError(f"{path} is not a SQLite database file", reason="source_unreadable",
                          hint="point the sqlite:/// URL at a database file")
    if url.get_driver_name() != "pysqlite":
        return url.set(database=str(path)), path  # other drivers: at least never a new file
    query.update({"mode": "ro", "uri": "true"})
    return url.set(database=f"file:{quote(str(path))}", query=query), path
