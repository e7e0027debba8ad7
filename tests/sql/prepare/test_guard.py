"""Time travel (a table read as it was at another time or version) in each dialect that has
it is refused with one reason, before anything runs: a step is keyed, checked and verified
against the tables as they are now."""

from __future__ import annotations

import pytest

from jupyter_analyst.errors import SqlRejected
from jupyter_analyst.sql.prepare import prepare_sql

SCHEMA = {"orders": {"order_id": "INT", "amount": "DOUBLE"}}


@pytest.mark.parametrize("dialect, sql, said", [
    ("trino", "SELECT * FROM orders FOR TIMESTAMP AS OF TIMESTAMP '2024-01-01 00:00:00'", "FOR TIMESTAMP AS OF"),
    ("trino", "SELECT order_id FROM orders FOR VERSION AS OF 8954597067493422955", "FOR VERSION AS OF"),
    # Hidden in a subquery and a CTE: the whole tree is walked.
    ("trino", "WITH old AS (SELECT * FROM orders FOR VERSION AS OF 1) SELECT COUNT(*) FROM old", "FOR VERSION AS OF"),
    ("trino", "SELECT * FROM (SELECT * FROM orders FOR TIMESTAMP AS OF current_timestamp) AS t", "FOR TIMESTAMP AS OF"),
    ("bigquery", "SELECT * FROM orders FOR SYSTEM_TIME AS OF TIMESTAMP_SUB(CURRENT_TIMESTAMP(), INTERVAL 1 HOUR)",
     "FOR SYSTEM_TIME AS OF"),
    ("databricks", "SELECT * FROM orders VERSION AS OF 3", "VERSION AS OF 3"),
    ("databricks", "SELECT * FROM orders TIMESTAMP AS OF '2024-01-01'", "TIMESTAMP AS OF"),
    ("spark", "SELECT * FROM orders VERSION AS OF 3", "VERSION AS OF 3"),
    ("databricks", "SELECT * FROM orders@v3", "orders@v3"),
    ("databricks", "SELECT COUNT(*) FROM orders@20240101000000000", "orders@20240101000000000"),
    ("snowflake", "SELECT * FROM orders AT(TIMESTAMP => '2024-01-01'::timestamp)", "AT (TIMESTAMP =>"),
    ("snowflake", "SELECT * FROM orders AT(OFFSET => -60)", "AT (OFFSET => -60)"),
    ("snowflake", "SELECT * FROM orders BEFORE(STATEMENT => '8e5d0ca9-005e-44e6-b858-a8f5b37c5726')", "BEFORE (STATEMENT"),
    ("snowflake", "SELECT * FROM orders CHANGES(INFORMATION => DEFAULT) AT(OFFSET => -60)", "CHANGES ("),
    ("duckdb", "SELECT * FROM orders AT (VERSION => 3)", "AT (VERSION => 3)"),
])
def test_time_travel_is_refused_in_every_dialect_that_has_it(dialect, sql, said):
    cleared = []
    with pytest.raises(SqlRejected) as refused:
        prepare_sql(sql, schema=SCHEMA, dialect=dialect, on_cleared=cleared.append)
    assert refused.value.reason == "sql_unsupported"
    assert "as it was at another time or version" in refused.value.message and said in refused.value.message
    assert "date columns" in refused.value.hint
    assert cleared == []  # never started


@pytest.mark.parametrize("dialect, sql", [
    # Table functions that read another time, another query's result or raw SQL stay refused
    # by the function allow-list.
    ("trino", "SELECT * FROM TABLE(system.query(query => 'SELECT 1'))"),
    ("snowflake", "SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))"),
    ("bigquery", "SELECT * FROM APPENDS(TABLE orders, NULL, NULL)"),
    ("databricks", "SELECT * FROM table_changes('orders', 2)"),
    ("duckdb", "SELECT * FROM query_table('orders')"),
])
def test_table_functions_of_other_times_or_queries_stay_refused(dialect, sql):
    with pytest.raises(SqlRejected) as refused:
        prepare_sql(sql, schema=SCHEMA, dialect=dialect)
    assert refused.value.reason == "sql_function_not_allowed"


@pytest.mark.parametrize("dialect", ["trino", "bigquery", "databricks", "snowflake", "duckdb"])
def test_the_tables_as_they_are_now_still_pass(dialect):
    prepared = prepare_sql("SELECT order_id, amount FROM orders WHERE amount > 1", schema=SCHEMA, dialect=dialect)
    assert prepared.tables == ["orders"]
