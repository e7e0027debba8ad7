"""DuckDB as a source engine: a database file, ``:memory:``, or views over data files.

The host's own look-ups (tables, descriptions, the outline) run on an in-process instance,
sealed (``sealed.py``); the model's queries run in a second instance, sealed the same, in a
worker process of the source's own (``engine_process.py``), which writes its Parquet into a
named pipe drained and hashed into the result file (``stream.copy_hashed``). Every statement
of a model's query (the ``COPY``, the count of the rows past the cap, the ``DESCRIBE`` of the
file) runs in that worker: a value it compounds past the worker's memory cap fails there
(``query_memory``), not in the host, and a call that takes no interrupt ends when the worker
is killed.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from .._text import json_safe
from ..errors import QueryFailed, SourceError
from .engine_process import EngineJob, EngineProcess
from .query_model import ColumnInfo, QueryResult, TableDescription, TableInfo
from .sealed import EngineLimits, PrivateFolder, seal_duckdb
from .sealing import DUCKDB_CONNECT_CONFIG
from .source_engine import (
    ESTIMATE_TIMEOUT_S,
    QueryRun,
    RunningQuery,
    SourceEngine,
    estimates_from,
    file_version,
    stopped_after,
    uncounted,
    unknown_table,
)
from .stream import PIPES, Staging, copy_hashed

if TYPE_CHECKING:
    import pyarrow as pa

#: The data files a folder or a file spec may be, and DuckDB's reader of each.
DATA_SUFFIXES = {".csv": "read_csv_auto", ".tsv": "read_csv_auto", ".parquet": "read_parquet",
                 ".json": "read_json_auto", ".ndjson": "read_json_auto", ".jsonl": "read_json_auto"}
_PARQUET_OPTIONS = "FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880"


def _sanitise(stem: str) -> str:
    """A table name from a file name.

    >>> _sanitise("2024 Sales-Q1")
    't_2024_sales_q1'
    """
    name = re.sub(r"\W+", "_", stem).strip("_").lower() or "t"
    return f"t_{name}" if name[0].isdigit() else name


class DuckDBSource(SourceEngine):
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
        super().__init__(spec, limits)
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
            self.executor.shutdown(wait=False)
            self.private.remove()
            raise

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
                reader = DATA_SUFFIXES[f.suffix.lower()]
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
            estimates = self.row_estimates()
            out = []
            for name, kind in rows:
                estimate = uncounted(estimates, name)
                if estimate is None:
                    (count,) = cur.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()
                out.append(TableInfo(name=name, kind="view" if "VIEW" in kind else "table",
                                     rows=int(count) if estimate is None else estimate,
                                     rows_estimated=estimate is not None))
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
            raise unknown_table(str(table), sorted(schema))
        cur = self.cursor()
        try:
            estimate = uncounted(self.row_estimates(), match)
            if estimate is None:
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
        return TableDescription(name=match, columns=columns, rows=int(count) if estimate is None else estimate,
                                rows_estimated=estimate is not None, sample=sample)

    def row_estimates(self) -> dict[str, int]:
        """The tables' ``estimated_size`` in DuckDB's catalogue (views and files have none)."""
        return estimates_from(self.probe(
            "SELECT table_name, estimated_size FROM duckdb_tables() WHERE database_name = current_database()",
            ESTIMATE_TIMEOUT_S))

    def probe(self, sql: str, timeout_s: float) -> list[tuple[Any, ...]] | None:
        cursor = self.cursor()
        try:
            # The look-up runs in this thread: its connection is closed only once it returned.
            with stopped_after(timeout_s, cursor.interrupt):
                return [tuple(row) for row in cursor.execute(sql).fetchall()]
        except Exception:  # noqa: BLE001 - interrupted, or an engine error: no figure
            return None
        finally:
            cursor.close()

    def start(self, run: QueryRun) -> RunningQuery:
        return DuckDBQuery(self.engine, run)

    def close(self) -> None:
        """Close the engines: the worker killed (its running queries fail at once), then this
        process's instance and the private folder."""
        super().close()
        self.engine.close()
        with self._lock:
            self.conn.close()
        self.private.remove()


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


#: Why a worker was killed, as the other queries running in it are told.
_KILLED = "to stop a statement that took no interrupt"


