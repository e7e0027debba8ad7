"""The read-only guard and name checks, from a fixture file of accepted and refused SQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_analyst.errors import SqlRejected
from jupyter_analyst.sql import open_source, prepare_query

CASES = Path(__file__).parent / "fixtures" / "sql_guard_cases.sql"


def load_cases() -> list[tuple[str, str]]:
    cases, verdict, lines = [], None, []
    for line in [*CASES.read_text().splitlines(), ""]:
        if line.startswith("-- refuse:") or line.strip() == "-- accept":
            verdict = line.split(":", 1)[1].strip() if "refuse" in line else "accept"
            lines = []
        elif line.startswith("--"):
            continue
        elif line.strip():
            lines.append(line)
        elif verdict and lines:
            cases.append((verdict, "\n".join(lines)))
            verdict, lines = None, []
    return cases


CASE_LIST = load_cases()


@pytest.fixture(scope="module")
def source(sales_db):
    src = open_source(str(sales_db))
    yield src
    src.close()


def test_fixture_has_both_kinds():
    verdicts = [v for v, _ in CASE_LIST]
    assert verdicts.count("accept") >= 7 and len(verdicts) - verdicts.count("accept") >= 25


@pytest.mark.parametrize(("verdict", "sql"), CASE_LIST, ids=[s.splitlines()[0][:50] for _, s in CASE_LIST])
def test_case(source, verdict, sql):
    if verdict == "accept":
        prepared = prepare_query(sql, source)
        assert prepared.canonical and prepared.executable
    else:
        with pytest.raises(SqlRejected) as info:
            prepare_query(sql, source)
        assert info.value.reason == verdict, info.value.message


def test_refusal_explains_itself(source):
    with pytest.raises(SqlRejected) as info:
        prepare_query("WITH gone AS (DELETE FROM orders RETURNING *) SELECT * FROM gone", source)
    assert "DELETE" in info.value.message and info.value.hint


def test_unknown_names_come_with_suggestions(source):
    with pytest.raises(SqlRejected) as info:
        prepare_query("SELECT * FROM ordrs", source)
    assert info.value.suggestions[0] == "orders"
    with pytest.raises(SqlRejected) as info:
        prepare_query("SELECT o.revenu FROM orders AS o", source)
    assert info.value.reason == "unknown_column" and "revenue" in info.value.suggestions
    assert "Did you mean" in info.value.message


def test_a_source_of_files_is_read_through_its_views_never_by_file_functions(tmp_path):
    """A folder of CSV files is queried by table name; the file functions stay refused, and the
    engine would refuse them too (see tests/security/test_sql_engine.py)."""
    (tmp_path / "x.csv").write_text("a,b\n1,2\n")
    src = open_source(str(tmp_path))
    try:
        assert prepare_query("SELECT a, b FROM x", src).tables == ["x"]
        with pytest.raises(SqlRejected) as info:
            prepare_query(f"SELECT * FROM read_csv('{tmp_path / 'x.csv'}')", src)
        assert info.value.reason == "sql_function_not_allowed"
    finally:
        src.close()


def test_empty_and_non_string_sql(source):
    for bad in ("", "   ;  ", None):
        with pytest.raises(SqlRejected):
            prepare_query(bad, source)  # type: ignore[arg-type]


ACCEPTED = [sql for verdict, sql in CASE_LIST if verdict == "accept"]


@pytest.mark.parametrize("sql", ACCEPTED, ids=[s.splitlines()[0][:50] for s in ACCEPTED])
def test_accepted_queries_run_against_the_sample_database(source, sql, tmp_path):
    """What the guard lets through runs: through the query runner, to Parquet."""
    import asyncio

    from jupyter_analyst.sql import QueryRunner

    result = asyncio.run(QueryRunner(source).run_to_parquet(prepare_query(sql, source), tmp_path / "out.parquet"))
    assert result.rows > 0 and result.columns


def test_pivot_statements_are_queries(source, tmp_path):
    """DuckDB's PIVOT: one row per product, one column per region, as DuckDB computes it."""
    import asyncio

    import duckdb

    from jupyter_analyst.sql import QueryRunner

    sql = "PIVOT orders ON region_id USING SUM(revenue) GROUP BY product_id"
    prepared = prepare_query(sql, source)
    assert prepared.tables == ["orders"]
    # Equivalent spellings share a canonical form; another aggregate does not.
    again = prepare_query("pivot ORDERS on REGION_ID using sum(REVENUE) group by PRODUCT_ID", source)
    assert again.canonical == prepared.canonical
    assert prepare_query(sql.replace("SUM", "AVG"), source).canonical != prepared.canonical
    dest = tmp_path / "wide.parquet"
    result = asyncio.run(QueryRunner(source).run_to_parquet(prepared, dest))
    direct = source.conn.execute(sql)
    names, rows = [d[0] for d in direct.description], direct.fetchall()
    with duckdb.connect() as con:
        stored = con.execute("SELECT * FROM read_parquet(?)", [str(dest)])
        assert [d[0] for d in stored.description] == names
        assert sorted(stored.fetchall()) == sorted(rows)
    assert result.rows == len(rows) > 1 and names[0] == "product_id" and len(names) > 2


def test_analysis_failures_of_any_kind_are_refusals(source):
    """Whatever the SQL does to the parser or the checker, the answer is a SqlRejected."""
    cases = {
        # Deep enough for the pure-Python parser and for sqlglot's compiled build (sqlglotc).
        "SELECT " + "(" * 3000 + "1" + ")" * 3000: "sql_too_complex",
        "SELECT " + "- " * 20_000 + "1": "sql_too_complex",
        "SELECT * FROM (PIVOT orders ON region_id USING SUM(revenue)) AS p, (PIVOT regions ON country) AS q": None,
        "SELECT 'unterminated": "sql_parse_error",
        "SELECT \x00": None,
        "SELECT '\ud800' AS x": "invalid_unicode",
    }
    for sql, reason in cases.items():
        try:
            prepare_query(sql, source)
        except SqlRejected as exc:
            assert reason is None or exc.reason == reason, (sql[:40], exc.reason, exc.message)
            assert exc.message and len(exc.message) < 1_000
        else:
            assert reason is None, sql[:40]


def test_pivot_end_to_end_makes_a_dataset(analyst):
    """Through the loop: the model's PIVOT runs and its dataset enters the inventory."""
    from jupyter_analyst.testing import sql_step, text_step

    pivot = "PIVOT orders ON region_id USING SUM(revenue) GROUP BY product_id"
    unpivot = "UNPIVOT (SELECT order_id, revenue, quantity FROM orders) ON revenue, quantity INTO NAME metric VALUE amount"
    a = analyst({"turns": [{"steps": [sql_step(pivot, "wide"), sql_step(unpivot, "long"), text_step("done")]}]})
    out = a.run("pivot")
    assert out.status == "completed"
    results = a.of_type("tool_result")
    assert [r.status for r in results] == ["ok", "ok"], [r.result for r in results]
    assert results[0].result["columns"][0]["name"] == "product_id"
    assert results[1].result["rows"] == 2 * 2400
    assert out.artifacts["created"] == 2
