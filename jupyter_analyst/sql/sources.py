"""Data sources: DuckDB (file, memory, CSV/Parquet files) and any SQLAlchemy URL.

Which kind a spec is comes from a small registry (``register_source``), tried in order.
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable
from urllib.parse import quote

import duckdb

from .._text import json_safe, nearest
from ..errors import SourceError, SqlRejected
from .engine_process import EngineProcess
from .query_model import ColumnInfo, TableDescription, TableInfo
from .parking import Parking
from .sealed import EngineLimits, PrivateFolder, engine_arguments, harden_engine, seal_duckdb
from .sealing import DUCKDB_CONNECT_CONFIG

_DATA_SUFFIXES = {".csv": "read_csv_auto", ".tsv": "read_csv_auto", ".parquet": "read_parquet",
                  ".json": "read_json_auto", ".ndjson": "read_json_auto", ".jsonl": "read_json_auto"}
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: Queries of one source that may run at once (a plan's parallel stage runs at most 16).
QUERY_THREADS = 16


@runtime_checkable
class DataSource(Protocol):
    """What the agent and the query runner need of a data source."""

    spec: str
    kind: str
    dialect: str
    interruptible: bool
    """Whether a query can be stopped midway (its thread let go at once) when not wanted."""

    def list_tables(self) -> list[TableInfo]: ...
    def describe_table(self, table: str, sample_rows: int = 5) -> TableDescription: ...
    def schema(self) -> dict[str, dict[str, str]]: ...
    def data_version(self) -> str: ...
    def close(self) -> None: ...


def _sanitise(stem: str) -> str:
    """A table name from a file name.

    >>> _sanitise("2024 Sales-Q1")
    't_2024_sales_q1'
    """
    name = re.sub(r"\W+", "_", stem).strip("_").lower() or "t"
    return f"t_{name}" if name[0].isdigit() else name


def _not_found(what: str) -> SourceError:
    return SourceError(
        f"data source not found: {what}",
        reason="source_not_found",
        hint="pass an existing .duckdb file, a CSV/Parquet file or folder, :memory:, or a SQLAlchemy URL",
    )


def file_version(paths: Sequence[Path]) -> str:
    """The identity of some files' contents as of now (name, size, modification time).

    Raises:
        SourceError: ``source_not_found`` when one of them is gone (moved or deleted
            after the source was opened).
    """
    parts = []
    for p in paths:
        try:
            st = p.stat()
        except OSError as exc:
            raise SourceError(
                f"the data file {p} is gone: {exc.strerror or exc}", reason="source_not_found",
                hint="it was moved or deleted after the source was opened; restore it or pass another source",
            ) from exc
        parts.append(f"{p.name}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(parts)


def _unknown_table(table: str, known: list[str]) -> SqlRejected:
    suggestions = nearest(table, known)
    return SqlRejected(
        f"Unknown table {table!r}." + (f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""),
        reason="unknown_table",
        suggestions=suggestions or known[:10],
        hint="call list_tables to see the tables",
    )


class DuckDBSource:
    """A DuckDB database: a file (read-only), ``:memory:``, or views over data files.

    Each source is a DuckDB instance of its own, sealed before it is handed out (see
    ``sealed.py``): the database attached read-only, no file reachable but the source's own
    data files and a private folder, limits set and locked. The model's queries run in a
    second instance, sealed the same, in a worker process of the source's own
    (:attr:`engine`, see ``engine_process.py``); this one serves the host's own look-ups.
    """

    dialect = "duckdb"
    interruptible = True

    def __init__(self, spec: str, *, files: list[Path] | None = None, limits: EngineLimits | None = None) -> None:
        self.spec = spec
        self._files = files or []
        self._lock = threading.Lock()
        self._schema: tuple[str, dict[str, dict[str, str]]] | None = None
        self.path: Path | None = None
        self.kind = "files" if files is not None else "duckdb"
        if files is None and spec != ":memory:":
            self.path = Path(spec).expanduser().resolve()
        #: The one folder the engine may write to (its result pipes, its spill files).
        self.private = PrivateFolder()
        try:
            self.conn = duckdb.connect(":memory:", config=DUCKDB_CONNECT_CONFIG)
            self._database = self._attach()
            readable = [self.path] if self.path is not None else self._files
            seal_duckdb(self.conn, self.private.path, files=readable, limits=limits)
            #: The worker process the model's queries run in: the same database, read-only, sealed
            #: the same, its private folder inside this one's (started on the first query).
            self.engine = EngineProcess(
                {"database": str(self.path if self.path is not None else self.private.path / "source.duckdb"),
                 "name": self._database, "files": [str(f) for f in readable]},
                self.private.path / "query", limits,
            )
        except BaseException:
            self.private.remove()
            raise
        #: The threads this source's queries run in (see ``SQLAlchemySource.executor``).
        self.executor = ThreadPoolExecutor(max_workers=QUERY_THREADS, thread_name_prefix="analyst-query")

    def _attach(self) -> str:
        """Attach the data read-only; the database's name, which every cursor uses."""
        if self.path is not None:
            before = self._databases()
            try:
                self.conn.execute(f"ATTACH {_literal(str(self.path))} (READ_ONLY)")
            except duckdb.Error as exc:
                self.conn.close()
                raise SourceError(
                    f"cannot open {self.spec} as a DuckDB database: {str(exc).splitlines()[0]}",
                    reason="source_unreadable",
                    hint="pass a .duckdb file, a CSV/Parquet file or folder, or a SQLAlchemy URL",
                ) from exc
            (name,) = self._databases() - before
        else:
            # Views over the data files (none for ":memory:") in a catalogue of the source's own,
            # written once and then attached read-only like any database.
            catalogue = self.private.path / "source.duckdb"
            name = "source"
            self.conn.execute(f"ATTACH {_literal(str(catalogue))} AS {name}")
            for f in self._files:
                reader = _DATA_SUFFIXES[f.suffix.lower()]
                self.conn.execute(
                    f'CREATE VIEW {name}."{_sanitise(f.stem)}" AS SELECT * FROM {reader}({_literal(str(f))})'
                )
            self.conn.execute(f"DETACH {name}")
            self.conn.execute(f"ATTACH {_literal(str(catalogue))} AS {name} (READ_ONLY)")
        self.conn.execute(f"USE {_identifier(name)}")
        return name

    def _databases(self) -> set[str]:
        return {row[0] for row in self.conn.execute("SELECT database_name FROM duckdb_databases()").fetchall()}

    def warm_engine(self) -> None:
        """A query is coming: start the engine worker now, without waiting for it."""
        self.engine.warm()

    @property
    def private_dir(self) -> Path:
        """The folder of the host's that the engine may write to (and nothing else)."""
        return self.private.path

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A connection of its own for one thread (DuckDB cursors are not shared)."""
        with self._lock:
            cursor = self.conn.cursor()
        cursor.execute(f"USE {_identifier(self._database)}")  # a new connection starts in the default one
        return cursor

    def data_version(self) -> str:
        """Changes whenever the database file or a data file changes."""
        paths = [self.path] if self.path else self._files
        return file_version(paths) if paths else "memory"

    def list_tables(self) -> list[TableInfo]:
        cur = self.cursor()
        try:
            rows = cur.execute(
                "SELECT table_name, table_type FROM information_schema.tables "
                "WHERE table_catalog = current_database() "
                "AND table_schema NOT IN ('information_schema', 'pg_catalog') ORDER BY table_name"
            ).fetchall()
            out = []
            for name, kind in rows:
                (count,) = cur.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()
                out.append(TableInfo(name=name, kind="view" if "VIEW" in kind else "table", rows=int(count)))
            return out
        finally:
            cur.close()

    def schema(self) -> dict[str, dict[str, str]]:
        version = self.data_version()
        if self._schema is not None and self._schema[0] == version:
            return self._schema[1]
        cur = self.cursor()
        try:
            rows = cur.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE table_catalog = current_database() "
                "AND table_schema NOT IN ('information_schema', 'pg_catalog') "
                "ORDER BY table_name, ordinal_position"
            ).fetchall()
        finally:
            cur.close()
        schema: dict[str, dict[str, str]] = {}
        for table, column, kind in rows:
            schema.setdefault(table, {})[column] = kind
        self._schema = (version, schema)
        return schema

    def describe_table(self, table: str, sample_rows: int = 5) -> TableDescription:
        schema = self.schema()
        match = {t.lower(): t for t in schema}.get(str(table).lower())
        if match is None:
            raise _unknown_table(str(table), sorted(schema))
        cur = self.cursor()
        try:
            (count,) = cur.execute(f'SELECT COUNT(*) FROM "{match}"').fetchone()
            result = cur.execute(f'SELECT * FROM "{match}" LIMIT {int(sample_rows)}')
            names = [d[0] for d in result.description]
            sample = [{k: json_safe(v) for k, v in zip(names, row, strict=True)} for row in result.fetchall()]
            required = {c for (c,) in cur.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_catalog = current_database() "
                "AND table_name = ? AND is_nullable = 'NO'", [match]).fetchall()}
        finally:
            cur.close()
        columns = [ColumnInfo(name=c, type=t, nullable=False if c in required else None)
                   for c, t in schema[match].items()]
        return TableDescription(name=match, columns=columns, rows=int(count), sample=sample)

    def close(self) -> None:
        """Close the engines: the worker killed (its running queries fail at once), then this
        process's instance and the private folder."""
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.engine.close()
        with self._lock:
            self.conn.close()
        self.private.remove()


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SQLAlchemySource:
    """Any database SQLAlchemy reaches; SQL is transpiled to its dialect."""

    kind = "sqlalchemy"
    interruptible = False

    def __init__(self, spec: str, *, url: Any = None, limits: EngineLimits | None = None) -> None:
        """Connect to ``spec``; ``url`` (a ``sqlalchemy.URL``) when it is not the spec itself.

        The engine is read-only at the database too (see ``sealed.py``): SQLite files open
        read-only with ``query_only``, PostgreSQL sessions are read-only with a statement
        timeout, and no connection is reused.
        """
        import sqlalchemy

        self.spec = spec
        #: What its queries may take here: the rows a query returns are held in this process
        #: (the engine runs elsewhere), so their size is what the memory limit bounds.
        self.limits = limits or EngineLimits()
        #: The database file of a file-backed database (SQLite), else ``None``.
        self.path: Path | None = None
        try:
            url = sqlalchemy.engine.make_url(url if url is not None else spec)
        except Exception as exc:  # ArgumentError, ValueError: not a URL SQLAlchemy reads
            raise SourceError(f"cannot read {spec!r} as a database URL: {exc}", reason="source_unknown_kind",
                              hint="a SQLAlchemy URL looks like dialect+driver://user@host/database") from exc
        if url.get_backend_name() == "sqlite":
            url, self.path = _read_only_sqlite(url)
        try:
            url, arguments = engine_arguments(url)
            self.engine = sqlalchemy.create_engine(url, **arguments)
            harden_engine(self.engine)
            with self.engine.connect() as conn:
                if self.path is not None:
                    # Opening a file checks nothing; reading its catalogue tells a
                    # database from any other file.
                    conn.exec_driver_sql("SELECT count(*) FROM sqlite_master").all()
        except Exception as exc:  # drivers raise their own types
            raise SourceError(
                f"cannot connect to {self._safe_url()}: {str(exc).splitlines()[0]}",
                reason="source_unreadable",
                hint="check the URL, the driver package and that the database is reachable",
            ) from exc
        name = self.engine.dialect.name
        self.dialect = {"postgresql": "postgres", "mssql": "tsql", "sqlite": "sqlite"}.get(name, name)
        self._schema: dict[str, dict[str, str]] | None = None
        #: The threads this source's queries run in: its own, so a query that will not stop
        #: never holds a thread the event loop's other work needs.
        self.executor = ThreadPoolExecutor(max_workers=QUERY_THREADS, thread_name_prefix="analyst-query")
        #: Calls that outlived their queries (see ``parking.py``); each holds one of the threads.
        self.parking = Parking()

    def _safe_url(self) -> str:
        return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", self.spec)

    def data_version(self) -> str:
        if self.path is not None:
            return f"sqlite:{file_version([self.path])}"
        return f"{self._safe_url()}:live"

    def schema(self) -> dict[str, dict[str, str]]:
        if self._schema is None:
            import sqlalchemy

            inspector = sqlalchemy.inspect(self.engine)
            schema: dict[str, dict[str, str]] = {}
            for table in [*inspector.get_table_names(), *inspector.get_view_names()]:
                schema[table] = {c["name"]: str(c["type"]) for c in inspector.get_columns(table)}
            self._schema = schema
        return self._schema

    def list_tables(self) -> list[TableInfo]:
        import sqlalchemy

        inspector = sqlalchemy.inspect(self.engine)
        views = set(inspector.get_view_names())
        out = []
        with self.engine.connect() as conn:
            for table in sorted(self.schema()):
                count = conn.execute(sqlalchemy.text(f'SELECT COUNT(*) FROM "{table}"')).scalar()
                out.append(TableInfo(name=table, kind="view" if table in views else "table", rows=int(count or 0)))
        return out

    def describe_table(self, table: str, sample_rows: int = 5) -> TableDescription:
        import sqlalchemy

        schema = self.schema()
        match = {t.lower(): t for t in schema}.get(str(table).lower())
        if match is None:
            raise _unknown_table(str(table), sorted(schema))
        with self.engine.connect() as conn:
            count = conn.execute(sqlalchemy.text(f'SELECT COUNT(*) FROM "{match}"')).scalar()
            result = conn.execute(sqlalchemy.text(f'SELECT * FROM "{match}" LIMIT {int(sample_rows)}'))
            sample = [{k: json_safe(v) for k, v in row._mapping.items()} for row in result]
        required = {c["name"] for c in sqlalchemy.inspect(self.engine).get_columns(match) if c.get("nullable") is False}
        columns = [ColumnInfo(name=c, type=t, nullable=False if c in required else None)
                   for c, t in schema[match].items()]
        return TableDescription(name=match, columns=columns, rows=int(count or 0), sample=sample)

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.engine.dispose()


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
        raise _not_found(str(path))
    if not path.is_file():
        raise SourceError(f"{path} is not a SQLite database file", reason="source_unreadable",
                          hint="point the sqlite:/// URL at a database file")
    if url.get_driver_name() != "pysqlite":
        return url.set(database=str(path)), path  # other drivers: at least never a new file
    query.update({"mode": "ro", "uri": "true"})
    return url.set(database=f"file:{quote(str(path))}", query=query), path


