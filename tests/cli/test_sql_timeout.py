"""``run --sql-timeout SECONDS``: a query past it is stopped in its engine, on DuckDB and on
PostgreSQL alike; the model is told ``query_timeout`` with the limit, its next query runs, and
the turn completes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from jupyter_analyst.store import ThreadStore
from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step
from jupyter_analyst.testing.slow_queries import ENDLESS, build_join_db

TIMEOUT_S = 1.0
#: Endless on PostgreSQL: a thousand rows times a series with no end in sight.
PG_ENDLESS = "SELECT COUNT(*) AS n FROM b, generate_series(1, 100000000000) AS g(x) WHERE (x * 7 + b.k) % 13 = 5"
AFTER = "SELECT COUNT(*) AS n FROM b"


def _run_with_timeout(db: str, endless: str, workspace) -> tuple[dict, list, float]:
    script = {"turns": [{"steps": [
        sql_step(endless, "slow"), sql_step(AFTER, "quick"), text_step("[scripted model] the first one ran too long"),
    ]}]}
    with ScriptedModelServer(script) as server:
        base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "jupyter_analyst.cli", "run", "--db", db, "--prompt", "count them",
             "--workspace", str(workspace), "--json", "--no-summarizer", "--sql-timeout", str(TIMEOUT_S)],
            env={**base, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"},
            capture_output=True, text=True, timeout=600,
        )
        took = time.perf_counter() - started
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout)
    store = ThreadStore(workspace / "analyst.sqlite3")
    try:
        results = store.events(summary["thread_id"], types=["tool_result"])
    finally:
        store.close()
    return summary, results, took


def _told_and_went_on(summary: dict, results: list) -> None:
    assert summary["status"] == "completed" and summary["answer"] == "[scripted model] the first one ran too long"
    slow, quick = results
    assert slow.status == "error", slow.result
    error = slow.result["error"]
    assert error["reason"] == "query_timeout" and f"ran past {TIMEOUT_S:g} s" in error["message"], error
    assert "filter" in error["hint"]
    assert quick.status == "ok" and quick.result["rows"] == 1, quick.result


def test_run_sql_timeout_stops_a_duckdb_query_and_the_turn_goes_on(tmp_path):
    db = build_join_db(tmp_path / "join.duckdb")
    summary, results, took = _run_with_timeout(str(db), ENDLESS, tmp_path / "ws")
    _told_and_went_on(summary, results)
    assert "stopped" in results[0].result["error"]["message"]  # by its interrupt, no worker killed
    assert took < 60


def test_run_sql_timeout_stops_a_postgres_query_at_the_server(tmp_path, postgres):
    import psycopg

    url = postgres.new_database()
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE TABLE b AS SELECT i AS k, i * 2 AS w FROM generate_series(0, 999) AS t(i)")
    summary, results, took = _run_with_timeout(url, PG_ENDLESS, tmp_path / "ws")
    _told_and_went_on(summary, results)
    assert took < 60
    with psycopg.connect(url, autocommit=True) as other:
        running = other.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%generate_series(1, 100000000000)%' "
            "AND pid <> pg_backend_pid()"
        ).fetchone()[0]
    assert running == 0, "the server stopped the statement, not only the client"


@pytest.mark.parametrize("value", ["0", "-3", "soon"])
def test_a_bad_sql_timeout_is_refused_with_a_clear_line(tmp_path, value):
    base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = subprocess.run(
        [sys.executable, "-m", "jupyter_analyst.cli", "run", "--db", ":memory:", "--prompt", "hi",
         "--workspace", str(tmp_path), "--sql-timeout", value],
        env=base, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 2
    assert "--sql-timeout" in out.stderr and "Traceback" not in out.stderr, out.stderr
