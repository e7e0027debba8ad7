"""Spark Connect as a source (``sc://``): its SQL judged in Spark's dialect against Spark's own
function list, without a server; and on a real local Spark Connect server (the ``spark``
fixture: the sample's tables written by Spark), ``run --db sc://...`` answers a turn into a
Parquet artifact and a DataFrame in the kernel, and a query past its time limit is stopped on
the cluster, as Spark's own job status shows."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from jupyter_analyst.artifacts import sha256_file
from jupyter_analyst.cli.demo import DEMO_SCRIPT, FIRST_PROMPT
from jupyter_analyst.errors import QueryFailed, SourceError, SqlRejected
from jupyter_analyst.sql import QueryRunner, open_source, prepare_query
from jupyter_analyst.sql.prepare import allowed_functions, prepare_sql
from jupyter_analyst.sql.check_cache import LIVE_DATA_NOTE
from jupyter_analyst.sql.spark_engine import QUERY_TAG_PREFIX, SparkSource, safe_url
from jupyter_analyst.store import ThreadStore
from jupyter_analyst.testing import ScriptedModelServer

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


def test_the_makefiles_spark_pins_are_the_spark_server_extra_and_not_the_test_extra():
    """`make test` and `make bench` install the full pyspark (SPARK_STAMP); `make demo` (the
    `test` and `docs` extras) does not pay for its 500 MB."""
    root = Path(__file__).resolve().parents[2]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = re.search(r"^SPARK_PACKAGES\s*:=\s*(.+)$", (root / "Makefile").read_text(), re.M).group(1)
    assert re.findall(r"'([^']+)'", pins) == extras["spark-server"]
    assert not any(p.startswith("pyspark") for p in extras["test"] + extras["docs"])
    assert re.search(r"^test-python: .*\$\(SPARK_STAMP\)", (root / "Makefile").read_text(), re.M)


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


def test_a_thread_on_spark_reuses_its_steps_and_its_audit_notebook_verifies(spark, tmp_path):
    """The demo's two turns on Spark: the first runs its query on the cluster into a Parquet
    artifact, a DataFrame and a chart; "continue" reuses both steps, and Spark's own job list
    shows the model's SQL ran no job again; the exported audit notebook then verifies against
    the same Spark source. Both say that reuse and the match assume the data did not change."""
    workspace = tmp_path / "ws"
    before = len(_model_query_jobs(spark))
    with ScriptedModelServer(DEMO_SCRIPT) as server:
        first = _cli(server, "run", "--db", spark.url, "--prompt", FIRST_PROMPT, "--workspace", str(workspace),
                     "--json", "--no-summarizer")
        summary = json.loads(first.stdout)
        assert summary["status"] == "completed" and summary["tool_calls"]["executed"] == 3, summary
        ran = len(_model_query_jobs(spark))
        assert ran > before, "the model's query ran no job on Spark"
        # --json keeps stdout to the one object: the caveat goes to stderr.
        assert LIVE_DATA_NOTE in first.stderr
        second = _cli(server, "run", "--thread", summary["thread_id"], "--prompt", "continue",
                      "--workspace", str(workspace), "--no-summarizer")
    assert "tool calls: 0 executed (0 of them SQL/Python steps), 2 reused" in second.stdout, second.stdout
    assert LIVE_DATA_NOTE in second.stdout and spark.token not in second.stdout + second.stderr
    # Spark's own account: no job of the model's SQL since the first turn.
    assert len(_model_query_jobs(spark)) == ran

    store = ThreadStore(workspace / "analyst.sqlite3")
    try:
        results = store.events(summary["thread_id"], types=["tool_result"])
        artifacts = store.events(summary["thread_id"], types=["artifact"])
    finally:
        store.close()
    by_turn = [[r for r in results if r.turn_id == t] for t in dict.fromkeys(r.turn_id for r in results)]
    first_turn, second_turn = by_turn
    assert [r.reused for r in second_turn] == [True, True], second_turn
    dataset = next(a for a in artifacts if a.artifact_type == "dataset")
    assert any(a.artifact_type == "image" and a.name.endswith(".png") for a in artifacts), artifacts
    # The dataset is the Parquet file Spark's Arrow was written to, named by its bytes' hash ...
    blobs = {sha256_file(f) for f in (workspace / "artifacts").rglob("*") if f.is_file()}
    assert dataset.fingerprint in blobs
    # ... and reached the kernel as a DataFrame: the pivot and its per-region totals ran on it.
    assert first_turn[-1].status == "ok" and "North" in json.dumps(first_turn[-1].result), first_turn[-1].result

    verified = _cli(None, "verify", "--thread", summary["thread_id"], "--workspace", str(workspace), "--json")
    report = json.loads(verified.stdout)
    assert verified.returncode == 0 and report["verdict"] == "verified", report
    assert report["counts"] == {"matched": 3, "changed": 0, "missing": 0}, report
    assert report["data_version"].endswith(":live") and report["data_note"] == LIVE_DATA_NOTE
    assert len(_model_query_jobs(spark)) > ran  # verify ran the query on Spark again
    assert spark.token not in verified.stdout
    opening = "".join(json.loads(Path(summary["notebook"]).read_text())["cells"][0]["source"])
    assert LIVE_DATA_NOTE in opening and spark.token not in opening

    # Credentials never enter the sandbox: the thread's notebook holds no token, and a cell
    # added to it (a notebook from elsewhere) is given the source without its token when
    # verify runs it in the sandboxed kernel; its error shows what the kernel was given.
    notebook = json.loads(Path(summary["notebook"]).read_text())
    assert spark.token not in json.dumps(notebook)
    notebook["cells"].append({"cell_type": "code", "id": "hostile", "metadata": {}, "execution_count": None,
                              "outputs": [], "source": "raise ValueError(f'given {source}')"})
    hostile = tmp_path / "hostile.ipynb"
    hostile.write_text(json.dumps(notebook))
    told = _cli(None, "verify", str(hostile), "--db", spark.url, "--json")
    report = json.loads(told.stdout)
    assert "ValueError: given sc://" in report["error"] and "token=***" in report["error"], report
    assert spark.token not in told.stdout + told.stderr


def test_a_client_without_the_servers_token_is_refused(spark):
    for url in (spark.url_without_token, f"{spark.url_without_token}/;token=not-the-token"):
        with pytest.raises(SourceError) as info:
            open_source(url)
        assert info.value.reason == "source_unreadable"
        assert "authenticat" in info.value.message.lower(), info.value.message


def test_the_spark_server_listens_on_loopback_only(spark):
    """Every socket the server's JVM listens on (Spark Connect, the UI, the driver's own)."""
    listening = _listening_addresses(spark.process.pid)
    assert {spark.port, spark.ui_port} <= {port for _, port in listening}, listening
    assert all(address in ("127.0.0.1", "::1") for address, _ in listening), listening


@pytest.mark.serial
def test_a_query_past_its_time_is_interrupted_on_the_cluster(spark, tmp_path):
    """Spark's own record of the query's job (its REST API): submitted before the time limit,
    not running any more, ended within 2 s of the limit."""
    timeout_s = 5.0
    source = open_source(spark.url)
    endless = "SELECT COUNT(*) AS n FROM RANGE(100000000000) a WHERE a.id % 7 = 3"
    # The session's first query pays for planning's warm-up; on a busy machine its job would
    # then start past the limit, and the test would time out a query still being planned.
    assert source.probe("SELECT COUNT(*) AS n FROM RANGE(10)", 120) == [(10,)]
    before = {j["jobId"] for j in spark.jobs()}
    prepared = prepare_query(endless, source)  # checked first: the limit counts from the run's start

    async def run() -> tuple[float, QueryFailed]:
        runner = QueryRunner(source, timeout_s=timeout_s)
        wall = time.time()
        with pytest.raises(QueryFailed) as info:
            await runner.run_to_parquet(prepared, tmp_path / "slow.parquet")
        return wall, info.value

    try:
        started = time.perf_counter()
        wall, error = asyncio.run(run())
        took = time.perf_counter() - started
        assert error.reason == "query_timeout" and "stopped" in error.message, error
        jobs = [j for j in _model_query_jobs(spark) if j["jobId"] not in before]
        assert jobs, "the query ran no job on Spark"
        for job in jobs:
            assert job["status"] == "FAILED", job
            ended = _spark_time(job["completionTime"])
            assert _spark_time(job["submissionTime"]) < wall + timeout_s, (job, wall)
            assert ended - (wall + timeout_s) < 2.0, (job, wall)
        assert not (tmp_path / "slow.parquet").exists()
        # The client's side (the interrupt's reply, the result stream's end) on a loaded machine.
        assert took < timeout_s + 15, took
    finally:
        source.close()


@pytest.mark.serial
def test_a_stopped_query_is_interrupted_on_the_cluster(spark, tmp_path):
    """Stop, as the server's cancel does it (the turn's task cancelled): the query's job is
    found running in Spark's own job list, then ended (FAILED, not RUNNING) within 2 s of Stop."""
    source = open_source(spark.url)
    endless = "SELECT COUNT(*) AS n FROM RANGE(100000000000) a WHERE a.id % 7 = 3"
    before = {j["jobId"] for j in spark.jobs()}

    def ours() -> list[dict]:
        return [j for j in _model_query_jobs(spark) if j["jobId"] not in before]

    async def run() -> tuple[float, list[dict]]:
        runner = QueryRunner(source, timeout_s=600)
        task = asyncio.ensure_future(runner.run_to_parquet(prepare_query(endless, source), tmp_path / "slow.parquet"))
        deadline = time.monotonic() + 120
        # Spark's own word that the query runs (polled: its REST API pushes nothing).
        while not any(j["status"] == "RUNNING" for j in await asyncio.to_thread(ours)):
            assert not task.done() and time.monotonic() < deadline, "the query never ran on Spark"
            await asyncio.sleep(0.2)
        stopped = time.time()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return stopped, await asyncio.to_thread(ours)

    try:
        stopped, jobs = asyncio.run(run())
        assert jobs
        for job in jobs:
            assert job["status"] == "FAILED", job
            assert _spark_time(job["completionTime"]) - stopped < 2.0, (job, stopped)
        assert not (tmp_path / "slow.parquet").exists()
    finally:
        source.close()