# ---------------------------------------------------------------------- the registry

SourceFactory = Callable[[str, EngineLimits | None], DataSource]
_REGISTRY: list[tuple[str, Callable[[str], bool], SourceFactory]] = []


def register_source(name: str, predicate: Callable[[str], bool], factory: SourceFactory) -> None:
    """Add a kind of source: ``predicate(spec)`` says whether ``factory(spec, limits)`` opens it."""
    _REGISTRY.insert(0, (name, predicate, factory))


def _data_files(spec: str) -> list[Path] | None:
    path = Path(spec).expanduser()
    if path.is_dir():
        files = sorted(p.resolve() for p in path.iterdir() if p.suffix.lower() in _DATA_SUFFIXES and p.is_file())
        if not files:
            raise SourceError(f"the folder {spec} holds no CSV, Parquet or JSON files", reason="source_empty",
                              hint="point --db at a folder of .csv/.parquet files, or at one file")
        return files
    if path.suffix.lower() in _DATA_SUFFIXES and path.is_file():
        return [path.resolve()]
    return None


def _is_sqlite_file(spec: str) -> bool:
    path = Path(spec).expanduser()
    if not path.is_file():
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(16) == _SQLITE_MAGIC
    except OSError:  # unreadable: another kind may say why
        return False


# Tried newest first: a plugin registered later takes precedence over these.
register_source("duckdb", lambda s: s.removeprefix("duckdb:///") == ":memory:"
                or Path(s.removeprefix("duckdb:///")).expanduser().is_file(),
                lambda s, limits: DuckDBSource(s.removeprefix("duckdb:///"), limits=limits))
