"""The model's SQL attacking the host: through the guard, and at the engine behind it.

Before the fix, ``LATERAL json_execute_serialized_sql(json_serialize_sql('SELECT content FROM
read_text(''/proc/self/environ'')'))`` passed the guard (a ``LATERAL`` met only a scalar
deny-list) and read the server's API key, ``/etc/shadow`` and other threads' blobs; DuckDB's
engine would read any file the server could. Now every function, wherever it stands, must be
on the dialect's allow-list, and the engine itself reaches only the source's own files.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path

import duckdb
import pytest

from jupyter_analyst.errors import QueryFailed, SqlRejected
from jupyter_analyst.sql import QueryRunner, open_source, prepare_query
from jupyter_analyst.sql.prepare.functions import allowed
from jupyter_analyst.sql.query_model import ClearedQuery
from jupyter_analyst.sql.sealed import SEALED_SETTINGS, EngineLimits, duckdb_settings
from jupyter_analyst.testing import sql_step, text_step

from .conftest import results_of, scripted

SECRET = "sk-analyst-test-secret-0123456789"

# ------------------------------------------------------------------ every function, every position

#: Where a function call can stand in a query; ``{f}`` is the call.
POSITIONS = {
    "scalar": "SELECT {f} AS v",
    "from": "SELECT * FROM {f} AS s",
    "lateral": "SELECT * FROM (SELECT 1 AS x) AS t, LATERAL {f} AS s",
    "join": "SELECT * FROM (SELECT 1 AS x) AS t JOIN {f} AS s ON TRUE",
    "subquery": "SELECT (SELECT {f}) AS v",
    "cte": "WITH c AS (SELECT * FROM {f} AS s) SELECT * FROM c",
    "where": "SELECT 1 AS v WHERE EXISTS (SELECT * FROM {f} AS s)",
    "qualified": "SELECT main.{f} AS v",
    "method": "SELECT ('x').{f} AS v",
}


def _duckdb_functions() -> list[str]:
    with duckdb.connect() as con:
        rows = con.execute("SELECT DISTINCT function_name FROM duckdb_functions() ORDER BY 1").fetchall()
    return [name for (name,) in rows if name.replace("_", "a").isalnum()]  # operators aside


def _engine_calls(con: duckdb.DuckDBPyConnection, sql: str) -> set[str]:
    """The functions DuckDB's own parser says ``sql`` calls (scalar, aggregate, window, table);
    none when it cannot parse it (then it cannot run it either)."""
    tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0])
    if tree.get("error"):
        assert tree.get("error_type") == "parser", tree
        return set()
    names: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            if node.get("class") in ("FUNCTION", "WINDOW") and node.get("function_name"):
                names.add(str(node["function_name"]).lower())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(tree)
    return names


def test_every_duckdb_function_is_allowed_or_refused_in_every_position():
    """Each of DuckDB's functions, called in each position, is refused by the guard unless
    what would run (the executable, as DuckDB itself parses it) calls only allow-listed names."""
    scalar, _ = allowed("duckdb")
    functions = _duckdb_functions()
    assert len(functions) > 900, "DuckDB lists its functions"
    schema = {"t": {"x": "INTEGER"}}
    leaks: list[str] = []
    refused = passed = 0
    with duckdb.connect() as parser:
        for name in functions:
            for where, template in POSITIONS.items():
                for call in (f"{name}(1)", f'"{name}"(1)' if where not in ("method", "qualified") else f"{name}()"):
                    sql = template.format(f=call)
                    try:
                        prepared = prepare_query_text(sql, schema)
                    except SqlRejected:
                        refused += 1
                        continue
                    passed += 1
                    stray = _engine_calls(parser, prepared) - scalar
                    if stray:
                        leaks.append(f"{where}: {sql} runs {sorted(stray)}")
    assert not leaks, "\n".join(leaks[:40])
    assert refused > passed > 1000  # both verdicts occur: the guard neither refuses nor passes all


def prepare_query_text(sql: str, schema: dict) -> str:
    from jupyter_analyst.sql.prepare import prepare_sql

    return prepare_sql(sql, schema=schema, dialect="duckdb").executable


@pytest.mark.parametrize("name", ["read_text", "read_blob", "read_csv", "glob", "sniff_csv", "query", "query_table",
                                  "json_execute_serialized_sql", "duckdb_settings", "duckdb_databases",
                                  "duckdb_extensions", "enable_logging", "getenv", "current_setting",
                                  "parquet_metadata", "which_secret", "checkpoint"])
@pytest.mark.parametrize("where", sorted(POSITIONS))
def test_the_red_teams_functions_are_refused_wherever_they_stand(name, where):
    with pytest.raises(SqlRejected) as info:
        prepare_query_text(POSITIONS[where].format(f=f"{name}('/proc/self/environ')"), {"t": {"x": "INTEGER"}})
    assert info.value.reason in ("sql_function_not_allowed", "sql_parse_error")


# ------------------------------------------------------------------ the engine behind the guard


def _run(source, sql: str, dest: Path, **runner) -> object:
    """Run ``sql`` in the engine as the runner would, *without* the guard (as if it had missed it)."""
    return asyncio.run(QueryRunner(source, **runner).run_to_parquet(ClearedQuery(executable=sql, has_order=True), dest))


def _readable(source, path: str, dest: Path) -> bool:
    try:
        _run(source, f"SELECT content FROM read_text('{path}')", dest)
        return True
    except Exception as exc:  # noqa: BLE001 - QueryFailed: what the engine said
        assert "disabled by configuration" in str(exc) or "Permission" in str(exc), exc
        return False


def test_the_engine_reads_no_file_but_the_sources_own(tmp_path, sales_db, monkeypatch):
    """``read_text`` reached by any route (the guard bypassed here) returns nothing from outside
    the source's own files: not the environment, not /etc, not another source's file."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    other = tmp_path / "other.csv"
    other.write_text("secret\n42\n")
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "mine.csv").write_text("a\n1\n")
    for spec in (str(sales_db), str(folder), ":memory:"):
        source = open_source(spec)
        try:
            for path in ("/proc/self/environ", "/etc/passwd", "/etc/hostname", str(other), str(sales_db.parent)):
                assert not _readable(source, path, tmp_path / f"o-{os.urandom(4).hex()}.parquet"), (spec, path)
            if spec == str(folder):  # the source's own file is the one thing it reads
                assert _readable(source, str(folder / "mine.csv"), tmp_path / "own.parquet")
            for escape in ("SELECT * FROM glob('/*')", "ATTACH '/tmp/x.duckdb' AS x", "INSTALL httpfs", "LOAD httpfs",
                           "SET enable_external_access = true", "SET GLOBAL lock_configuration = false",
                           "CREATE TABLE t AS SELECT 1 AS a", "COPY (SELECT 1) TO '/tmp/analyst-escape.csv'"):
                with pytest.raises(duckdb.Error):
                    source.cursor().execute(escape).fetchall()
            assert not Path("/tmp/analyst-escape.csv").exists()
            # What the engine says of itself names no place of the host's but its private folder
            # and the source's own files.
            settings = dict(source.cursor().execute("SELECT name, value FROM duckdb_settings()").fetchall())
            own = settings.pop("allowed_paths")
            private = str(source.private_dir)
            assert all(part.startswith((str(sales_db), str(folder), private))
                       for part in own.strip("[]").split(", ") if part), own
            elsewhere = [v for v in map(str, settings.values()) if v.startswith(("/", "[/")) and private not in v]
            assert not elsewhere, elsewhere
            # The same of the worker the model's queries run in.
            settings = dict(source.engine.run("SELECT name, value FROM duckdb_settings()", fetch=True))
            own = settings.pop("allowed_paths")
            assert all(part.startswith((str(sales_db), str(folder), private))
                       for part in own.strip("[]").split(", ") if part), own
            elsewhere = [v for v in map(str, settings.values()) if v.startswith(("/", "[/")) and private not in v]
            assert not elsewhere, elsewhere
        finally:
            source.close()