class DuckDBQuery(RunningQuery):
    """One model query in its source's engine worker: the statement it has there now, its
    progress, and the ways to stop it (an interrupt; killing its worker). Once killed, it
    starts no statement more, nor waits any longer for a worker to start."""

    kills = True
    reports_progress = True
    counts_apart = True

    def __init__(self, engine: EngineProcess, run: QueryRun) -> None:
        self.engine = engine
        self.run_of = run
        self.job: EngineJob | None = None
        self._lock = threading.Lock()
        self._killed = threading.Event()

    def run(self, sql: str, *, fetch: bool = False) -> list[list[Any]]:
        """Run one statement in the worker and wait for its rows."""
        if self._killed.is_set():
            raise QueryFailed("the query was given up before its statement started", reason="query_timeout")
        job = self.engine.submit(sql, fetch=fetch, given_up=self._killed)
        with self._lock:
            self.job = job
            killed = self._killed.is_set()
        if killed:
            self.engine.kill(job, _KILLED)
        return job.rows()

    def write(self, dest: Path, staging: Staging) -> QueryResult:
        """``COPY`` the capped query to Parquet in the worker. The engine writes only into its
        private folder (it can reach nothing else): a named pipe there, drained into ``dest``;
        or, without pipes, a file there moved to ``dest``."""
        # Imported here: opening a source (a turn whose steps are all reused) needs no Arrow.
        import pyarrow.parquet as pq

        from ..artifacts import sha256_file
        from .batch_writer import head_rows, time_range

        run = self.run_of
        cap = int(run.row_cap)
        order = "" if run.ordered else " ORDER BY ALL"
        capped = f"SELECT * FROM ({run.sql}) AS _q{order} LIMIT {cap}"
        private = self.engine.private

        def copy(target: str) -> None:
            path = target.replace("'", "''")
            self.run(f"COPY ({capped}) TO '{path}' ({_PARQUET_OPTIONS})")

        if PIPES:
            _, fingerprint, size = copy_hashed(dest, copy, pipe_dir=private)
        else:  # no named pipes on this platform: hashed from the file
            written = private / dest.name
            copy(str(written))
            with staging.creating():
                shutil.move(written, dest)
            fingerprint, size = sha256_file(dest), dest.stat().st_size
        # The rows as the file's footer counts them (DuckDB reports only "Success" for the
        # COPY of a PIVOT statement, which it runs as several statements), and the columns
        # as DuckDB reads the file back (the kernel's DataFrame comes from the file).
        # Read for a few values: no read-ahead of whole column chunks, no thread pool.
        with pq.ParquetFile(dest, pre_buffer=False) as read:
            columns = _file_columns(read.schema_arrow)
            if columns is None:  # a type whose name only DuckDB can tell: it reads the file
                columns = self._described(dest, private)
            return QueryResult(
                rows=read.metadata.num_rows, columns=columns, elapsed_s=0.0, sample=head_rows(read),
                fingerprint=fingerprint, size=size, row_cap=cap, time_range=time_range(read.metadata, columns),
            )

    def count(self) -> int:
        ((total,),) = self.run(f"SELECT COUNT(*) FROM ({self.run_of.sql}) AS _q", fetch=True) or [[0]]
        return int(total)

    def progress(self) -> float:
        """The worker's latest estimate of the running statement (a percentage; -1: none)."""
        job = self.job
        return -1.0 if job is None or job.done.is_set() else job.progress

    def interrupt(self) -> None:
        job = self.job
        if job is not None:
            self.engine.interrupt(job)

    def kill(self) -> None:
        with self._lock:
            self._killed.set()
            job = self.job
        if job is not None:
            self.engine.kill(job, _KILLED)

    def _described(self, written: Path, private: Path) -> list[ColumnInfo]:
        """The columns of a result file as DuckDB reads them back; the engine reads only its
        private folder, so the file is linked there (copied across file systems) for the look."""
        seen = private / f"describe-{uuid.uuid4().hex}.parquet"
        try:
            try:
                os.link(written, seen)
            except OSError:
                shutil.copyfile(written, seen)
            path = str(seen).replace("'", "''")
            described = self.run(f"DESCRIBE SELECT * FROM read_parquet('{path}')", fetch=True)
        finally:
            seen.unlink(missing_ok=True)
        return [ColumnInfo(name=r[0], type=str(r[1])) for r in described]


@functools.cache
def _duckdb_types() -> dict[pa.DataType, str]:
    """Arrow types of a DuckDB Parquet file whose DuckDB type, read back, is certain."""
    import pyarrow as pa

    return {
        pa.bool_(): "BOOLEAN", pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INTEGER",
        pa.int64(): "BIGINT", pa.uint8(): "UTINYINT", pa.uint16(): "USMALLINT", pa.uint32(): "UINTEGER",
        pa.uint64(): "UBIGINT", pa.float32(): "FLOAT", pa.float64(): "DOUBLE", pa.string(): "VARCHAR",
        pa.binary(): "BLOB", pa.date32(): "DATE", pa.timestamp("us"): "TIMESTAMP", pa.timestamp("ms"): "TIMESTAMP",
        pa.timestamp("ns"): "TIMESTAMP_NS", pa.timestamp("us", tz="UTC"): "TIMESTAMP WITH TIME ZONE",
    }


def _file_columns(schema: pa.Schema) -> list[ColumnInfo] | None:
    """The columns as DuckDB's ``DESCRIBE`` of the file names them, from its Arrow schema;
    ``None`` when a column's type is not one whose DuckDB name is certain (time of day,
    intervals, nested and extension types...) or the names are not plain and distinct.

    >>> import pyarrow as pa
    >>> _file_columns(pa.schema([("n", pa.int64()), ("p", pa.decimal128(15, 2))]))
    [ColumnInfo(name='n', type='BIGINT', nullable=None), ColumnInfo(name='p', type='DECIMAL(15,2)', nullable=None)]
    """
    import pyarrow as pa

    known = _duckdb_types()
    columns = []
    for field in schema:
        kind = field.type
        if pa.types.is_decimal128(kind):
            name = f"DECIMAL({kind.precision},{kind.scale})"
        else:
            name = known.get(kind)
        if name is None or not field.name:
            return None
        columns.append(ColumnInfo(name=field.name, type=name))
    if len({c.name.lower() for c in columns}) != len(columns):
        return None
    return columns
