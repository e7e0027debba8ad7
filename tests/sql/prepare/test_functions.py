"""The warehouses' dialects (Trino, BigQuery, Snowflake, Databricks SQL) are judged by lists of
their own: ordinary aggregates, windows and value functions pass the whole check in each
dialect; a write, a function that reads files, names the session or runs SQL given as text, and
a session setting are refused. No warehouse server runs here: these are the guard's tests, and
opening such a source without its driver says which extra installs it."""

from __future__ import annotations

import pytest

from jupyter_analyst.errors import SourceError, SqlRejected
from jupyter_analyst.sql import open_source
from jupyter_analyst.sql.prepare import allowed_functions, prepare_sql

SCHEMA = {"orders": {"id": "INT", "region": "VARCHAR", "amount": "DOUBLE", "placed": "DATE", "note": "VARCHAR"}}
WAREHOUSES = ("trino", "bigquery", "snowflake", "databricks")

ORDINARY = [
    "SELECT region, COUNT(*) AS n, SUM(amount) AS total, AVG(amount) AS mean, MIN(amount) AS lo, MAX(amount) AS hi "
    "FROM orders GROUP BY region",
    "SELECT region, COUNT(DISTINCT id) AS n FROM orders GROUP BY region ORDER BY n DESC LIMIT 10",
    "SELECT region, STDDEV(amount) AS sd, VARIANCE(amount) AS v FROM orders GROUP BY region",
    "SELECT id, ROW_NUMBER() OVER (PARTITION BY region ORDER BY amount DESC) AS r, LAG(amount) OVER (ORDER BY placed) AS p "
    "FROM orders",
    "SELECT CASE WHEN amount > 10 THEN 'big' ELSE 'small' END AS size, COALESCE(note, '') AS n FROM orders",
    "SELECT UPPER(region) AS u, LENGTH(note) AS len, SUBSTRING(note, 1, 3) AS s, REPLACE(note, 'a', 'b') AS r FROM orders",
    "SELECT ROUND(amount, 2) AS r, ABS(amount) AS a, FLOOR(amount) AS f FROM orders",
    "SELECT EXTRACT(YEAR FROM placed) AS y, DATE_TRUNC('month', placed) AS m, COUNT(*) AS n FROM orders GROUP BY 1, 2",
    "SELECT region, APPROX_DISTINCT(id) AS d, COUNT_IF(amount > 1) AS c FROM orders GROUP BY region",
    "WITH t AS (SELECT region, SUM(amount) AS s FROM orders GROUP BY region) SELECT * FROM t WHERE s > 10",
]

REFUSED = {
    "trino": [
        ("INSERT INTO orders SELECT * FROM orders", "sql_not_read_only"),
        ("SELECT * FROM TABLE(system.query(query => 'SELECT 1'))", "sql_function_not_allowed"),
        ("SET SESSION query_max_run_time = '1h'", "sql_not_read_only"),
        ("SELECT current_user AS u", "sql_function_not_allowed"),
    ],
    "bigquery": [
        ("INSERT INTO orders SELECT * FROM orders", "sql_not_read_only"),
        ("SELECT * FROM EXTERNAL_QUERY('connection', 'SELECT 1')", "sql_function_not_allowed"),
        ("SET x = 1", "sql_not_read_only"),
        ("SELECT SESSION_USER() AS u", "sql_function_not_allowed"),
    ],
    "snowflake": [
        ("DELETE FROM orders", "sql_not_read_only"),
        ("SELECT $1 FROM @my_stage/file.csv", "sql_not_read_only"),
        ("SELECT GET_PRESIGNED_URL(@my_stage, 'f.csv') AS u", "sql_function_not_allowed"),
        ("SET x = 1", "sql_not_read_only"),
        ("SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))", "sql_function_not_allowed"),
    ],
    "databricks": [
        ("INSERT INTO orders SELECT * FROM orders", "sql_not_read_only"),
        ("SELECT * FROM read_files('/etc/passwd')", "sql_function_not_allowed"),
        ("SELECT input_file_name() AS f FROM orders", "sql_function_not_allowed"),
        ("SELECT reflect('java.lang.System', 'getenv', 'HOME') AS h", "sql_function_not_allowed"),
        ("SELECT * FROM csv.`/etc/passwd`", "sql_not_read_only"),
        ("SET spark.sql.ansi.enabled = false", None),
        ("ADD JAR '/tmp/x.jar'", None),
    ],
}


@pytest.mark.parametrize("dialect", WAREHOUSES)
def test_a_warehouse_has_its_own_list_and_engine(dialect):
    from jupyter_analyst.sql.warehouse_engines import WAREHOUSES as ENGINES

    scalar, table = allowed_functions(dialect)
    shared, _ = allowed_functions("an-unlisted-dialect")
    assert scalar != shared and "count" in scalar and "sum" in scalar
    # A URL of the warehouse opens its engine, whose SQL is checked in this dialect.
    assert ENGINES[dialect].dialect == dialect


@pytest.mark.parametrize("dialect", WAREHOUSES)
@pytest.mark.parametrize("sql", ORDINARY, ids=range(len(ORDINARY)))
def test_ordinary_analysis_passes_in_each_warehouse_dialect(dialect, sql):
    prepared = prepare_sql(sql, schema=SCHEMA, dialect=dialect)
    assert "orders" in prepared.executable.lower()


@pytest.mark.parametrize(("dialect", "sql", "reason"), [(d, q, r) for d, cases in REFUSED.items() for q, r in cases])
def test_writes_files_sessions_and_settings_are_refused_in_each_warehouse_dialect(dialect, sql, reason):
    with pytest.raises(SqlRejected) as info:
        prepare_sql(sql, schema=SCHEMA, dialect=dialect)
    # A statement sqlglot cannot read in the dialect is refused as unreadable: never run.
    assert info.value.reason == reason if reason else info.value.reason in ("sql_not_read_only", "sql_parse_error")


@pytest.mark.parametrize(("url", "extra"), [
    ("trino://ann:secret@127.0.0.1:1/hive/default", "trino"),
    ("bigquery://project/dataset", "bigquery"),
    ("snowflake://ann:secret@account/db/schema", "snowflake"),
    ("databricks://token:secret@127.0.0.1:1?http_path=/sql/1.0/warehouses/x", "databricks"),
])
def test_a_warehouse_without_its_driver_says_which_extra_installs_it(url, extra):
    pytest.importorskip("sqlalchemy")
    with pytest.raises(SourceError) as info:
        open_source(url)
    if "no driver" not in info.value.message:
        pytest.skip(f"the {extra} driver is installed here: this checks the error without it")
    assert info.value.reason == "source_unreadable"
    assert f"jupyter-analyst[{extra}]" in info.value.hint
    assert "secret" not in info.value.message
