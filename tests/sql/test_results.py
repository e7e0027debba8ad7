"""What a query's result says about itself: fingerprint as written, rows dropped at the cap, intent."""

from __future__ import annotations

import asyncio
import sqlite3

import duckdb
import nbformat
import pytest

from jupyter_analyst.artifacts import sha256_file
from jupyter_analyst.sql import QueryRunner, open_source, prepare_query
from jupyter_analyst.sql import query_runner as runner_module
from jupyter_analyst.testing import sql_step, text_step


def run(source, sql, dest, **kw):
    return asyncio.run(QueryRunner(source, **kw).run_to_parquet(prepare_query(sql, source), dest))


@pytest.fixture(scope="module")
def events_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("events") / "events.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE events AS SELECT range AS id, DATE '2024-01-01' + (range % 300)::INT AS day, "
                     "TIMESTAMP '2024-03-01 08:00:00' + INTERVAL (range) MINUTE AS seen_at FROM range(300000)")
    return path


def test_fingerprint_is_that_of_the_bytes_written(events_db, tmp_path):
    """Hashed on the way to the disk: the same as hashing the file afterwards, for every engine."""
    src = open_source(str(events_db))
    try:
        out = run(src, "SELECT id, day FROM events WHERE id % 3 = 0", tmp_path / "a.parquet")
        assert out.fingerprint == sha256_file(tmp_path / "a.parquet")
        assert out.size == (tmp_path / "a.parquet").stat().st_size and out.rows == 100_000
        assert not [p.name for p in tmp_path.iterdir() if p.name != "a.parquet"], "no pipe or temp file left"
    finally:
        src.close()
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sales (region TEXT, amount REAL)")
        conn.executemany("INSERT INTO sales VALUES (?, ?)", [("south", 2.0), ("north", 1.5)])
    lite = open_source(f"sqlite:///{db}")
    try:
        out = run(lite, "SELECT region, amount FROM sales", tmp_path / "s.parquet")
        assert out.fingerprint == sha256_file(tmp_path / "s.parquet") and out.rows == 2
    finally:
        lite.close()


def test_a_failed_query_leaves_no_pipe_or_partial_file(events_db, tmp_path):
    from jupyter_analyst.errors import QueryFailed

    src = open_source(str(events_db))
    try:
        with pytest.raises(QueryFailed) as info:
            run(src, "SELECT CAST('x' || id AS INTEGER) AS n FROM events", tmp_path / "bad.parquet")
        assert info.value.reason == "query_failed"
        assert list(tmp_path.iterdir()) == []
    finally:
        src.close()


def test_time_range_comes_from_the_written_file(events_db, tmp_path):
    src = open_source(str(events_db))
    try:
        out = run(src, "SELECT id, day, seen_at FROM events WHERE id >= 1000", tmp_path / "t.parquet")
        low_day, high_day, low_at, high_at = src.cursor().execute(
            "SELECT MIN(day), MAX(day), MIN(seen_at), MAX(seen_at) FROM events WHERE id >= 1000").fetchone()
        assert out.time_range == {"day": [str(low_day), str(high_day)], "seen_at": [str(low_at), str(high_at)]}
        assert out.time_range["seen_at"][0] == "2024-03-02 00:40:00"
    finally:
        src.close()


def test_a_time_zone_column_is_described_sampled_and_ranged(tmp_path):
    """Read by Arrow, not converted by DuckDB (which would need pytz for time zones)."""
    db = tmp_path / "tz.duckdb"
    with duckdb.connect(str(db)) as conn:
        conn.execute("CREATE TABLE t AS SELECT TIMESTAMPTZ '2024-01-01 10:00:00+00' + INTERVAL (range) HOUR AS ts "
                     "FROM range(10)")
    src = open_source(str(db))
    try:
        out = run(src, "SELECT ts FROM t", tmp_path / "tz.parquet")
        assert [c.type for c in out.columns] == ["TIMESTAMP WITH TIME ZONE"]
        assert out.sample[0] == {"ts": "2024-01-01T10:00:00+00:00"} and len(out.sample) == 10
        assert out.time_range == {"ts": ["2024-01-01 10:00:00+00:00", "2024-01-01 19:00:00+00:00"]}
    finally:
        src.close()