def _spark_time(text: str) -> float:
    """A time of Spark's REST API (``2026-01-31T12:00:00.000GMT``) in seconds since the epoch."""
    return dt.datetime.strptime(text.removesuffix("GMT"), "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=dt.UTC).timestamp()


def _cli(model: ScriptedModelServer | None, *args: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SPARK_CONNECT_"))}
    env = {**base, "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "x"} if model is not None else base
    out = subprocess.run([sys.executable, "-m", "jupyter_analyst.cli", *args], env=env, capture_output=True,
                         text=True, timeout=600)
    assert "Traceback" not in out.stderr, out.stderr
    return out


def _model_query_jobs(spark) -> list[dict]:
    """Spark's jobs that ran a step's queries (the model's SQL, the row counts of the tables it
    reads: their operation's tag begins with the steps' prefix; the outline's look-ups are
    tagged apart)."""
    return [j for j in spark.jobs() if any(QUERY_TAG_PREFIX in tag for tag in j.get("jobTags", []))]


def _listening_addresses(pid: int) -> set[tuple[str, int]]:
    """The (address, port) pairs process ``pid`` listens on over TCP: its sockets' inodes
    (/proc/PID/fd) found in /proc/net/tcp and tcp6."""
    import ipaddress

    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            fields = line.split()
            if fields[3] != "0A" or fields[9] not in inodes:  # 0A: LISTEN
                continue
            address, port = fields[1].split(":")
            raw = bytes.fromhex(address)
            # The kernel writes each 32-bit word in host (little-endian) order.
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            ip = ipaddress.ip_address(raw)
            found.add((str(getattr(ip, "ipv4_mapped", None) or ip), int(port, 16)))
    return found
