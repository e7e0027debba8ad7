"""The source interface: each kind of database is one class, which owns running its queries.

A :class:`SourceEngine` connects (within its :class:`~.sealed.EngineLimits`), lists and
describes its tables, names its SQL dialect (whose function allow-list is
``sql/allowed/<dialect>.txt``, see ``prepare/functions.py``), says what version its data is
at, and runs a checked query: :meth:`SourceEngine.start` returns a :class:`RunningQuery`,
which the query runner (``query_runner.py``) writes to Parquet in one of the source's
threads, interrupts past its timeout or when it is no longer wanted, and reads the progress
of while it runs. The runner and the schema outline ask only this interface, never which
engine a source is.

Most engines hand their rows over as Arrow record batches (:class:`BatchQuery`): the shared
writer (``batch_writer.py``) streams them into the Parquet file and its hash. DuckDB writes
its own Parquet through a pipe instead (``duckdb_engine.py``), in its engine worker process.

Adding an engine: subclass :class:`SourceEngine` (and :class:`BatchQuery` for its queries),
then ``sql.register_source(name, predicate, factory)`` (``sources.py``).
``tests/sql/test_source_engine.py`` adds one that way, end to end through ``run_sql``.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._text import nearest
from ..errors import SourceError, SqlRejected
from .sealed import EngineLimits

if TYPE_CHECKING:
    import pyarrow as pa

    from .query_model import QueryResult, TableDescription, TableInfo
    from .stream import Staging

#: Queries of one source that may run at once (a plan's parallel stage runs at most 16).
QUERY_THREADS = 16


@dataclass(frozen=True)
class QueryRun:
    """What one run of a checked query is given."""

    sql: str
    """The query as its engine runs it (checked, in the source's dialect)."""
    ordered: bool
    """Whether the query orders its rows itself; if not, the rows are given a total order, so
    that the same query on the same data gives the same bytes."""
    row_cap: int
    """Rows kept; those past it are counted (within ``count_allowance_s``) and dropped."""
    timeout_s: float
    """The query's time limit (the runner stops it; an engine may also set its own)."""
    count_allowance_s: float
    """How long counting the rows past the cap may take at least."""
    started: float
    """When the run began (``time.perf_counter``)."""


@dataclass
class ResultBatches:
    """A result as Arrow record batches, in the order they are to be written."""

    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]
    dropped: int | None = 0
    """Rows past the cap: 0 none, ``None`` more than were counted in time. The batches
    themselves never hold more than the cap."""


class RunningQuery(ABC):
    """One query as its engine runs it: written in one of the source's threads, stopped and
    watched from the event loop."""

    #: Whether :meth:`kill` ends a call that takes no interrupt (by ending its engine process).
    kills = False
    #: Whether :meth:`progress` has estimates (else the step shows none).
    reports_progress = False
    #: Whether the rows past the cap are counted by :meth:`count`, a statement of its own,
    #: after the file is written (else :meth:`write` counted them as they streamed past).
    counts_apart = False

    @abstractmethod
    def write(self, dest: Path, staging: Staging) -> QueryResult:
        """Run the query and write its rows (at most the cap) to ``dest`` as Parquet, hashed on
        the way; blocking. ``dest`` is created inside ``staging.creating()``."""

    @abstractmethod
    def interrupt(self) -> None:
        """Ask the engine to stop the running statement (from any thread; may be repeated)."""

    def kill(self) -> None:
        """End a statement that took no interrupt (only where :attr:`kills`)."""

    def progress(self) -> float:
        """The engine's estimate of the running statement, a percentage; negative for none."""
        return -1.0

    def count(self) -> int:
        """All the rows of the query (only where :attr:`counts_apart`); blocking."""
        raise NotImplementedError

    def abandon(self, calls: Sequence[Future]) -> None:
        """``calls`` still run after the query was given up: keep what they hold until they
        return (see ``parking.py``)."""


class BatchQuery(RunningQuery):
    """A query whose engine hands over Arrow record batches, streamed by the shared writer."""

    def __init__(self, run: QueryRun) -> None:
        self.run = run

    @abstractmethod
    def batches(self) -> ResultBatches:
        """Run the query: its schema and batches (the batches may still be running)."""

    def write(self, dest: Path, staging: Staging) -> QueryResult:
        from .batch_writer import write_batches

        result = self.batches()
        return write_batches(result.schema, result.batches, dest, staging, ordered=self.run.ordered,
                             cap=self.run.row_cap, dropped=result.dropped)


