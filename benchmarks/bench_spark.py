"""TPC-H's 22 queries on Spark through ``run_sql`` vs the same queries straight into Arrow
through Spark Connect, beside DuckDB's own time for them.

The Spark Connect server is the test suite's (``testing/servers/spark_server.py``: the full
pyspark's jars, run by the system's Java, ``local[2]``), its tables the TPC-H database of
``tpch.py`` (made in DuckDB, written out as Parquet, read by Spark into managed tables). The
queries are ``tpch.py``'s, translated from DuckDB's dialect to Spark's by sqlglot (the same
text both ways). Ours is ``ToolBox.call("run_sql")`` with no kernel started: the SQL checked
in Spark's dialect, run on the cluster under a tag (``addTag``), fetched as Arrow under the
row cap, written as Parquet and fingerprinted, stored in the inventory. The floor is
``spark.sql(q).toArrow()`` on a Spark Connect session of its own, to the same server. Each
query runs once each way to warm up, then ``repeat`` times alternately; medians per query,
geometric means over the 22. DuckDB's figure is ``cursor.sql(q).to_arrow_table()`` on the
same data, for scale.

Optional: where Java or pyspark with its jars is missing (``make spark`` installs it), the
benchmark says so and measures nothing. The scale factor is ``tpch``'s
(``JUPYTER_ANALYST_TPCH_SF``, else 1; 0.1 for ``--quick``).
"""

from __future__ import annotations

import asyncio
import math
import statistics
import tempfile
import time
from itertools import count
from pathlib import Path

from . import tpch
from .bench_tpch import scale_factor
from .common import Report

DIRECT = "Spark Connect spark.sql(q).toArrow(), same server"
TABLES = ("region", "nation", "supplier", "part", "partsupp", "customer", "orders", "lineitem")
_CALLS = count()


def bench_spark_tpch(report: Report, *, rows: int, repeat: int) -> None:
    from jupyter_analyst.testing.servers.spark_server import SparkUnavailable, spark_server

    sf = scale_factor(rows)
    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        (Path(tmp) / "spark").mkdir()
        server_cm = spark_server(Path(tmp) / "spark")
        try:
            server = server_cm.__enter__()
        except SparkUnavailable as exc:  # no Java, or no Spark jars: the other benchmarks go on
            report.note(f"Spark is not measured: {exc}")
            return
        try:
            db = tpch.database(sf)
            started = time.perf_counter()
            _load(server.url, db, Path(tmp) / "parquet")
            report.note(f"TPC-H SF{sf:g} written into Spark tables in {time.perf_counter() - started:.0f} s")
            ours, direct, duck = asyncio.run(_measure(report, server.url, db, repeat))
        finally:
            server_cm.__exit__(None, None, None)
    ratios = {n: ours[n] / direct[n] for n in ours}
    worst = max(ratios, key=ratios.__getitem__)
    report.add(f"TPC-H SF{sf:g} on Spark, 22 queries through run_sql (no kernel): geomean per query",
               _geomean(ours.values()), _geomean(direct.values()), DIRECT)
    report.add(f"TPC-H SF{sf:g} on Spark: worst query, q{worst}", ours[worst], direct[worst], DIRECT)
    report.add(f"TPC-H SF{sf:g} on Spark: all 22 queries, summed", sum(ours.values()), sum(direct.values()), DIRECT)
    report.add(f"TPC-H SF{sf:g}: Spark Connect straight to Arrow against DuckDB straight to Arrow, geomean per query",
               _geomean(direct.values()), _geomean(duck.values()), "DuckDB cursor.sql(q).to_arrow_table()")
    report.note(f"TPC-H SF{sf:g} on Spark, ratio per query (run_sql / toArrow): "
                + ", ".join(f"q{n} {ratios[n]:.2f}x" for n in sorted(ratios)))