#: One column per type whose DuckDB name is read off the file's footer...
_PLAIN_TYPES = (
    "true AS b, 1::TINYINT AS ti, 1::SMALLINT AS si, 1::INTEGER AS i, 1::BIGINT AS bi, 1::HUGEINT AS hi, "
    "1::UTINYINT AS uti, 1::USMALLINT AS usi, 1::UINTEGER AS ui, 1::UBIGINT AS ubi, 1::FLOAT AS f, "
    "1::DOUBLE AS d, 1.5::DECIMAL(15,2) AS dec, 1.5::DECIMAL(4,1) AS dec4, 1.5::DECIMAL(38,10) AS dec38, "
    "'a' AS v, 'a'::BLOB AS bl, DATE '2020-01-01' AS dt, TIMESTAMP '2020-01-01 01:02:03' AS ts, "
    "TIMESTAMPTZ '2020-01-01 00:00:00+00' AS tstz, '2020-01-01'::TIMESTAMP_NS AS tsns, "
    "'2020-01-01'::TIMESTAMP_MS AS tsms, '2020-01-01'::TIMESTAMP_S AS tss, 'a'::ENUM('a', 'b') AS en, "
    "1::INTEGER AS \"Mixed Case\", 1.5 AS p"
)
#: ... and the rest, which DuckDB names by reading the file.
_OTHER_TYPES = ("TIME '01:02:03' AS tm, '01:02:03+00'::TIMETZ AS tmtz, INTERVAL 1 DAY AS iv, [1, 2] AS lst, "
                "{'x': 1, 'y': 'a'} AS st, MAP {'a': 1} AS mp, NULL AS nul")


@pytest.mark.parametrize("select", [_PLAIN_TYPES, f"{_PLAIN_TYPES}, {_OTHER_TYPES}", "1 AS a, 2 AS A"])
def test_columns_are_named_and_typed_as_duckdb_reads_the_file(tmp_path, select):
    """Named from the file's footer where the DuckDB type is certain, by DuckDB itself otherwise."""
    src = open_source(":memory:")
    try:
        out = run(src, f"SELECT {select}", tmp_path / "x.parquet")
        described = duckdb.connect().execute(
            f"DESCRIBE SELECT * FROM read_parquet('{tmp_path / 'x.parquet'}')").fetchall()
        assert [(c.name, c.type) for c in out.columns] == [(r[0], str(r[1])) for r in described]
    finally:
        src.close()


def test_row_cap_counts_what_it_dropped(events_db, tmp_path):
    src = open_source(str(events_db))
    try:
        out = run(src, "SELECT id FROM events", tmp_path / "c.parquet", row_cap=1000)
        assert (out.rows, out.truncated, out.dropped, out.row_cap) == (1000, True, 299_000, 1000)
        exact = run(src, "SELECT id FROM events WHERE id < 1000", tmp_path / "d.parquet", row_cap=1000)
        assert (exact.rows, exact.truncated, exact.dropped) == (1000, False, 0)
    finally:
        src.close()


def test_rows_past_the_cap_not_counted_in_time_are_still_reported(tmp_path, monkeypatch):
    """Counting the dropped rows stops at its allowance: the result says there were more."""
    db = tmp_path / "many.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
        conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(50_000)])
    monkeypatch.setattr(runner_module, "COUNT_ALLOWANCE_S", 0.0)
    src = open_source(f"sqlite:///{db}")
    try:
        out = run(src, "SELECT x FROM t", tmp_path / "m.parquet", row_cap=10)
        assert (out.rows, out.truncated, out.dropped) == (10, True, None)
    finally:
        src.close()
    monkeypatch.setattr(runner_module, "COUNT_ALLOWANCE_S", 60.0)
    src = open_source(f"sqlite:///{db}")
    try:
        out = run(src, "SELECT x FROM t", tmp_path / "n.parquet", row_cap=10)
        assert (out.rows, out.truncated, out.dropped) == (10, True, 49_990)
    finally:
        src.close()


