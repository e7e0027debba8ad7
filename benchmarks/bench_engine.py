"""What running the model's SQL in a DuckDB source's engine worker process costs.

The runner sends each statement of a query (its ``COPY`` to Parquet through a named pipe, the
host hashing the bytes) to the source's worker as a JSON line and waits for its answer;
before the worker, the same statement ran on a connection of the host's own engine. Both
are measured here on the same source, the same query and the same pipe-and-hash path:

* per query, warm: ``QueryRunner.run_to_parquet`` with the worker against the same runner
  whose statements run on a connection of the source's in-process engine (sealed the same:
  what the runner did before), for a small result (one row) and a larger one (an aggregate
  over a million rows, written as 100,000 rows);
* the first query of a source: opening it and running one query, which starts its worker
  (interpreter, DuckDB's import, the sealed engine) against the same on the in-process engine.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import threading
import time
from itertools import count
from pathlib import Path

import duckdb

from jupyter_analyst.sql import QueryRunner, open_source, prepare_query

from .common import Report

FLOOR = "the same runner, each statement on a connection of the source's in-process engine"
FIRST_FLOOR = "the same, on the source's in-process engine"
QUERIES = {
    "one row": "SELECT COUNT(*) AS n, SUM(x) AS s FROM t",
    "100,000 rows of an aggregate over 1,000,000": (
        "SELECT id % 100000 AS k, COUNT(*) AS n, SUM(x) AS s FROM t GROUP BY k ORDER BY k"),
}


def make_db(path: Path, rows: int) -> None:
    with duckdb.connect(str(path)) as conn:
        conn.execute(f"CREATE TABLE t AS SELECT range AS id, (range * 7919) % 10007 / 10007.0 AS x FROM range({rows})")


def bench_engine(report: Report, *, rows: int, repeat: int) -> None:
    repeat = max(repeat, 5)
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        root = Path(tmp)
        db = root / "t.duckdb"
        make_db(db, 1_000_000)
        files = count()

        def dest() -> Path:
            return root / f"r{next(files)}.parquet"

        source, floor_source = open_source(str(db)), open_source(str(db))
        floor_source.engine.close()
        floor_source.engine = InProcessEngine(floor_source)
        try:
            for label, sql in QUERIES.items():
                ours = QueryRunner(source, row_cap=rows + 1)
                floor = QueryRunner(floor_source, row_cap=rows + 1)
                prepared = prepare_query(sql, source)
                ours_s = _median(lambda: asyncio.run(ours.run_to_parquet(prepared, dest())), repeat)
                floor_s = _median(lambda: asyncio.run(floor.run_to_parquet(prepared, dest())), repeat)
                report.add(f"engine worker, per query: {label}", ours_s, floor_s, FLOOR)
        finally:
            source.close()
            floor_source.close()
        # The first query of a fresh source: the worker started for it, and without one.
        firsts, floors = [], []
        for _ in range(max(3, repeat // 2)):
            firsts.append(_first_query(db, dest(), in_process=False))
            floors.append(_first_query(db, dest(), in_process=True))
        report.add("engine worker: a source's first query (open, start the worker, run)",
                   statistics.median(firsts), statistics.median(floors), FIRST_FLOOR)


def _first_query(db: Path, dest: Path, *, in_process: bool) -> float:
    started = time.perf_counter()
    source = open_source(str(db))
    try:
        if in_process:
            source.engine.close()
            source.engine = InProcessEngine(source)
        result = asyncio.run(QueryRunner(source).run_to_parquet(prepare_query("SELECT 1 AS one", source), dest))
        assert result.sample == [{"one": 1}]
        return time.perf_counter() - started
    finally:
        source.close()


def _median(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


class _Done:
    """A statement run to its end in this process (what ``EngineJob`` is for the worker)."""

    progress = -1.0

    def __init__(self, rows: list[list[object]]) -> None:
        self._rows = rows
        self.done = threading.Event()
        self.done.set()

    def rows(self) -> list[list[object]]:
        return self._rows


class InProcessEngine:
    """The runner's engine as it was before the worker: each statement on a connection of the
    source's own in-process engine (sealed the same), in the runner's thread."""

    def __init__(self, source) -> None:
        self.source = source
        self.private = source.private_dir

    def submit(self, sql: str, *, fetch: bool = False) -> _Done:
        cursor = self.source.cursor()
        try:
            result = cursor.execute(sql)
            return _Done([list(row) for row in result.fetchall()] if fetch else [])
        finally:
            cursor.close()

    def interrupt(self, job) -> None:
        pass

    def kill(self, job, why: str) -> None:
        pass

    def close(self) -> None:
        pass
