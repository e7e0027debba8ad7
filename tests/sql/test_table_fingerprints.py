"""A table's fingerprint as a SQL step records it: its rows counted and, on DuckDB, hashed,
through the SQL check and the sealed engine; a name that is not a table is never queried."""

from __future__ import annotations

import asyncio
import sqlite3

import duckdb

from jupyter_analyst.sql import SqlPreparer, open_source, table_prints


def prints_of(spec: str, tables: list[str], folder) -> list:
    source = open_source(spec)
    try:
        return asyncio.run(table_prints(tables, source, preparer=SqlPreparer(), folder=folder))
    finally:
        source.close()


def test_the_hash_follows_the_rows_not_their_order(tmp_path):
    made = {}
    for name, sql in [("ordered", "SELECT i AS id, i * 2 AS v FROM range(1, 101) t(i) ORDER BY i"),
                      ("shuffled", "SELECT i AS id, i * 2 AS v FROM range(1, 101) t(i) ORDER BY v DESC"),
                      ("one value", "SELECT i AS id, CASE WHEN i = 7 THEN 0 ELSE i * 2 END AS v FROM range(1, 101) t(i)")]:
        db = tmp_path / f"{name}.duckdb"
        with duckdb.connect(str(db)) as con:
            con.execute(f"CREATE TABLE t AS {sql}")
        (made[name],) = prints_of(str(db), ["t"], tmp_path / "f")
    assert made["ordered"].rows == made["one value"].rows == 100
    assert made["ordered"].content == made["shuffled"].content != made["one value"].content
    assert made["ordered"].hashed_by.startswith("duckdb ") and made["ordered"].note is None


def test_elsewhere_the_rows_are_counted_and_it_says_the_content_is_not_hashed(tmp_path):
    db = tmp_path / "shop.sqlite"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE sales (amount INTEGER)")
        con.executemany("INSERT INTO sales VALUES (?)", [(1,), (2,), (3,)])
    (sales,) = prints_of(f"sqlite:///{db}", ["sales"], tmp_path / "f")
    assert (sales.rows, sales.content, sales.hashed_by) == (3, None, None)
    assert sales.note == "rows only: the content is not hashed on sqlite sources"


def test_a_name_that_is_not_a_table_of_the_source_is_refused_unrun(tmp_path):
    db = tmp_path / "t.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
    names = ["read_text('/etc/passwd')", "/etc/passwd", 't" UNION ALL SELECT 1 --', "T"]
    got = prints_of(str(db), names, tmp_path / "f")
    assert [(p.table, p.rows, p.note) for p in got[:3]] == [(n, None, "refused: not a table of the source")
                                                           for n in names[:3]]
    assert (got[3].table, got[3].rows) == ("t", 1)  # the source's own name for it


def test_a_table_is_measured_once_while_its_data_stays_the_same(tmp_path):
    db = tmp_path / "t.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
    source = open_source(str(db))
    try:
        first = asyncio.run(table_prints(["t"], source, preparer=SqlPreparer(), folder=tmp_path / "f"))
        again = asyncio.run(table_prints(["t"], source, preparer=SqlPreparer(), folder=tmp_path / "f"))
    finally:
        source.close()
    assert again[0] is first[0] and first[0].rows == 1  # the second step paid nothing
    with duckdb.connect(str(db)) as con:
        con.execute("INSERT INTO t VALUES (2)")
    (changed,) = prints_of(str(db), ["t"], tmp_path / "f")
    assert changed.rows == 2 and changed.content != first[0].content
