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


def test_file_functions_allowed_when_the_source_allows_them(sales_db, tmp_path):
    csv = tmp_path / "x.csv"
    csv.write_text("a,b\n1,2\n")
    src = open_source(str(sales_db), allow_file_functions=True)
    try:
        from jupyter_analyst.sql.guard import check_read_only
        import sqlglot

        check_read_only(sqlglot.parse_one(f"SELECT * FROM read_csv('{csv}')", read="duckdb"), allow_file_functions=True)
        with pytest.raises(SqlRejected):
            check_read_only(sqlglot.parse_one("DELETE FROM orders"), allow_file_functions=True)
    finally:
        src.close()


def test_empty_and_non_string_sql(source):
    for bad in ("", "   ;  ", None):
        with pytest.raises(SqlRejected):
            prepare_query(bad, source)  # type: ignore[arg-type]