def spark_queries() -> dict[int, str]:
    """The 22 queries in Spark's dialect."""
    import sqlglot

    return {n: sqlglot.transpile(q, read="duckdb", write="spark")[0] for n, q in tpch.QUERIES.items()}


def _load(url: str, db: Path, folder: Path) -> None:
    """The DuckDB database's tables as Spark tables of the same names (through Parquet)."""
    import duckdb
    from pyspark.sql.connect.session import SparkSession

    folder.mkdir(parents=True)
    with duckdb.connect(str(db), read_only=True) as con:
        for table in TABLES:
            con.execute(f"COPY {table} TO '{folder / table}.parquet' (FORMAT parquet)")
    spark = SparkSession.builder.remote(url).create()
    try:
        for table in TABLES:
            spark.read.parquet(str(folder / f"{table}.parquet")).write.mode("overwrite").saveAsTable(table)
    finally:
        spark.stop()


def _geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


async def _measure(
    report: Report, url: str, db: Path, repeat: int,
) -> tuple[dict[int, float], dict[int, float], dict[int, float]]:
    """Median seconds per query: ours, Spark Connect's to Arrow and DuckDB's."""
    import duckdb
    from pyspark.sql.connect.session import SparkSession

    from jupyter_analyst.agent.environment import ThreadEnvironment
    from jupyter_analyst.agent.spec import CallContext
    from jupyter_analyst.agent.tools import ToolBox
    from jupyter_analyst.sql import open_source
    from jupyter_analyst.workspace import Workspace

    queries = spark_queries()
    with tempfile.TemporaryDirectory(prefix="bench-spark-ws-") as tmp:
        workspace = Workspace(Path(tmp) / "ws")
        thread = workspace.store.create_thread(source=url)
        source = open_source(url)
        runtime = ThreadEnvironment(thread_id=thread.thread_id, source=source, artifacts=workspace.artifacts,
                                    workdir=workspace.kernel_dir(thread.thread_id))
        tools = ToolBox(runtime)
        spark = SparkSession.builder.remote(url).create()
        duck = duckdb.connect(str(db), read_only=True)

        def say(number: int) -> None:  # each query's figures kept as they come (a long run may be cut short)
            report.note(f"q{number}: run_sql {mine[number]:.2f} s, toArrow {theirs[number]:.2f} s "
                        f"({mine[number] / theirs[number]:.2f}x), DuckDB {duckdbs[number] * 1000:.0f} ms")

        async def ours(number: int) -> float:
            call = next(_CALLS)
            args = {"sql": f"/* run {call} */ " + queries[number], "name": f"q{number}_{call}"}
            ctx = CallContext(thread.thread_id, "bench", f"call_{call}", rerun=True)
            started = time.perf_counter()
            outcome = await tools.call("run_sql", args, ctx, await tools.plan("run_sql", args))
            took = time.perf_counter() - started
            # (q11's threshold is relative to SF1: at small scale factors it may keep no row)
            assert outcome.status == "ok", (number, outcome.result)
            return took

        def direct(number: int) -> float:
            started = time.perf_counter()
            spark.sql(queries[number]).toArrow()
            return time.perf_counter() - started

        def duckdb_direct(number: int) -> float:
            started = time.perf_counter()
            duck.sql(tpch.QUERIES[number]).to_arrow_table()
            return time.perf_counter() - started

        mine: dict[int, float] = {}
        theirs: dict[int, float] = {}
        duckdbs: dict[int, float] = {}
        try:
            for number in queries:
                await ours(number)
                direct(number)
                a, b = [], []
                for _ in range(repeat):
                    b.append(direct(number))
                    a.append(await ours(number))
                mine[number], theirs[number] = statistics.median(a), statistics.median(b)
                duckdbs[number] = statistics.median(duckdb_direct(number) for _ in range(max(repeat, 1)))
                say(number)
        finally:
            spark.stop()
            duck.close()
            await runtime.close()
            source.close()
            workspace.close()
        return mine, theirs, duckdbs