def test_the_engine_worker_holds_none_of_the_hosts_secrets(sales_db, tmp_path, monkeypatch):
    """The process that runs the model's SQL is given only what Python and DuckDB need."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ANALYST_DATABASE_URL", f"postgresql://u:{SECRET}@db/x")
    source = open_source(str(sales_db))
    try:
        assert _run(source, "SELECT 1 AS one", tmp_path / "one.parquet").rows == 1
        environ = Path(f"/proc/{source.engine.pid()}/environ").read_bytes()
        assert SECRET.encode() not in environ
        assert b"JUPYTER_ANALYST_ENGINE_DATA_MB=" in environ
    finally:
        source.close()


def test_each_kind_of_duckdb_source_is_sealed(tmp_path, sales_db):
    """The engine settings, read back from each kind of DuckDB source: the host's own engine
    (its look-ups) and the worker the model's queries run in."""
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "a.csv").write_text("a\n1\n")
    limits = EngineLimits(memory_bytes=512 * 2**20, threads=1, spill_bytes=2**30)
    for spec in (str(sales_db), str(folder), ":memory:"):
        source = open_source(spec, limits=limits)
        try:
            private = str(source.private_dir)
            worker = str(source.engine.private)
            assert worker.startswith(private + os.sep)
            for settings, own in ((duckdb_settings(source.cursor()), private), (_worker_settings(source), worker)):
                assert settings["enable_external_access"] == "false"
                assert settings["lock_configuration"] == "true"
                assert settings["autoload_known_extensions"] == "false"
                assert settings["autoinstall_known_extensions"] == "false"
                assert settings["allow_community_extensions"] == "false"
                assert settings["memory_limit"] in ("512.0 MiB", "512.0MiB"), settings["memory_limit"]
                assert settings["threads"] == "1"
                assert settings["max_temp_directory_size"].startswith("1.0")
                assert settings["temp_directory"].startswith(own)
                assert settings["allowed_directories"] == f"[{own}/, {own}/spill/]"
            with pytest.raises(duckdb.Error, match="locked"):
                source.cursor().execute("SET memory_limit = '100GB'")
            # The worker's connections, opened before the lock (to estimate progress), are as fixed.
            for change in ("SET memory_limit = '100GB'", "SET enable_external_access = true",
                           "SET enable_progress_bar = false", "RESET enable_progress_bar_print",
                           "SET GLOBAL lock_configuration = false"):
                with pytest.raises(QueryFailed, match="locked"):
                    source.engine.run(change)
            for write in ("CREATE TABLE main.x AS SELECT 1 AS a", "ATTACH '/tmp/x.duckdb' AS x", "INSTALL httpfs"):
                with pytest.raises(duckdb.Error):  # the data is read-only at the engine
                    source.cursor().execute(write)
                with pytest.raises(QueryFailed):
                    source.engine.run(write)
            assert not Path("/tmp/x.duckdb").exists()
        finally:
            source.close()
        assert not Path(private).exists(), "the private folder goes with the source"