def test_the_model_and_the_user_are_told_what_the_row_cap_dropped(analyst):
    """Never silent: the tool result, the progress line and the notebook say how many rows
    were dropped and how to get them."""
    import io

    from jupyter_analyst.progress import ProgressPrinter

    a = analyst({"turns": [{"steps": [sql_step("SELECT order_id FROM orders", "ids"), text_step("done")]}]})
    out = a.run("ids", row_cap=100)
    (result,) = a.of_type("tool_result")
    told = result.result
    assert told["rows"] == 100 and told["truncated"] is True
    assert told["row_cap"] == {"cap": 100, "kept": 100, "dropped": 2300}
    assert "2,300 rows past the row cap of 100 were dropped" in told["shown"]
    assert "narrow the query" in told["shown"] and "row_cap" in told["shown"]
    printed = io.StringIO()
    ProgressPrinter(printed)(result)
    assert "2,300 more dropped at the row cap" in printed.getvalue()
    nb = nbformat.read(out.notebook, as_version=4)
    texts = [o["data"]["text/plain"] for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
             if o.get("output_type") == "display_data"]
    assert any("ids: 100 rows" in t and "2,300 rows past the row cap" in t for t in texts), texts


def test_intent_is_read_when_the_sql_is_prepared_not_parsed_again(analyst, monkeypatch):
    """The host never parses a step's SQL: the shape comes from the worker that checked it."""
    import sqlglot

    parsed: list[str] = []
    real = sqlglot.parse_one

    def counting(sql, *args, **kwargs):
        parsed.append(sql)
        return real(sql, *args, **kwargs)

    monkeypatch.setattr(sqlglot, "parse_one", counting)
    sql = "SELECT region_id, SUM(revenue) AS total FROM orders WHERE quantity > 1 GROUP BY region_id"
    a = analyst({"turns": [{"steps": [sql_step(sql, "totals"), text_step("done")]}]})
    a.run("totals")
    (result,) = a.of_type("tool_result")
    assert result.result["intent"]["measures"] == ["total = SUM(revenue)"]
    assert result.result["intent"]["filters"] == ["quantity > 1"]
    assert result.result["intent_note"].startswith("from orders; measures: total = SUM(revenue); by: region_id")
    assert parsed == []


#: A result's fingerprint for each engine, as the writer made it when results were first
#: stored this way: a stored result is reused only while the same rows give the same bytes.
#: The bytes name the writer's version (Parquet's ``created_by``), so they are pinned per version.
KNOWN_FINGERPRINTS = {
    ("duckdb", "2.0.1"): "sha256:c9aa3cb6318cf65f8d00ae3cf5e2c660bb8feb7b962217598bbdf4a43f5ba82c",
    ("pyarrow", "26.0.1"): "sha256:4b8991d76f47e1fef828155c100cb1fa2103bdee80f42a0496734cfde96f6493",
}


def test_the_same_rows_keep_the_fingerprint_they_were_stored_with(tmp_path):
    import pyarrow

    db = tmp_path / "e.duckdb"
    with duckdb.connect(str(db)) as conn:
        conn.execute("CREATE TABLE events AS SELECT range AS id, (range * 1.25)::DECIMAL(18,2) AS price, "
                     "TIMESTAMPTZ '2024-03-10 01:30:00+00' + to_hours(range::INT) AS at, "
                     "CASE WHEN range % 3 = 0 THEN NULL ELSE 'r' || range END AS label FROM range(1000)")
    lite_db = tmp_path / "s.db"
    with sqlite3.connect(lite_db) as conn:
        conn.execute("CREATE TABLE sales (region TEXT, amount REAL, n INTEGER)")
        conn.executemany("INSERT INTO sales VALUES (?, ?, ?)",
                         [("south", 2.0, 1), ("north", 1.5, None), (None, 3.25, 7)])
    cases = [
        (("duckdb", duckdb.__version__), str(db), "SELECT * FROM events ORDER BY id"),
        (("pyarrow", pyarrow.__version__), f"sqlite:///{lite_db}", "SELECT region, amount, n FROM sales ORDER BY amount"),
    ]
    for i, (writer, spec, sql) in enumerate(cases):
        src = open_source(spec)
        try:
            first = run(src, sql, tmp_path / f"first-{i}.parquet").fingerprint
            again = run(src, sql, tmp_path / f"again-{i}.parquet").fingerprint
            assert again == first, f"{writer}: the same bytes each run"
        finally:
            src.close()
        if writer in KNOWN_FINGERPRINTS:  # another version of the writer: its own bytes
            assert first == KNOWN_FINGERPRINTS[writer], writer