class SourceEngine(ABC):
    """One data source on its engine. Subclasses set :attr:`kind` (part of every step key of
    the source) and :attr:`dialect` (sqlglot's name: the guard's, the transpiler's and the
    function allow-list's)."""

    kind: str = ""
    dialect: str = ""
    #: Whether a query can be stopped midway (its thread let go at once) when not wanted: then a
    #: query starts running as soon as it cleared the read-only guard, while the rest is checked.
    interruptible = False

    def __init__(self, spec: str, limits: EngineLimits | None = None) -> None:
        self.spec = spec
        #: What its queries may take (each engine applies what it can).
        self.limits = limits or EngineLimits()
        #: The threads this source's queries run in: its own, so a query that will not stop
        #: never holds a thread the event loop's other work needs.
        self.executor = ThreadPoolExecutor(max_workers=QUERY_THREADS, thread_name_prefix="analyst-query")

    # ------------------------------------------------------------------ the catalogue

    @abstractmethod
    def schema(self) -> dict[str, dict[str, str]]:
        """Each table's columns and their types."""

    @abstractmethod
    def list_tables(self) -> list[TableInfo]:
        """The tables and views, with their row counts."""

    @abstractmethod
    def describe_table(self, table: str, sample_rows: int = 5) -> TableDescription:
        """One table's columns, row count and first rows.

        Raises:
            SqlRejected: ``unknown_table``, with the nearest names.
        """

    @abstractmethod
    def data_version(self) -> str:
        """Changes whenever the data may have (ends with ``:live`` where it cannot be known)."""

    def functions(self) -> tuple[frozenset[str], frozenset[str]]:
        """The functions this source's SQL may call anywhere, and those it may call as tables."""
        from .prepare import allowed_functions

        return allowed_functions(self.dialect)

    # ------------------------------------------------------------------ running

    @abstractmethod
    def start(self, run: QueryRun) -> RunningQuery:
        """The query of ``run``, ready to be written (nothing runs before ``write``)."""

    def row_estimates(self) -> dict[str, int]:
        """Each table's row count as the engine's catalogue keeps it, read without scanning a
        table (DuckDB's ``estimated_size``, PostgreSQL's ``pg_class.reltuples``, SQLite's
        ``sqlite_stat1``); empty where the engine keeps none or it could not be read in time."""
        return {}

    def probe(self, sql: str, timeout_s: float) -> list[tuple[Any, ...]] | None:
        """The rows of a host-written look-up (the schema outline's counts and ranges), stopped
        in the engine past ``timeout_s``; ``None`` when it failed or took too long, or where the
        engine has no quick look-ups (the outline then states no figures)."""
        return None

    def admit(self) -> None:
        """Let a new query start, or refuse it (``QueryFailed``, e.g. ``engine_busy`` while the
        engine still runs as many given-up calls as it may: see ``parking.py``)."""

    def warm_engine(self) -> None:
        """A query is coming: start what it will run in, without waiting for it."""

    def close(self) -> None:
        """Let go of the engine; running queries fail."""
        self.executor.shutdown(wait=False, cancel_futures=True)


# ---------------------------------------------------------------------- shared by the engines


#: The most rows a table may hold, by its engine's estimate, for the host to count it exactly
#: (``count(*)``, which on PostgreSQL and over files reads the whole table); past it, the
#: estimate is said as one.
EXACT_COUNT_MAX = 1_000_000
#: How long reading the catalogue's estimates may take (seconds).
ESTIMATE_TIMEOUT_S = 2.0


def estimates_from(rows: list[tuple[Any, ...]] | None) -> dict[str, int]:
    """``{table: rows}`` of a look-up's ``(table, estimate)`` rows; negative or missing
    estimates (a table never analysed) are left out.

    >>> estimates_from([("big", 2.0e7), ("fresh", -1), ("none", None)]), estimates_from(None)
    ({'big': 20000000}, {})
    """
    return {str(name): int(n) for name, n in rows or () if n is not None and n >= 0}


def uncounted(estimates: dict[str, int], table: str) -> int | None:
    """The estimate of ``table`` when it is past :data:`EXACT_COUNT_MAX` (then it is not
    counted: the estimate is said instead), else ``None`` (count it).

    >>> uncounted({"big": 50_000_000, "small": 10}, "big"), uncounted({"small": 10}, "small")
    (50000000, None)
    """
    estimate = estimates.get(table)
    return estimate if estimate is not None and estimate > EXACT_COUNT_MAX else None


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


def unknown_table(table: str, known: list[str]) -> SqlRejected:
    """The refusal of a table the source does not have, with the nearest names."""
    suggestions = nearest(table, known)
    return SqlRejected(
        f"Unknown table {table!r}." + (f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""),
        reason="unknown_table",
        suggestions=suggestions or known[:10],
        hint="call list_tables to see the tables",
    )


def source_not_found(what: str) -> SourceError:
    """The error of a source that is not there."""
    return SourceError(
        f"data source not found: {what}",
        reason="source_not_found",
        hint="pass an existing .duckdb file, a CSV/Parquet file or folder, :memory:, or a SQLAlchemy URL",
    )


class stopped_after:
    """Calls ``stop`` from a timer thread after ``seconds``, unless the block has ended first:
    never once it has (a connection closed after the block is not interrupted any more)."""

    def __init__(self, seconds: float, stop: Any) -> None:
        self._stop = stop
        self._lock = threading.Lock()
        self._over = False
        self._timer = threading.Timer(seconds, self._fire)

    def _fire(self) -> None:
        with self._lock:
            if not self._over:
                self._stop()

    def __enter__(self) -> None:
        self._timer.start()

    def __exit__(self, *_exc: object) -> None:
        with self._lock:
            self._over = True
        self._timer.cancel()
