"""Spark Connect as a source (``sc://``): its SQL judged in Spark's dialect against Spark's own
function list, without a server; and on a real local Spark Connect server (the ``spark``
fixture: the sample's tables written by Spark), ``run --db sc://...`` answers a turn into a
Parquet artifact and a DataFrame in the kernel, and a query past its time limit is stopped on
the cluster, as Spark's own job status shows."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import subprocess
import sys
import time

import pytest

from jupyter_analyst.artifacts import sha256_file
from jupyter_analyst.errors import QueryFailed, SourceError, SqlRejected
from jupyter_analyst.sql import QueryRunner, open_source, prepare_query
from jupyter_analyst.sql.prepare import allowed_functions, prepare_sql
from jupyter_analyst.sql.spark_engine import SparkSource, safe_url
from jupyter_analyst.store import ThreadStore
from jupyter_analyst.testing import ScriptedModelServer, python_step, sql_step, text_step

SCHEMA = {"orders": {"order_id": "INT", "region_id": "INT", "revenue": "DOUBLE", "order_date": "DATE", "note": "STRING"}}

ORDINARY = [
    "SELECT region_id, COUNT(*) AS n, SUM(revenue) AS total, AVG(revenue) AS mean FROM orders GROUP BY region_id",
    "SELECT region_id, PERCENTILE_APPROX(revenue, 0.5) AS median, APPROX_COUNT_DISTINCT(order_id) AS d, "
    "COUNT_IF(revenue > 100) AS big FROM orders GROUP BY region_id",
    "SELECT order_id, ROW_NUMBER() OVER (PARTITION BY region_id ORDER BY revenue DESC) AS r FROM orders",
    "SELECT DATE_TRUNC('month', order_date) AS m, YEAR(order_date) AS y, DATEDIFF(order_date, DATE '2025-01-01') AS d "
    "FROM orders",
    "SELECT IF(revenue > 10, 'big', 'small') AS size, COALESCE(note, '') AS n, UPPER(note) AS u FROM orders",
    "SELECT region_id, e FROM orders LATERAL VIEW EXPLODE(ARRAY(1, 2)) t AS e",
    "SELECT COUNT(*) AS n FROM RANGE(10)",
]

#: What the guard refuses in Spark's dialect, and why.
REFUSED = [
    ("INSERT INTO orders SELECT * FROM orders", "sql_not_read_only"),
    ("CREATE TABLE t AS SELECT * FROM orders", "sql_not_read_only"),
    ("SELECT * FROM read_files('/etc/passwd')", "sql_function_not_allowed"),
    ("SELECT input_file_name() AS f FROM orders", "sql_function_not_allowed"),
    ("SELECT reflect('java.lang.System', 'getenv', 'HOME') AS h", "sql_function_not_allowed"),
    ("SELECT java_method('java.lang.Runtime', 'getRuntime') AS r", "sql_function_not_allowed"),
    ("SELECT try_reflect('java.lang.System', 'getenv', 'HOME') AS h", "sql_function_not_allowed"),
    ("SELECT current_user() AS u", "sql_function_not_allowed"),
    ("SELECT TRANSFORM(order_id) USING 'cat /etc/passwd' AS (x) FROM orders", "sql_not_read_only"),
    ("SELECT * FROM csv.`/etc/passwd`", "sql_not_read_only"),
    ("SELECT * FROM parquet.`events`", "sql_not_read_only"),
    ("SELECT '${env:HOME}' AS h", "sql_not_read_only"),
    ("SELECT ${spark.sql.warehouse.dir} AS w", None),
    # Statements sqlglot reads only as commands are refused as such, or as unreadable: never run.
    ("SET spark.sql.ansi.enabled = false", None),
    ("SET x", None),
    ("ADD JAR '/tmp/x.jar'", None),
    ("CACHE TABLE orders", None),
    ("CREATE TEMPORARY FUNCTION f AS 'com.example.F'", None),
]


@pytest.mark.parametrize("sql", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_analysis_passes_in_sparks_dialect(sql):
    prepared = prepare_sql(sql, schema=SCHEMA, dialect="spark")
    assert "orders" in prepared.executable.lower() or "range" in prepared.executable.lower()


@pytest.mark.parametrize(("sql", "reason"), REFUSED, ids=[s for s, _ in REFUSED])
def test_writes_files_jvm_calls_and_settings_are_refused_in_sparks_dialect(sql, reason):
    with pytest.raises(SqlRejected) as info:
        prepare_sql(sql, schema=SCHEMA, dialect="spark")
    assert info.value.reason == reason if reason else info.value.reason in ("sql_not_read_only", "sql_parse_error")


def test_spark_has_a_list_of_its_own():
    scalar, table = allowed_functions("spark")
    assert {"sum", "percentile_approx", "date_trunc", "explode"} <= scalar and "range" in table
    assert not {"reflect", "java_method", "try_reflect", "input_file_name", "read_files", "current_user"} & scalar


def test_a_spark_url_names_no_secret():
    url = "sc://ws.example.com:443/;token=dapi-secret;x-databricks-cluster-id=abc;use_ssl=true"
    assert "dapi-secret" not in safe_url(url) and "abc" in safe_url(url)


def test_an_unreachable_spark_server_is_a_clear_error_within_seconds():
    pytest.importorskip("pyspark.sql.connect.session", reason="the Spark Connect client is not installed")
    started = time.perf_counter()
    with pytest.raises(SourceError) as info:
        open_source("sc://127.0.0.1:1/;token=secret")
    assert info.value.reason == "source_unreadable"
    assert "Connection refused" in info.value.message or "connect" in info.value.message
    assert "secret" not in info.value.message
    # The client alone would retry an unreachable server for ten minutes.
    assert time.perf_counter() - started < 30


# ---------------------------------------------------------------------- on a Spark Connect server


def test_spark_tables_are_listed_described_and_versioned_as_live(spark):
    source = open_source(spark.url)
    try:
        assert isinstance(source, SparkSource)
        tables = {t.name: t.rows for t in source.list_tables()}
        assert tables == {"orders": 2400, "products": 6, "regions": 5}, tables
        described = source.describe_table("ORDERS", 2)
        assert described.name == "orders" and described.rows == 2400 and len(described.sample) == 2
        assert {c.name for c in described.columns} >= {"order_id", "revenue", "order_date"}
        # CSV-backed tables have no Delta history: nothing tells a change, and the version says so.
        assert source.data_version().endswith(":live")
    finally:
        source.close()


def test_run_db_spark_answers_a_turn_into_a_parquet_artifact_and_a_dataframe(spark, tmp_path):
    sql = ("SELECT r.region, ROUND(SUM(o.revenue), 2) AS revenue FROM orders o JOIN regions r "
           "ON o.region_id = r.region_id GROUP BY r.region ORDER BY revenue DESC")
    script = {"turns": [{"steps": [
        sql_step(sql, "by_region"),
        python_step("print('ROWS', len(by_region), type(by_region).__name__, round(by_region['revenue'].sum()))"),
        text_step("[scripted model] revenue by region"),
    ]}]}
    workspace = tmp_path / "ws"
    with ScriptedModelServer(script) as server:
        base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        out = subprocess.run(
            [sys.executable, "-m", "jupyter_analyst.cli", "run", "--db", spark.url, "--prompt", "revenue by region",
             "--workspace", str(workspace), "--json", "--no-summarizer"],
            env={**base, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"},
            capture_output=True, text=True, timeout=600,
        )
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    summary = json.loads(out.stdout)
    assert summary["status"] == "completed", summary
    store = ThreadStore(workspace / "analyst.sqlite3")
    try:
        ran_sql, ran_python = store.events(summary["thread_id"], types=["tool_result"])
        artifacts = [e for e in store.events(summary["thread_id"], types=["artifact"]) if e.artifact_type == "dataset"]
    finally:
        store.close()
    assert ran_sql.status == "ok" and ran_sql.result["rows"] == 5, ran_sql.result
    (artifact,) = artifacts
    # The artifact is the Parquet file Spark's Arrow was written to, named by its bytes' hash.
    blobs = [f for f in (workspace / "artifacts").rglob("*") if f.is_file()]
    assert artifact.fingerprint in {sha256_file(f) for f in blobs}
    # ... and it reached the kernel as a DataFrame with every region's revenue.
    printed = json.dumps(ran_python.result)
    assert ran_python.status == "ok" and "ROWS 5 DataFrame" in printed, ran_python.result


@pytest.mark.serial
def test_a_query_past_its_time_is_interrupted_on_the_cluster(spark, tmp_path):
    """Spark's own record of the query's job (its REST API): submitted before the time limit,
    not running any more, ended within 2 s of the limit."""
    timeout_s = 3.0
    source = open_source(spark.url)
    endless = "SELECT COUNT(*) AS n FROM RANGE(100000000000) a WHERE a.id % 7 = 3"
    before = {j["jobId"] for j in spark.jobs()}

    async def run() -> QueryFailed:
        runner = QueryRunner(source, timeout_s=timeout_s)
        with pytest.raises(QueryFailed) as info:
            await runner.run_to_parquet(prepare_query(endless, source), tmp_path / "slow.parquet")
        return info.value

    try:
        wall, started = time.time(), time.perf_counter()
        error = asyncio.run(run())
        took = time.perf_counter() - started
        assert error.reason == "query_timeout" and "stopped" in error.message, error
        jobs = [j for j in spark.jobs() if j["jobId"] not in before]
        assert jobs, "the query ran no job on Spark"
        for job in jobs:
            assert job["status"] != "RUNNING", job
            ended = _spark_time(job["completionTime"])
            assert _spark_time(job["submissionTime"]) < wall + timeout_s, (job, wall)
            assert ended - (wall + timeout_s) < 2.0, (job, wall)
        assert not (tmp_path / "slow.parquet").exists()
        # The client's side (the interrupt's reply, the result stream's end) on a loaded machine.
        assert took < timeout_s + 15, took
    finally:
        source.close()


def _spark_time(text: str) -> float:
    """A time of Spark's REST API (``2026-01-31T12:00:00.000GMT``) in seconds since the epoch."""
    return dt.datetime.strptime(text.removesuffix("GMT"), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=dt.UTC).timestamp()
