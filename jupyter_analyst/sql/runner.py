"""The query runner: executes prepared queries off the event loop, straight to Parquet.

The same query on the same data must give the same bytes (fingerprints are sha256 of the
file), so a query without its own ORDER BY gets a total order, and the writer's settings
are fixed.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import QueryFailed
from .model import ColumnInfo, PreparedQuery, QueryResult
from .sources import DataSource, DuckDBSource, SQLAlchemySource, json_safe

SAMPLE_ROWS = 5
_PARQUET_OPTIONS = "FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880"


class QueryRunner:
    """Runs queries of one source in worker threads, with a timeout and a row cap."""

    def __init__(self, source: DataSource, *, timeout_s: float = 60.0, row_cap: int = 1_000_000) -> None:
        self.source = source
        self.timeout_s = timeout_s
        self.row_cap = row_cap

    async def run_to_parquet(self, query: PreparedQuery, dest: Path) -> QueryResult:
        """Execute ``query`` and write its rows to ``dest`` (atomically); returns a summary.

        Raises:
            QueryFailed: ``query_timeout`` past the timeout, ``query_failed`` on an engine error.
        """
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=".q-", suffix=".parquet")
        os.close(fd)
        tmp = Path(tmp_name)
        started = time.perf_counter()
        try:
            if isinstance(self.source, DuckDBSource):
                rows, columns, truncated, sample = await self._duckdb(query, tmp)
            else:
                rows, columns, truncated, sample = await self._generic(query, tmp)
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
        return QueryResult(
            rows=rows, columns=columns, truncated=truncated,
            elapsed_s=time.perf_counter() - started, sample=sample,
        )

    # ------------------------------------------------------------------ DuckDB

    async def _duckdb(self, query: PreparedQuery, tmp: Path) -> tuple[int, list[ColumnInfo], bool, list[dict[str, Any]]]:
        assert isinstance(self.source, DuckDBSource)
        cursor = self.source.cursor()
        order = "" if query.has_order else " ORDER BY ALL"
        capped = f"SELECT * FROM ({query.executable}) AS _q{order} LIMIT {int(self.row_cap)}"
        path = str(tmp).replace("'", "''")

        def work() -> tuple[int, list[ColumnInfo], bool, list[dict[str, Any]]]:
            cursor.execute("SET preserve_insertion_order = true")
            copied = cursor.execute(f"COPY ({capped}) TO '{path}' ({_PARQUET_OPTIONS})").fetchone()
            if copied is None or isinstance(copied[0], bool) or not isinstance(copied[0], int):
                # DuckDB runs a PIVOT statement as several statements and reports only
                # "Success" for the COPY: the file says how many rows it holds.
                copied = cursor.execute(f"SELECT COUNT(*) FROM read_parquet('{path}')").fetchone()
            written = int(copied[0]) if copied else 0
            truncated = False
            if written >= self.row_cap:
                more = cursor.execute(f"SELECT 1 FROM ({query.executable}) AS _q LIMIT 1 OFFSET {int(self.row_cap)}")
                truncated = more.fetchone() is not None
            described = cursor.execute(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
            columns = [ColumnInfo(name=r[0], type=str(r[1])) for r in described]
            head = cursor.execute(f"SELECT * FROM read_parquet('{path}') LIMIT {SAMPLE_ROWS}")
            names = [d[0] for d in head.description]
            sample = [{k: json_safe(v) for k, v in zip(names, row, strict=True)} for row in head.fetchall()]
            return int(written), columns, truncated, sample

        try:
            return await self._with_timeout(work, cancel=cursor.interrupt)
        finally:
            cursor.close()

    # ------------------------------------------------------------------ SQLAlchemy

    async def _generic(self, query: PreparedQuery, tmp: Path) -> tuple[int, list[ColumnInfo], bool, list[dict[str, Any]]]:
        assert isinstance(self.source, SQLAlchemySource)
        import sqlalchemy

        engine = self.source.engine
        cap = int(self.row_cap)

        def work() -> tuple[int, list[ColumnInfo], bool, list[dict[str, Any]]]:
            with engine.connect() as conn:
                result = conn.execution_options(stream_results=True).execute(sqlalchemy.text(query.executable))
                names = list(result.keys())
                fetched = result.fetchmany(cap + 1)
            truncated = len(fetched) > cap
            fetched = fetched[:cap]
            table = pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in fetched]) if fetched else pa.table(
                {n: pa.array([], pa.null()) for n in names}
            )
            if not query.has_order and table.num_rows:
                table = table.sort_by([(n, "ascending") for n in names if not pa.types.is_null(table.schema.field(n).type)])
            pq.write_table(table, tmp, compression="zstd", row_group_size=122_880)
            columns = [ColumnInfo(name=f.name, type=str(f.type)) for f in table.schema]
            sample = [{k: json_safe(v) for k, v in row.items()} for row in table.slice(0, SAMPLE_ROWS).to_pylist()]
            return table.num_rows, columns, truncated, sample

        return await self._with_timeout(work, cancel=None)

    # ------------------------------------------------------------------ shared

    async def _with_timeout(self, work, *, cancel) -> Any:
        loop = asyncio.get_running_loop()
        done = threading.Event()
        fired = threading.Event()

        def on_timeout() -> None:
            if not done.is_set() and cancel is not None:
                fired.set()
                cancel()

        timer = threading.Timer(self.timeout_s, on_timeout)
        timer.daemon = True
        future = loop.run_in_executor(None, work)
        timer.start()
        try:
            if cancel is None:
                return await asyncio.wait_for(future, self.timeout_s)
            return await future
        except (TimeoutError, asyncio.TimeoutError) as exc:
            raise _timeout(self.timeout_s) from exc
        except duckdb.InterruptException as exc:
            raise _timeout(self.timeout_s) from exc
        except (duckdb.Error, Exception) as exc:
            if fired.is_set():
                raise _timeout(self.timeout_s) from exc
            if isinstance(exc, QueryFailed):
                raise
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise QueryFailed(f"the query failed: {message}", reason="query_failed") from exc
        finally:
            done.set()
            timer.cancel()


def _timeout(seconds: float) -> QueryFailed:
    return QueryFailed(
        f"the query ran past {seconds:g} s and was stopped",
        reason="query_timeout",
        hint="aggregate in SQL, filter, or add a LIMIT",
    )