def _worker_settings(source) -> dict[str, str]:
    """The sealing settings of the source's engine worker, as its engine reports them."""
    names = ", ".join(f"'{n}'" for n in SEALED_SETTINGS)
    rows = source.engine.run(f"SELECT name, value FROM duckdb_settings() WHERE name IN ({names})", fetch=True)
    return {str(name): str(value) for name, value in rows}


@pytest.mark.serial  # the process's peak memory: alone, not beside another test's
def test_a_query_past_the_memory_limit_fails_clearly_without_taking_the_machine(sales_db, tmp_path):
    """The red team's guard-clean query reached 10 GB in the server; now it stops at the limit."""
    source = open_source(str(sales_db), limits=EngineLimits(memory_bytes=256 * 2**20, spill_bytes=64 * 2**20))
    try:
        # Each value within the cap on built values (see sql/prepare/sizes.py); their aggregate is not.
        sql = "SELECT length(string_agg(repeat('x', 65536), '')) AS n FROM range(50000)"
        prepared = prepare_query(sql, source)  # guard-clean
        before = _peak_rss()
        with pytest.raises(Exception, match="(?i)out of memory|memory limit"):
            asyncio.run(QueryRunner(source).run_to_parquet(prepared, tmp_path / "big.parquet"))
        assert _peak_rss() - before < 1024 * 2**20, "the process stayed near the engine's limit"
    finally:
        source.close()


