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



def test_a_table_past_a_million_rows_by_the_catalogue_is_never_counted_or_read_whole(postgres):
    """PostgreSQL's own estimate (``pg_class.reltuples``) is said for a table it puts past
    EXACT_COUNT_MAX, by the outline, ``describe_table`` and ``list_tables`` alike: none of them
    runs ``count(*)`` or ``min``/``max`` over it (a count would say 2,000: the estimate is set
    to 50,000,000 in the catalogue, where ANALYZE would put it), and its sample is 5 rows."""
    import sqlalchemy

    url = postgres.new_database()
    engine = sqlalchemy.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE events (id integer, kind text) WITH (autovacuum_enabled = false)")
        conn.exec_driver_sql("INSERT INTO events SELECT g, 'k' || mod(g, 3) FROM generate_series(1, 2000) g")
        conn.exec_driver_sql("CREATE TABLE kinds (id integer, label text) WITH (autovacuum_enabled = false)")
        conn.exec_driver_sql("INSERT INTO kinds SELECT g, 'label ' || g FROM generate_series(1, 3) g")
        conn.exec_driver_sql("ANALYZE kinds")
        # The catalogue's estimate of a large table, as the superuser may set it.
        conn.exec_driver_sql("UPDATE pg_class SET reltuples = 5e7 WHERE relname = 'events'")
    engine.dispose()
    source = open_source(url)
    try:
        assert source.row_estimates() == {"events": 50_000_000, "kinds": 3}
        outline = source_outline(source)
        events, kinds = outline.tables["events"], outline.tables["kinds"]
        assert (events.rows, events.estimated, events.ranges) == (50_000_000, True, {})
        assert (kinds.rows, kinds.estimated) == (3, False)  # small: counted exactly
        assert (outline.size, outline.largest) == ("large", 50_000_000)
        # `id` is shared, but only the counted table's range was read: no note from one range.
        assert "id" in kinds.ranges and outline.shared == []
        described = source.describe_table("events")
        assert (described.rows, described.rows_estimated, len(described.sample)) == (50_000_000, True, 5)
        listed = {t.name: (t.rows, t.rows_estimated) for t in source.list_tables()}
        assert listed == {"events": (50_000_000, True), "kinds": (3, False)}
    finally:
        source.close()


def test_sqlite_estimates_come_from_analyze_only(tmp_path):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, placed TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [(i, "2024-03-01") for i in range(1, 1201)])
        conn.execute("CREATE INDEX placed ON orders (placed)")
    source = open_source(str(path))
    try:
        assert source.row_estimates() == {}  # never analysed: no estimate, the table is counted
        assert (source_outline(source).size, source_outline(source).largest) == ("small", 1200)
    finally:
        source.close()
    with sqlite3.connect(path) as conn:
        conn.execute("ANALYZE")
    source = open_source(str(path))
    try:
        assert source.row_estimates() == {"orders": 1200}
    finally:
        source.close()


def test_a_source_is_unknown_in_size_when_a_table_was_not_counted(sales_db):
    source = open_source(str(sales_db))
    try:
        counted = read_outline(source, source.schema())
        assert counted.size == "small" and counted.largest == 2400
        # A source with more tables than were read in time cannot be said small.
        assert read_outline(source, source.schema(), budget_s=0).size == "unknown"
    finally:
        source.close()
