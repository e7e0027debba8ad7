"""Any database SQLAlchemy reaches, as a source engine; SQL is transpiled to its dialect.

The engine runs elsewhere (a server, or SQLite's library in this process): each query has a
connection of its own (nothing is pooled, so nothing one query leaves in a session, a lock,
a setting or a temporary table, reaches the next), its rows are fetched within a memory
budget and handed to the shared writer as Arrow record batches (``batch_writer.py``), and a
query past its time is stopped in the engine through its driver (``sealed.QueryGuard``). A
call that takes no interrupt is set aside until it returns (``parking.py``).

SQLite (``sqlite_engine.py``) and PostgreSQL (``postgres_engine.py``) are subclasses that put
up their engine's own walls; any other dialect gets the generic one here.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import Any

from .._text import json_safe
from ..errors import QueryFailed, SourceError
from .parking import Parking
from .query_model import ColumnInfo, TableDescription, TableInfo
from .sealed import MB, EngineLimits, QueryGuard
from .source_engine import (
    BatchQuery,
    QueryRun,
    ResultBatches,
    RunningQuery,
    SourceEngine,
    stopped_after,
    uncounted,
    unknown_table,
)

#: sqlglot's names of SQLAlchemy's dialects, where they differ.
_DIALECTS = {"postgresql": "postgres", "mssql": "tsql", "sqlite": "sqlite"}
#: The package extra that installs a warehouse's SQLAlchemy dialect and driver, by URL scheme.
DRIVER_EXTRAS = {"trino": "trino", "bigquery": "bigquery", "snowflake": "snowflake", "databricks": "databricks"}


class SQLAlchemySource(SourceEngine):
    """Any database SQLAlchemy reaches; subclasses add their engine's own walls through the
    hooks :meth:`prepare_url`, :meth:`harden`, :meth:`check_connection` and :meth:`open_query`."""

    kind = "sqlalchemy"

    def __init__(self, spec: str, *, url: Any = None, limits: EngineLimits | None = None) -> None:
        """Connect to ``spec``; ``url`` (a ``sqlalchemy.URL``) when it is not the spec itself.

        ``limits``: the rows a query returns are held in this process (the engine runs
        elsewhere), so their size is what the memory limit bounds.
        """
        import sqlalchemy
        from sqlalchemy.pool import NullPool

        super().__init__(spec, limits)
        #: Calls that outlived their queries (see ``parking.py``); each holds one of the threads.
        self.parking = Parking()
        #: The database file of a file-backed database (SQLite), else ``None``.
        self.path = None
        try:
            url = sqlalchemy.engine.make_url(url if url is not None else spec)
        except Exception as exc:  # ArgumentError, ValueError: not a URL SQLAlchemy reads
            raise SourceError(f"cannot read {spec!r} as a database URL: {exc}", reason="source_unknown_kind",
                              hint="a SQLAlchemy URL looks like dialect+driver://user@host/database") from exc
        url = self.prepare_url(url)
        try:
            self.engine = sqlalchemy.create_engine(url, poolclass=NullPool)
            self.harden(self.engine)
            with self.engine.connect() as conn:
                self.check_connection(conn)
        except Exception as exc:  # drivers raise their own types
            raise self._unreachable(url, exc) from exc
        if not self.dialect:
            name = self.engine.dialect.name
            self.dialect = _DIALECTS.get(name, name)
        self._schema: dict[str, dict[str, str]] | None = None

    def _unreachable(self, url: Any, exc: Exception) -> SourceError:
        """The error of a source that could not be opened: its driver missing (which extra
        installs it), or the database not reached (the driver's first line, no password)."""
        from sqlalchemy.exc import NoSuchModuleError

        backend = url.get_backend_name()
        if isinstance(exc, NoSuchModuleError | ModuleNotFoundError):
            extra = DRIVER_EXTRAS.get(backend)
            install = f"pip install 'jupyter-analyst[{extra}]'" if extra else f"install the SQLAlchemy dialect for {backend}"
            return SourceError(f"cannot open {self._safe_url()}: no driver for {backend}:// is installed",
                               reason="source_unreadable", hint=install)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return SourceError(f"cannot connect to {self._safe_url()}: {first}", reason="source_unreadable",
                           hint="check the URL, the driver package and that the database is reachable")

    # ------------------------------------------------------------------ the engine's walls (hooks)

    def prepare_url(self, url: Any) -> Any:
        """The URL to connect with (an engine's read-only options added)."""
        return url

    def harden(self, engine: Any) -> None:
        """Set up every new connection of ``engine`` (before any query)."""

    def check_connection(self, conn: Any) -> None:
        """Make sure the first connection reached the database it should (raise if not)."""

    def open_query(self, conn: Any, timeout_s: float) -> QueryGuard:
        """Set one model query's limits on ``conn`` (its own connection); the way to stop it."""
        return QueryGuard(conn)

    # ------------------------------------------------------------------ the catalogue

    def _safe_url(self) -> str:
        return re.sub(r"://([^:/@]+):[^@]*@", r"://\1:***@", self.spec)

    def data_version(self) -> str:
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
        estimates = self.row_estimates()
        out = []
        with self.engine.connect() as conn:
            for table in sorted(self.schema()):
                estimate = uncounted(estimates, table)
                if estimate is None:
                    count = conn.execute(sqlalchemy.text(f'SELECT COUNT(*) FROM "{table}"')).scalar()
                out.append(TableInfo(name=table, kind="view" if table in views else "table",
                                     rows=int(count or 0) if estimate is None else estimate,
                                     rows_estimated=estimate is not None))
        return out

    def describe_table(self, table: str, sample_rows: int = 5) -> TableDescription:
        import sqlalchemy

        schema = self.schema()
        match = {t.lower(): t for t in schema}.get(str(table).lower())
        if match is None:
            raise unknown_table(str(table), sorted(schema))
        estimate = uncounted(self.row_estimates(), match)
        with self.engine.connect() as conn:
            if estimate is None:
                count = conn.execute(sqlalchemy.text(f'SELECT COUNT(*) FROM "{match}"')).scalar()
            result = conn.execute(sqlalchemy.text(f'SELECT * FROM "{match}" LIMIT {int(sample_rows)}'))
            sample = [{k: json_safe(v) for k, v in row._mapping.items()} for row in result]
        required = {c["name"] for c in sqlalchemy.inspect(self.engine).get_columns(match) if c.get("nullable") is False}
        columns = [ColumnInfo(name=c, type=t, nullable=False if c in required else None)
                   for c, t in schema[match].items()]
        return TableDescription(name=match, columns=columns, rows=int(count or 0) if estimate is None else estimate,
                                rows_estimated=estimate is not None, sample=sample)

    # ------------------------------------------------------------------ running

    def admit(self) -> None:
        self.parking.admit()

    def warm_engine(self) -> None:
        """A query is coming: import what writes its rows now, on a thread of its own (a first
        result would otherwise pay for it within its time limit)."""
        threading.Thread(target=_warm_writer, name="sql-warm", daemon=True).start()

    def start(self, run: QueryRun) -> RunningQuery:
        return SQLAlchemyQuery(self, run)

    def probe(self, sql: str, timeout_s: float) -> list[tuple[Any, ...]] | None:
        import sqlalchemy

        try:
            with self.engine.connect() as conn:
                guard = self.open_query(conn, timeout_s)
                with stopped_after(timeout_s, guard.stop):
                    rows = [tuple(row) for row in conn.execute(sqlalchemy.text(sql)).fetchall()]
                conn.rollback()
                return rows
        except Exception:  # noqa: BLE001 - drivers raise their own types
            return None

    def close(self) -> None:
        super().close()
        self.engine.dispose()


def _warm_writer() -> None:
    from .batch_writer import warm

    warm()


#: The share of a source's memory limit that the values of one result may take in this
#: process: they are held as Python objects, then copied into Arrow to be written (about
#: four times their bytes at the peak).
RESULT_SHARE = 4


class SQLAlchemyQuery(BatchQuery):
    """One model query on a connection of its own; stopped through the driver."""

    def __init__(self, source: SQLAlchemySource, run: QueryRun) -> None:
        super().__init__(run)
        self.source = source
        self._guards: list[QueryGuard] = []  # the query's guard once its connection is open

    def batches(self) -> ResultBatches:
        import pyarrow as pa
        import sqlalchemy

        run = self.run
        cap = int(run.row_cap)
        dropped: int | None = 0
        with self.source.engine.connect() as conn:
            self._guards.append(self.source.open_query(conn, run.timeout_s))
            result = conn.execution_options(stream_results=True).execute(sqlalchemy.text(run.sql))
            names = list(result.keys())
            fetched = fetch_within(result, cap, self.source.limits.memory() // RESULT_SHARE)
            # The rest is counted as it streams past, within the allowance.
            deadline = run.started + max(run.count_allowance_s, time.perf_counter() - run.started)
            while more := result.fetchmany(10_000):
                dropped += len(more)
                if time.perf_counter() > deadline:
                    dropped = None if result.fetchone() is not None else dropped
                    break
            result.close()
            conn.rollback()  # read-only: nothing to keep
        # Typed from all the rows at once: a column's values may differ in type row by row
        # (SQLite), and the type of the whole column is what the file must hold.
        table = pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in fetched]) if fetched else pa.table(
            {n: pa.array([], pa.null()) for n in names}
        )
        return ResultBatches(schema=table.schema, batches=iter(table.to_batches()), dropped=dropped)

    def interrupt(self) -> None:
        for guard in self._guards:
            guard.stop()

    def abandon(self, calls: Sequence[Future]) -> None:
        # Its connection closes when its call returns, in its thread.
        self.source.parking.hold(calls, lambda: None)


def fetch_within(result: Any, cap: int, budget: int) -> list[Any]:
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