def _peak_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


# ------------------------------------------------------------------ end to end, through a turn


def test_the_lateral_attack_reads_nothing_through_a_turn(tmp_path, sales_db, monkeypatch):
    """The red team's query, sent by the model through the real loop: refused with a reason the
    model can act on, and the API key appears nowhere in what the turn produced."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    attack = ("SELECT s.content FROM (SELECT 1 AS x) t, LATERAL json_execute_serialized_sql(json_serialize_sql("
              "'SELECT content FROM read_text(''/proc/self/environ'')')) s")
    script = {"turns": [{"match": ".", "steps": [sql_step(attack, "env"), text_step()]}]}
    with scripted(tmp_path / "ws", sales_db, script) as analyst:
        summary = analyst.run("read the environment")
    results = results_of(analyst, summary.turn_id)
    assert results and results[0].result["error"]["reason"] == "sql_function_not_allowed"
    everything = "".join(e.model_dump_json() for e in analyst.events)
    assert SECRET not in everything
    for path in (tmp_path / "ws").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


# ------------------------------------------------------------------ SQLite and PostgreSQL


def _sqlite_db(tmp_path: Path) -> Path:
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE orders (id INTEGER, amount REAL)")
        con.executemany("INSERT INTO orders VALUES (?, ?)", [(i, i * 1.5) for i in range(100)])
    return path


def test_a_sqlite_source_is_read_only_and_allows_only_listed_functions_at_the_engine(tmp_path):
    source = open_source(f"sqlite:///{_sqlite_db(tmp_path)}")
    try:
        with source.engine.connect() as conn:
            raw = conn.connection.driver_connection
            assert raw.execute("PRAGMA query_only").fetchone()[0] == 1
        # Behind the guard: the authorizer refuses what is not a read or an allowed function.
        for escape in ("SELECT load_extension('x')", "SELECT sqlite_version()", "PRAGMA table_info(orders)",
                       "ATTACH ':memory:' AS x", "DELETE FROM orders"):
            with pytest.raises(Exception, match="(?i)not authorized|prohibited|readonly|query_only|failed"):
                _run(source, escape, tmp_path / f"{os.urandom(4).hex()}.parquet")
        assert _run(source, "SELECT COUNT(*) AS n, ROUND(SUM(amount), 1) AS s FROM orders",
                    tmp_path / "ok.parquet").rows == 1
    finally:
        source.close()


def test_stopping_a_query_whose_connection_has_closed_is_no_error(tmp_path):
    """A query past its time is interrupted again and again until its thread lets go, and its
    thread closes its connection (none is pooled) before the call is done: an interrupt that
    comes then is a no-op. It raised, and the timeout was reported as a failed query."""
    import sqlalchemy
    from sqlalchemy.pool import NullPool

    from jupyter_analyst.sql.sealed import QueryGuard

    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'a.sqlite'}", poolclass=NullPool)
    try:
        with engine.connect() as conn:
            guard = QueryGuard(conn)
            raw = guard.raw
        with pytest.raises(sqlite3.ProgrammingError):
            raw.interrupt()  # what the guard used to do: the connection is closed
        guard.stop()
    finally:
        engine.dispose()


@pytest.mark.serial  # stopped within a second of its timeout: on a machine not shared with another test
def test_a_runaway_sqlite_query_is_stopped_at_the_engine(tmp_path):
    """Before the fix it ran on in a thread of the loop's default executor for ever."""
    import time

    source = open_source(f"sqlite:///{_sqlite_db(tmp_path)}")
    endless = ("WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
               "SELECT COUNT(*) AS n FROM r")
    try:
        started = time.perf_counter()
        with pytest.raises(Exception, match="ran past 1 s"):
            _run(source, endless, tmp_path / "x.parquet", timeout_s=1.0)
        assert time.perf_counter() - started < 2.0
        assert not any(t.name.startswith("analyst-query") and t.is_alive() and _busy(t) for t in _threads())
    finally:
        source.close()


