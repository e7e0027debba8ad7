"""A query that reads the clock is marked so, in every dialect the sources speak: its step key
then takes the day it runs (see tests/agent/tools/test_run_sql.py)."""

from __future__ import annotations

import pytest

from jupyter_analyst.sql.prepare import prepare_sql

SCHEMA = {"orders": {"order_date": "DATE", "amount": "DOUBLE"}}


@pytest.mark.parametrize("dialect, sql", [
    ("duckdb", "SELECT SUM(amount) AS s FROM orders WHERE order_date > current_date - 7"),
    ("duckdb", "SELECT SUM(amount) AS s FROM orders WHERE order_date > today() - 7"),
    ("duckdb", "SELECT now() AS t"),
    ("duckdb", "SELECT get_current_timestamp() AS t"),
    ("duckdb", "SELECT current_localtimestamp() AS t"),
    ("postgres", "SELECT COUNT(*) AS n FROM orders WHERE order_date = CAST('today' AS DATE)"),
    ("postgres", "SELECT clock_timestamp() AS t"),
    ("postgres", "SELECT now() AS t"),
    ("sqlite", "SELECT COUNT(*) AS n FROM orders WHERE order_date >= date('now', '-7 days')"),
    ("sqlite", "SELECT julianday('now') AS t"),
    ("trino", "SELECT localtimestamp AS t"),
    ("snowflake", "SELECT sysdate() AS t"),
    ("snowflake", "SELECT getdate() AS t"),
    ("bigquery", "SELECT current_datetime() AS t"),
    ("databricks", "SELECT COUNT(*) AS n FROM orders WHERE order_date = curdate()"),
])
def test_a_query_of_the_current_date_or_time_reads_the_clock(dialect, sql):
    assert prepare_sql(sql, schema=SCHEMA, dialect=dialect).reads_clock


@pytest.mark.parametrize("dialect, sql", [
    ("duckdb", "SELECT SUM(amount) AS s FROM orders WHERE order_date > DATE '2024-01-01'"),
    ("postgres", "SELECT order_date, COUNT(*) AS n FROM orders GROUP BY order_date"),
    ("sqlite", "SELECT date(order_date, '+1 day') AS d FROM orders"),
])
def test_a_query_of_fixed_dates_does_not(dialect, sql):
    assert not prepare_sql(sql, schema=SCHEMA, dialect=dialect).reads_clock