register_source("files", lambda s: _data_files(s) is not None,
                lambda s, limits: DuckDBSource(s, files=_data_files(s), limits=limits))
def _sqlite_file(spec: str, limits: EngineLimits | None) -> DataSource:
    from sqlalchemy.engine import URL

    # Built as a URL object: a file name may hold '?' or '#', which URL text would split.
    url = URL.create("sqlite", database=str(Path(spec).expanduser().resolve()))
    return SQLAlchemySource(spec, url=url, limits=limits)


register_source("sqlite-file", _is_sqlite_file, _sqlite_file)
register_source("sqlalchemy", lambda s: "://" in s and not s.startswith("duckdb://"),
                lambda s, limits: SQLAlchemySource(s, limits=limits))


def open_source(spec: str, *, limits: EngineLimits | None = None) -> DataSource:
    """Open a data source from what the user typed (``limits``: what its engine may use).

    Raises:
        SourceError: the path does not exist, cannot be read, or is of no known kind.
    """
    spec = str(spec).strip()
    if not spec:
        raise SourceError("no data source given", reason="no_source", hint="pass --db PATH_OR_URL")
    for _name, predicate, factory in _REGISTRY:
        if predicate(spec):
            return factory(spec, limits)
    path = Path(spec.removeprefix("duckdb:///")).expanduser()
    if not path.exists():
        raise _not_found(spec)
    raise SourceError(f"cannot tell what kind of data source {spec} is", reason="source_unknown_kind",
                      hint="use a .duckdb, .csv or .parquet file, a folder of them, or a SQLAlchemy URL")