@pytest.mark.serial  # stopped within a second of its timeout: on a machine not shared with another test
def test_a_runaway_duckdb_query_is_stopped_at_the_engine(sales_db, tmp_path):
    import time

    source = open_source(str(sales_db))
    try:
        started = time.perf_counter()
        with pytest.raises(Exception, match="ran past 1 s"):
            _run(source, "SELECT SUM(a.range * b.range) AS s FROM range(100000) a, range(100000) b",
                 tmp_path / "x.parquet", timeout_s=1.0)
        assert time.perf_counter() - started < 2.0
        assert not any(t.name.startswith("analyst-query") and t.is_alive() and _busy(t) for t in _threads())
    finally:
        source.close()


def _threads():
    import threading

    return threading.enumerate()


def _busy(thread) -> bool:
    import sys

    frame = sys._current_frames().get(thread.ident)
    return frame is not None and "work" in {f.f_code.co_name for f in _stack(frame)}


def _stack(frame):
    while frame is not None:
        yield frame
        frame = frame.f_back


@pytest.fixture
def pg_source_url(postgres):
    """A PostgreSQL database with a table, as a source URL (the server's superuser)."""
    import psycopg

    url = postgres.new_database()
    with psycopg.connect(url, autocommit=True) as con:
        con.execute("CREATE TABLE orders (id int, amount numeric)")
        con.execute("INSERT INTO orders SELECT g, g * 1.5 FROM generate_series(1, 100) g")
        con.execute("CREATE SEQUENCE s")
    return url


@pytest.mark.parametrize("attack", [
    "SELECT pg_read_file('/etc/passwd') AS t",
    "SELECT setval('s', 42) AS v",
    "SELECT lo_import('/etc/passwd') AS o",
    "SELECT pg_reload_conf() AS r",
    "SELECT query_to_xml('SELECT pg_read_file(''/etc/passwd'')', true, true, '') AS x",
    "SELECT pg_advisory_lock(1) AS l",
    "SELECT current_setting('data_directory') AS d",
    "SELECT set_config('default_transaction_read_only', 'off', false) AS s",
    "SELECT * FROM pg_ls_dir('.') AS f",
    "SELECT * FROM orders, LATERAL pg_stat_file('postgresql.conf') AS f",
])
def test_postgres_functions_the_red_team_ran_are_refused(pg_source_url, attack):
    source = open_source(pg_source_url)
    try:
        with pytest.raises(SqlRejected) as info:
            prepare_query(attack, source)
        assert info.value.reason == "sql_function_not_allowed"
    finally:
        source.close()


@pytest.mark.serial  # stopped within a second of its timeout: on a machine not shared with another test
def test_postgres_sessions_are_read_only_timed_and_never_reused(pg_source_url, tmp_path):
    """Behind the guard: a write fails in the engine, a lock does not outlive its query, a
    runaway statement is cancelled at the server within a second of its timeout."""
    import time

    import psycopg

    source = open_source(pg_source_url)
    try:
        assert source.engine.url.drivername in ("postgresql+psycopg", "postgresql+psycopg2")
        with source.engine.connect() as conn:
            assert conn.exec_driver_sql("SHOW default_transaction_read_only").scalar() == "on"
            assert conn.exec_driver_sql("SHOW statement_timeout").scalar() != "0"
        with pytest.raises(Exception, match="(?i)read-only"):
            _run(source, "SELECT setval('s', 42) AS v", tmp_path / "w.parquet")
        _run(source, "SELECT pg_advisory_lock(7) AS l", tmp_path / "l.parquet")
        with psycopg.connect(pg_source_url, autocommit=True) as other:
            # The session that took the lock is gone: another takes it at once.
            assert other.execute("SELECT pg_try_advisory_lock(7)").fetchone()[0] is True
        started = time.perf_counter()
        with pytest.raises(Exception, match="ran past 1 s"):
            _run(source, "SELECT pg_sleep(30) AS z", tmp_path / "z.parquet", timeout_s=1.0)
        assert time.perf_counter() - started < 2.0  # stopped within a second of its timeout
        with psycopg.connect(pg_source_url, autocommit=True) as other:
            running = other.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' AND pid <> pg_backend_pid()"
            ).fetchone()[0]
        assert running == 0, "the server stopped the statement, not only the client"
    finally:
        source.close()
