"""What the host reads of a source for the schema section: exact counts through the sealed
engine, each look-up stopped in the engine past its time, nothing stated it did not read."""

from __future__ import annotations

import sqlite3
import time

from jupyter_analyst.sql import open_source
from jupyter_analyst.sql.schema_outline import probe, read_outline, source_outline


def test_a_look_up_past_its_time_is_stopped_in_the_engine_and_gives_no_figure(sales_db):
    source = open_source(str(sales_db))
    try:
        started = time.monotonic()
        assert probe(source, "SELECT max(hash(a + b)) FROM range(100000000) x(a), range(100000) y(b)", 0.3) is None
        assert time.monotonic() - started < 5
        # The source's engine still answers afterwards.
        assert probe(source, "SELECT count(*) FROM orders") == [(2400,)]
    finally:
        source.close()


def test_tables_not_read_within_the_budget_get_no_figures(sales_db):
    source = open_source(str(sales_db))
    try:
        outline = read_outline(source, source.schema(), budget_s=0)
        assert outline.tables == {} and outline.shared == []
    finally:
        source.close()


def test_a_sqlite_source_is_outlined_through_its_read_only_engine(tmp_path):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER, placed TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [(i, f"2024-03-{i:02d}") for i in range(1, 11)])
        conn.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
        conn.executemany("INSERT INTO customers VALUES (?, ?)", [(i, f"c{i}") for i in range(500, 900)])
    source = open_source(str(path))
    try:
        outline = source_outline(source)
        assert outline.tables["orders"].rows == 10 and outline.tables["customers"].rows == 400
        assert outline.tables["orders"].date_text == {"placed": "2024-03-01"}
        assert outline.tables["customers"].date_text == {}
        # Two `id`s that share no value range: noted with what was seen.
        assert outline.shared == ["id differs between tables (check before joining on it): customers.id 500..899; orders.id 1..10"]
    finally:
        source.close()


def test_a_live_database_is_counted_and_says_when(postgres):
    import sqlalchemy

    url = postgres.new_database()
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE flights AS SELECT 2013 AS year, g AS hour FROM generate_series(0, 22) g")
        conn.exec_driver_sql("CREATE TABLE planes AS SELECT 1956 + g AS year, 'N' || g AS tailnum, "
                             "'2013-01-0' || (1 + mod(g, 9)) AS seen FROM generate_series(0, 57) g")
    engine.dispose()
    source = open_source(url)
    try:
        outline = source_outline(source)
        assert outline.counted_at is not None and outline.counted_at.endswith("UTC")
        assert outline.tables["flights"].rows == 23 and outline.tables["planes"].rows == 58
        assert outline.tables["planes"].date_text == {"seen": "2013-01-01"}
        assert outline.shared == ["year differs between tables (check before joining on it): flights.year 2013..2013; planes.year 1956..2013"]
    finally:
        source.close()

