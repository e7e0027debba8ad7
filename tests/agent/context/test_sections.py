"""The schema section as the model reads it: every table's exact row count, and notes on
what a model would misread (a timestamp stored as text, a name two tables use for different
values)."""

from __future__ import annotations

import duckdb
import pytest

from jupyter_analyst.testing import ScriptedModelServer, TurnRunner, text_step


def system_prompt(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "system")


@pytest.fixture
def flights_db(tmp_path):
    """A small nycflights13: flights all in 2013, planes built from 1956, weather's time as text."""
    db = tmp_path / "flights.duckdb"
    with duckdb.connect(str(db)) as conn:
        conn.execute("""CREATE TABLE flights AS SELECT 2013 AS year, 1 + i % 12 AS month, 1 + i % 23 AS hour,
                        'N' || (i % 50) AS tailnum, i * 1.5 AS dep_delay FROM range(1000) t(i)""")
        conn.execute("""CREATE TABLE planes AS SELECT 'N' || i AS tailnum, 1956 + i AS year,
                        'BOEING' AS manufacturer FROM range(58) t(i)""")
        conn.execute("""CREATE TABLE weather AS SELECT 2013 AS year, i % 24 AS hour,
                        strftime(TIMESTAMP '2013-01-01 00:00:00' + INTERVAL (i) HOUR, '%Y-%m-%d %H:%M:%S') AS time_hour,
                        'EWR' AS origin FROM range(240) t(i)""")
    return db


def test_the_model_reads_row_counts_and_notes_on_the_traps(tmp_path, flights_db):
    with ScriptedModelServer({"turns": [{"steps": [text_step("[scripted] ok")]}]}) as server:
        assert TurnRunner(tmp_path / "ws", server, flights_db).run("how are we doing?").status == "completed"
        system = system_prompt(server.requests[0])
    assert "- flights (1,000 rows): year INTEGER, month BIGINT" in system
    # Its size class, by its largest table's count; small data needs no rule about where to aggregate.
    assert "\nSize: small (largest table 1,000 rows).\nTables:" in system and "aggregate, filter" not in system
    assert "- planes (58 rows): tailnum VARCHAR, year BIGINT, manufacturer VARCHAR" in system
    assert "- weather (240 rows): " in system
    notes = system.split("Notes on the data:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert ("- weather.time_hour is text holding timestamps (e.g. '2013-01-01 00:00:00' in its first rows): "
            "cast or parse it before comparing or grouping by time") in notes
    # planes.year is not flights.year: said with the ranges seen, for every table holding it.
    assert "- year differs between tables (check before joining on it): flights.year 2013..2013; planes.year 1956..2013; weather.year 2013..2013" in notes
    # Same-named columns with the same kind of values are no trap: no note (hour 1-23 beside 0-23,
    # tailnum a text key in both tables).
    assert not [n for n in notes if n.startswith(("- hour", "- tailnum"))]


def test_a_changed_source_is_counted_again(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "sales.csv").write_text("day,amount\n2025-01-01,1\n2025-01-02,2\n")
    script = {"turns": [{"steps": [text_step("[scripted] one")]}, {"steps": [text_step("[scripted] two")]}]}
    with ScriptedModelServer(script) as server:
        runner = TurnRunner(tmp_path / "ws", server, data)
        runner.run("how many sales?")
        (data / "sales.csv").write_text("day,amount\n2025-01-01,1\n2025-01-02,2\n2025-01-03,3\n")
        runner.run("and now?")
        first, second = (system_prompt(r) for r in server.requests)
    assert "- sales (2 rows): " in first
    assert "- sales (3 rows): " in second


def test_many_date_columns_are_noted_within_a_bound(tmp_path):
    db = tmp_path / "wide.duckdb"
    with duckdb.connect(str(db)) as conn:
        days = ", ".join(f"'2025-01-0{1 + n % 9}' AS day{n:02d}" for n in range(30))
        conn.execute(f"CREATE TABLE wide AS SELECT {days}")
    with ScriptedModelServer({"turns": [{"steps": [text_step("[scripted] ok")]}]}) as server:
        TurnRunner(tmp_path / "ws", server, db).run("what is in there?")
        system = system_prompt(server.requests[0])
    notes = system.split("Notes on the data:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert len(notes) == 12 and notes[0].startswith("- wide.day00 is text holding dates")
    # Every column is still named: the last line names those not noted in full.
    assert notes[-1] == "- also text holding dates or timestamps: " + ", ".join(f"wide.day{n:02d}" for n in range(11, 30))


def test_a_large_source_is_said_to_be_large_and_its_rows_to_be_aggregated_in_sql(tmp_path):
    """Past 10,000,000 rows in a table (by DuckDB's catalogue, which the host reads instead of
    counting), the model is told the size class and that aggregation belongs in SQL."""
    db = tmp_path / "events.duckdb"
    with duckdb.connect(str(db)) as conn:
        conn.execute("CREATE TABLE events AS SELECT range AS id FROM range(10000001)")
        conn.execute("CREATE TABLE kinds AS SELECT range AS kind FROM range(3)")
    with ScriptedModelServer({"turns": [{"steps": [text_step("[scripted] ok")]}]}) as server:
        TurnRunner(tmp_path / "ws", server, db).run("how many events?")
        system = system_prompt(server.requests[0])
    assert ("\nSize: large (largest table about 10,000,001 rows): aggregate, filter and join in SQL; "
            "fetch only the rows the answer needs.\n") in system
    assert "- events (about 10,000,001 rows, the engine's estimate): id BIGINT" in system
    assert "- kinds (3 rows): kind BIGINT" in system
