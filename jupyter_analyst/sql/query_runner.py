"""The query runner: executes prepared queries off the event loop, straight to Parquet.

The same query on the same data must give the same bytes (fingerprints are sha256 of the
file), so a query without its own ORDER BY gets a total order, and the writer's settings
are fixed. The file is written in one pass from the engine and hashed on its way to the
disk (see stream.py); what the step reports (columns, a sample, the time range) is read
from the file's footer and first rows, never from a second run of the query.

Rows past the row cap are dropped, never silently: the result says how many (counted
within a time allowance; past it, only that there were more).

On a DuckDB source every statement of the model's query (the ``COPY``, the count, the
``DESCRIBE`` of the file) runs in the source's engine worker process (``engine_process.py``):
a value it compounds past the worker's memory cap fails there (``query_memory``), not in the
host, and a call that takes no interrupt ends when the worker is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ..artifacts import sha256_file
from ..errors import QueryFailed
from .engine_process import EngineJob, EngineProcess
from .query_model import ClearedQuery, ColumnInfo, PreparedQuery, QueryResult
from .query_progress import QueryProgress
from .sealed import MB, QueryGuard
from .sources import DataSource, DuckDBSource, SQLAlchemySource
from .._text import json_safe
from .stream import PIPES, HashingFile, copy_hashed

#: The first rows read back from a result: as many as the model may be shown of it whole.
SAMPLE_ROWS = 50
ROW_GROUP_ROWS = 122_880
_PARQUET_OPTIONS = f"FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE {ROW_GROUP_ROWS}"
#: Counting the rows past the cap may take this long at least (or as long as the query did).
COUNT_ALLOWANCE_S = 2.0
_TEMPORAL = ("DATE", "TIMESTAMP", "TIME")


#: How often a query that is no longer wanted is interrupted again until its thread ends.
_INTERRUPT_EVERY_S = 0.05
#: How long a query's thread is waited for once it is stopped (past its timeout, or no longer
#: wanted): an interrupt lands within a vector, so a call still running by then is one that
#: takes none (a single huge value). On DuckDB its engine process is then killed; on other
#: engines its connection is parked until it returns (``parking.py``).
GIVE_UP_S = 2.0
#: How long a thread is waited for once its engine process was killed (its calls fail at once).
KILLED_LETS_GO_S = 5.0


class QueryRunner:
    """Runs queries of one source in worker threads (on DuckDB, waiting on the source's engine
    worker process), with a timeout and a row cap."""

    def __init__(
        self, source: DataSource, *, timeout_s: float = 60.0, row_cap: int = 1_000_000, give_up_s: float = GIVE_UP_S,
    ) -> None:
        self.source = source
        self.timeout_s = timeout_s
        self.row_cap = row_cap
        self.give_up_s = give_up_s

    async def run_to_parquet(
        self, query: PreparedQuery | ClearedQuery, dest: Path, progress: QueryProgress | None = None
    ) -> QueryResult:
        """Execute ``query`` and write its rows to ``dest``, a new path in a folder of the
        host's own (a staging file: the caller publishes it); returns a summary with the
        file's fingerprint. When the query fails, nothing is left at ``dest``. While it runs,
        ``progress`` has the engine's estimate of it, where the engine makes one (DuckDB).

        On DuckDB the query runs in the source's engine worker (``engine_process.py``), under
        a memory cap of its own. A query whose engine call takes no interrupt ends at its
        timeout all the same: on DuckDB its worker is killed (the next query starts another),
        on other engines its connection is set aside until the call returns (``parking.py``).

        Raises:
            QueryFailed: ``query_timeout`` past the timeout, ``query_memory`` past the engine
                worker's memory, ``query_failed`` on an engine error (or its worker's death),
                ``engine_busy`` while a SQLAlchemy source has as many calls set aside as it may.
            FileExistsError: ``dest`` exists.
        """
        parking = getattr(self.source, "parking", None)
        if parking is not None:
            parking.admit()
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.touch(exist_ok=False)  # ours alone from here on
        started = time.perf_counter()
        try:
            if isinstance(self.source, DuckDBSource):
                result = await self._duckdb(query, dest, started, progress)
            else:
                result = await self._generic(query, dest)
        except BaseException:
            dest.unlink(missing_ok=True)
            raise
        result.elapsed_s = time.perf_counter() - started
        return result

    # ------------------------------------------------------------------ DuckDB

    async def _duckdb(
        self, query: PreparedQuery | ClearedQuery, tmp: Path, started: float, progress: QueryProgress | None
    ) -> QueryResult:
        """The query in the source's engine worker (``engine_process.py``): a value it builds
        past the worker's memory cap fails there, and a call that takes no interrupt ends with
        the worker, killed at the give-up wait."""
        assert isinstance(self.source, DuckDBSource)
        engine = self.source.engine
        staging = _Staging(tmp)
        cap = int(self.row_cap)
        order = "" if query.has_order else " ORDER BY ALL"
        capped = f"SELECT * FROM ({query.executable}) AS _q{order} LIMIT {cap}"
        running = _Running(engine)

        # The engine writes only into its private folder (it can reach nothing else): a named
        # pipe there, drained into ``tmp``; or, without pipes, a file there moved to ``tmp``.
        private = engine.private

        def copy(target: str) -> None:
            path = target.replace("'", "''")
            running.run(f"COPY ({capped}) TO '{path}' ({_PARQUET_OPTIONS})")

        def work() -> QueryResult:
            if PIPES:
                _, fingerprint, size = copy_hashed(tmp, copy, pipe_dir=private)
            else:  # no named pipes on this platform: hashed from the file
                written = private / tmp.name
                copy(str(written))
                with staging.creating():
                    shutil.move(written, tmp)
                fingerprint, size = sha256_file(tmp), tmp.stat().st_size
            # The rows as the file's footer counts them (DuckDB reports only "Success" for the
            # COPY of a PIVOT statement, which it runs as several statements), and the columns
            # as DuckDB reads the file back (the kernel's DataFrame comes from the file).
            # Read for a few values: no read-ahead of whole column chunks, no thread pool.
            with pq.ParquetFile(tmp, pre_buffer=False) as written:
                columns = _file_columns(written.schema_arrow)
                if columns is None:  # a type whose name only DuckDB can tell: it reads the file
                    columns = _described(running, tmp, private)
                return QueryResult(
                    rows=written.metadata.num_rows, columns=columns, elapsed_s=0.0, sample=_head(written),
                    fingerprint=fingerprint, size=size, row_cap=cap,
                    time_range=_time_range(written.metadata, columns),
                )

        runs: list[Future] = []
        try:
            if progress is not None:
                # Read on the event loop while the statement runs; never after this returns.
                progress.watch(running.progress)
            try:
                result = await self._with_timeout(work, cancel=running.interrupt, kill=running.kill, runs=runs)
            finally:
                if progress is not None:
                    progress.unwatch()
            if result.rows >= cap:
                total = await self._count(running, query, started, runs)
                _cap_dropped(result, total, cap)
            return result
        finally:
            if any(not run.done() for run in runs):  # pragma: no cover - its worker was killed
                staging.give_up()

    async def _count(
        self, running: _Running, query: PreparedQuery | ClearedQuery, started: float, runs: list[Future],
    ) -> int | None:
        """All the rows of ``query``, or ``None`` when counting takes longer than allowed."""
        spent = time.perf_counter() - started
        allowance = min(max(COUNT_ALLOWANCE_S, spent), max(self.timeout_s - spent, 0.0))

        def work() -> int:
            ((total,),) = running.run(f"SELECT COUNT(*) FROM ({query.executable}) AS _q", fetch=True) or [[0]]
            return int(total)

        try:
            return await self._with_timeout(work, cancel=running.interrupt, kill=running.kill, timeout_s=allowance,
                                            runs=runs)
        except QueryFailed:
            return None

    # ------------------------------------------------------------------ SQLAlchemy

    async def _generic(self, query: PreparedQuery | ClearedQuery, tmp: Path) -> QueryResult:
        assert isinstance(self.source, SQLAlchemySource)
        import sqlalchemy

        engine = self.source.engine
        cap = int(self.row_cap)
        started = time.perf_counter()
        running: list[QueryGuard] = []  # the query's guard once its connection is open
        staging = _Staging(tmp)

        def stop() -> None:
            for guard in running:
                guard.stop()

        def work() -> QueryResult:
            dropped: int | None = 0
            with engine.connect() as conn:
                running.append(QueryGuard(conn, self.source.dialect, self.timeout_s))
                result = conn.execution_options(stream_results=True).execute(sqlalchemy.text(query.executable))
                names = list(result.keys())
                fetched = _fetch_within(result, cap, self.source.limits.memory() // RESULT_SHARE)
                # The rest is counted as it streams past, within the allowance.
                deadline = started + max(COUNT_ALLOWANCE_S, time.perf_counter() - started)
                while more := result.fetchmany(10_000):
                    dropped += len(more)
                    if time.perf_counter() > deadline:
                        dropped = None if result.fetchone() is not None else dropped
                        break
                result.close()
                conn.rollback()  # read-only: nothing to keep
            table = pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in fetched]) if fetched else pa.table(
                {n: pa.array([], pa.null()) for n in names}
            )
            if not query.has_order and table.num_rows:
                table = table.sort_by([(n, "ascending") for n in names if not pa.types.is_null(table.schema.field(n).type)])
            with staging.creating(), open(tmp, "wb") as raw:
                sink = HashingFile(raw)
                with pq.ParquetWriter(sink, table.schema, compression="zstd") as writer:
                    writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
            columns = [ColumnInfo(name=f.name, type=str(f.type)) for f in table.schema]
            sample = [{k: json_safe(v) for k, v in row.items()} for row in table.slice(0, SAMPLE_ROWS).to_pylist()]
            out = QueryResult(
                rows=table.num_rows, columns=columns, elapsed_s=0.0, sample=sample, row_cap=cap,
                fingerprint=sink.fingerprint(), size=sink.size, time_range=_time_range(pq.read_metadata(tmp), columns),
            )
            if dropped != 0:
                _cap_dropped(out, None if dropped is None else cap + dropped, cap)
            return out

        runs: list[Future] = []
        try:
            return await self._with_timeout(work, cancel=stop, runs=runs)
        finally:
            running = [run for run in runs if not run.done()]
            if running:  # its connection closes when its call returns, in its thread
                staging.give_up()
                self.source.parking.hold(running, lambda: None)

    # ------------------------------------------------------------------ shared

    async def _with_timeout(
        self, work, *, cancel, kill=None, timeout_s: float | None = None, runs: list[Future] | None = None
    ) -> Any:
        """Run ``work`` in one of the source's threads; past the timeout ``cancel`` stops it in
        the engine and ``query_timeout`` is raised once its thread has let go, or after
        ``give_up_s`` when it does not: then ``kill`` (when given) ends its engine process, and
        the thread lets go (``runs`` gets the thread's call: whether it let go)."""
        seconds = self.timeout_s if timeout_s is None else timeout_s
        call = self.source.executor.submit(work)
        if runs is not None:
            runs.append(call)
        returned = _returned(call)
        try:
            done, _ = await asyncio.wait([returned], timeout=seconds)
            if not done:
                raise _timeout(seconds, await _stop(call, returned, cancel, kill=kill, give_up_s=self.give_up_s))
            return call.result()
        except asyncio.CancelledError:
            # A query nobody wants any more (a stopped turn, a run started early and then not
            # needed): stopped, and its thread done with its files before this returns; when
            # its call takes no interrupt, its engine process killed, or (SQLAlchemy) its
            # connection set aside like a timed-out query's.
            await asyncio.shield(_stop(call, returned, cancel, kill=kill, give_up_s=self.give_up_s))
            raise
        except QueryFailed:
            raise
        except Exception as exc:  # the engine's own errors (SQLAlchemy's, the drivers')
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise QueryFailed(f"the query failed: {message}", reason="query_failed") from exc


#: Why a worker was killed, as the other queries running in it are told.
_KILLED = "to stop a statement that took no interrupt"


class _Running:
    """The statement one DuckDB query has in its engine worker now: its progress, and the ways
    to stop it (an interrupt; killing its worker). Once killed, it starts no statement more,
    nor waits any longer for a worker to start."""

    def __init__(self, engine: EngineProcess) -> None:
        self.engine = engine
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


#: The share of a source's memory limit that the values of one result may take in this
#: process: they are held as Python objects, then copied into Arrow to be written (about
#: four times their bytes at the peak).
RESULT_SHARE = 4


def _fetch_within(result: Any, cap: int, budget: int) -> list[Any]:
    """Up to ``cap`` rows of ``result``, fetched in batches while their values come to at most
    ``budget`` bytes: an engine elsewhere (SQLite, PostgreSQL) hands each row to this process,
    and a query can make each value as large as the engine allows (``s || s`` nested: 16 MiB
    on SQLite, 1 GB on PostgreSQL).

    Raises:
        QueryFailed: ``query_memory`` past ``budget``.
    """
    rows: list[Any] = []
    held, size = 0, 1  # a first row to learn how large rows are, then as many as fit
    while len(rows) < cap and (batch := result.fetchmany(min(size, cap - len(rows)))):
        held += sum(len(v) if isinstance(v, (str, bytes, bytearray, memoryview)) else 8 for row in batch for v in row)
        size = max(1, min(10_000, (budget - held) * (len(rows) + len(batch)) // max(held, 1)))
        if held > budget:
            raise QueryFailed(
                f"the query's rows came to more than {budget // MB:,} MiB before its row {len(rows) + len(batch):,} "
                f"(a query's result may take {budget // MB:,} MiB here)",
                reason="query_memory", hint="aggregate in SQL, filter, select fewer or smaller columns, or add a LIMIT",
            )
        rows += batch
    return rows


class _Staging:
    """Whether a query's thread may still create its staging file: not once the query was
    given up (the runner removes the path then, and a call that returns later must not put a
    file back there)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._given_up = False

    def give_up(self) -> None:
        with self._lock:
            self._given_up = True

    @contextlib.contextmanager
    def creating(self) -> Iterator[None]:
        """Create the file in this block, or raise when the query was given up."""
        with self._lock:
            if self._given_up:
                raise QueryFailed(f"the query was given up before {self.path.name} was written", reason="query_timeout")
            yield


def _returned(call: Future) -> asyncio.Future:
    """A future of the running loop's, done when ``call`` (a thread's) has returned.

    Unlike ``asyncio.wrap_future`` it carries no outcome: a call that outlives its query (and
    perhaps the loop) settles nothing on a loop that is gone, and its outcome stays with it.
    """
    loop = asyncio.get_running_loop()
    returned = loop.create_future()

    def settle() -> None:
        if not returned.done():
            returned.set_result(None)

    def on_return(_call: Future) -> None:
        try:
            loop.call_soon_threadsafe(settle)
        except RuntimeError:  # the loop has closed: nobody waits for this call any more
            pass

    call.add_done_callback(on_return)
    return returned


async def _stop(call: Future, returned: asyncio.Future, cancel: Any, *, give_up_s: float, kill: Any = None) -> str:
    """Stop the statement ``call`` runs: ``"stopped"`` when its thread let go, ``"killed"``
    when its engine process had to be ended for it, ``"left"`` when it runs on.

    A call still queued for a thread never starts. An interruption that comes before the
    statement has begun is lost, so it is repeated until the thread is done; past
    ``give_up_s`` (a call that takes no interrupt) ``kill`` ends its engine process, whose
    statements then fail at once, or without one the thread is left to end on its own.
    """
    if call.cancel():
        return "stopped"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + give_up_s
    while not call.done():
        if loop.time() >= deadline:
            if kill is None:
                return "left"
            kill()
            await asyncio.wait([returned], timeout=KILLED_LETS_GO_S)
            return "killed" if call.done() else "left"
        cancel()
        await asyncio.wait([returned], timeout=_INTERRUPT_EVERY_S)
    return "stopped"


#: Arrow types of a DuckDB Parquet file whose DuckDB type, read back, is certain.
_DUCKDB_TYPES: dict[pa.DataType, str] = {
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

    >>> _file_columns(pa.schema([("n", pa.int64()), ("p", pa.decimal128(15, 2))]))
    [ColumnInfo(name='n', type='BIGINT', nullable=None), ColumnInfo(name='p', type='DECIMAL(15,2)', nullable=None)]
    """
    columns = []
    for field in schema:
        kind = field.type
        if pa.types.is_decimal128(kind):
            name = f"DECIMAL({kind.precision},{kind.scale})"
        else:
            name = _DUCKDB_TYPES.get(kind)
        if name is None or not field.name:
            return None
        columns.append(ColumnInfo(name=field.name, type=name))
    if len({c.name.lower() for c in columns}) != len(columns):
        return None
    return columns


def _described(running: _Running, written: Path, private: Path) -> list[ColumnInfo]:
    """The columns of a result file as DuckDB reads them back; the engine reads only its private
    folder, so the file is linked there (copied across file systems) for the look."""
    seen = private / f"describe-{uuid.uuid4().hex}.parquet"
    try:
        try:
            os.link(written, seen)
        except OSError:
            shutil.copyfile(written, seen)
        path = str(seen).replace("'", "''")
        described = running.run(f"DESCRIBE SELECT * FROM read_parquet('{path}')", fetch=True)
    finally:
        seen.unlink(missing_ok=True)
    return [ColumnInfo(name=r[0], type=str(r[1])) for r in described]


def _head(written: pq.ParquetFile) -> list[dict[str, Any]]:
    """The file's first rows as JSON-safe values (read by Arrow: no engine-side conversion,
    which for DuckDB's time zones would need a module this package does not require)."""
    if written.metadata.num_rows == 0:
        return []
    batch = next(written.iter_batches(batch_size=SAMPLE_ROWS, use_threads=False), None)
    if batch is None:
        return []
    return [{k: json_safe(v) for k, v in row.items()} for row in batch.slice(0, SAMPLE_ROWS).to_pylist()]


def _time_range(meta: pq.FileMetaData, columns: list[ColumnInfo]) -> dict[str, list[str]]:
    """First and last value of each date or time column, from the row groups' statistics."""
    temporal = {c.name for c in columns if c.type.upper().startswith(_TEMPORAL)}
    if not temporal:
        return {}
    low: dict[str, Any] = {}
    high: dict[str, Any] = {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for j in range(group.num_columns):
            chunk = group.column(j)
            name = chunk.path_in_schema
            stats = chunk.statistics
            if name not in temporal or stats is None or not stats.has_min_max:
                continue
            low[name] = stats.min if name not in low else min(low[name], stats.min)
            high[name] = stats.max if name not in high else max(high[name], stats.max)
    return {c.name: [str(low[c.name]), str(high[c.name])] for c in columns if c.name in low}


def _cap_dropped(result: QueryResult, total: int | None, cap: int) -> None:
    """Record what the row cap dropped, given all the query's rows (``None``: unknown)."""
    if total is not None and total <= cap:
        return
    result.truncated = True
    result.dropped = None if total is None else total - cap


_SLOW_HINT = ("read fewer rows: filter before joining (a WHERE on a date or a key), join on keys, "
              "aggregate before a join; a LIMIT only shortens what is returned")


def _timeout(seconds: float, how: str) -> QueryFailed:
    """The error of a query past its time limit: ``how`` it ended (see :func:`_stop`).

    >>> _timeout(2, "killed").message
    'the query ran past 2 s; its engine call took no interrupt, so its engine process was ended'
    >>> _timeout(2, "stopped").hint
    'read fewer rows: filter before joining (a WHERE on a date or a key), join on keys, aggregate before a join; a LIMIT only shortens what is returned'
    >>> _timeout(2, "left").message
    'the query ran past 2 s; it was given up, and its engine call is still finishing (its connection is set aside)'
    """
    # The time goes into the rows a query reads and joins, not the rows it returns: a LIMIT
    # does not shorten a count or a sum, so the hint names what does.
    if how == "stopped":
        return QueryFailed(f"the query ran past {seconds:g} s and was stopped", reason="query_timeout",
                           hint=_SLOW_HINT)
    hint = ("a single value built in one call (a huge string, list or regular-expression replace) "
            "cannot be stopped midway: build smaller values; " + _SLOW_HINT)
    if how == "killed":
        return QueryFailed(
            f"the query ran past {seconds:g} s; its engine call took no interrupt, so its engine process was ended",
            reason="query_timeout", hint=hint,
        )
    return QueryFailed(
        f"the query ran past {seconds:g} s; it was given up, and its engine call is still finishing "
        "(its connection is set aside)",
        reason="query_timeout", hint=hint,
    )
