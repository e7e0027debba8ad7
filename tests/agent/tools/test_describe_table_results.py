"""What the model is told of a table by ``describe_table``, read from the request it receives
next: a column's nullability only where it tells something (a ``NOT NULL`` column); a long
sample value cut, saying so and its length."""

from __future__ import annotations

import json

import duckdb

from jupyter_analyst.testing import ScriptedModelServer, TurnRunner, call_step, text_step

DOCUMENT = "{" + ", ".join(f'"field_{i}": "{"v" * 30}"' for i in range(100)) + "}"  # about 4 KB of JSON


def build_documents(path):
    """A table whose sample holds a 4 KB JSON document, a long list and a short value."""
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE docs AS SELECT ?::VARCHAR AS body, range(0, 2000) AS ids, 'short' AS tag",
                     [DOCUMENT])
    return path


def told(server) -> dict:
    tool = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
    return json.loads(tool[-1]["content"])


def test_a_table_without_declared_constraints_says_nothing_of_nulls(analyst):
    a = analyst({"turns": [{"steps": [call_step("describe_table", table="orders"), text_step()]}]})
    assert a.run("what is in orders?").status == "completed"
    result = told(a.server)
    assert [c["name"] for c in result["columns"]][:2] == ["order_id", "order_date"]
    assert all(set(c) == {"name", "type"} for c in result["columns"])
    assert "nullable" not in json.dumps(result)


def test_a_not_null_column_is_said_to_be_one(tmp_path):
    path = tmp_path / "keys.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE accounts (id INTEGER NOT NULL, owner VARCHAR NOT NULL, note VARCHAR)")
        conn.execute("INSERT INTO accounts VALUES (1, 'ann', NULL), (2, 'bo', 'vip')")
    server = ScriptedModelServer(
        {"turns": [{"steps": [call_step("describe_table", table="accounts"), text_step()]}]}).start()
    try:
        assert TurnRunner(tmp_path / "ws", server, path).run("what is in accounts?").status == "completed"
        columns = told(server)["columns"]
    finally:
        server.stop()
    assert columns == [{"name": "id", "type": "INTEGER", "nullable": False},
                       {"name": "owner", "type": "VARCHAR", "nullable": False},
                       {"name": "note", "type": "VARCHAR"}]


def test_a_database_through_sqlalchemy_says_its_not_null_columns_too(tmp_path):
    import sqlite3

    from jupyter_analyst.sql import open_source

    path = tmp_path / "keys.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE accounts (id INTEGER NOT NULL, note TEXT)")
    source = open_source(f"sqlite:///{path}")
    try:
        columns = source.describe_table("accounts").columns
    finally:
        source.close()
    assert [(c.name, c.nullable) for c in columns] == [("id", False), ("note", None)]


def test_a_long_sample_value_is_cut_saying_its_whole_length(tmp_path):
    path = build_documents(tmp_path / "docs.duckdb")
    server = ScriptedModelServer(
        {"turns": [{"steps": [call_step("describe_table", table="docs"), text_step()]}]}).start()
    try:
        assert TurnRunner(tmp_path / "ws", server, path).run("what is in docs?").status == "completed"
        row = told(server)["sample"][0]
    finally:
        server.stop()
    assert row["tag"] == "short"
    assert row["body"] == DOCUMENT[:200] + f"... (cut here: {len(DOCUMENT):,} characters in all)"
    assert len(row["ids"]) < 250 and row["ids"].endswith(" characters in all)")  # a LIST, cut as its JSON


def test_an_engine_estimate_of_rows_is_printed_and_summarized_as_one():
    """describe_table of a table its engine does not count: the CLI's progress line and the
    summarizer's reading say "about 12,000,000 rows (estimate)", never a bare count."""
    import io

    from jupyter_analyst.agent.memory.summarizer import _result_text
    from jupyter_analyst.agent.tools.metadata import DescribeTableResult
    from jupyter_analyst.events import ToolResult
    from jupyter_analyst.progress import ProgressPrinter

    said = "about 12,000,000 rows (estimate)"
    for estimated, words in ((True, said), (False, "12,000,000 rows")):
        result = DescribeTableResult(name="events", columns=[], rows=12_000_000, rows_estimated=estimated,
                                     sample=[]).model_dump()
        printed = io.StringIO()
        ProgressPrinter(printed)(ToolResult(call_id="call_1", tool="describe_table", status="ok", result=result,
                                            duration_s=0.01))
        assert f"ok (0.01s, {words})" in printed.getvalue(), printed.getvalue()
        assert f"events ({words})" in _result_text("describe_table", result)
    assert said not in _result_text("describe_table", DescribeTableResult(
        name="events", columns=[], rows=12_000_000, sample=[]).model_dump())
