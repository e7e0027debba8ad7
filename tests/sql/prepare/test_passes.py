"""The passes of ``sql/prepare``, from fixture files of accepted and refused SQL.

One file per pass's module (``tests/fixtures/sql/prepare/<module>.sql``): each case is run
through ``prepare_query`` against the sample database; an accepted one must give its
canonical text, a refused one its reason, refused on its way through that module.
"""

from __future__ import annotations

import ast
import difflib
import re
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_analyst.errors import SqlRejected
from jupyter_analyst.sql import open_source, prepare_query
from jupyter_analyst.sql.prepare import prepare_sql
from jupyter_analyst.sql.prepare.parse import parse_one

FIXTURES = Path(__file__).parents[2] / "fixtures" / "sql" / "prepare"
MODULES = ("parse", "guard", "functions", "sizes", "qualify", "pivot", "canonical")


@dataclass(frozen=True)
class Case:
    """One fixture case: ``verdict`` is ``accept`` or the refusal's reason."""

    module: str
    verdict: str
    sql: str
    label: str = ""
    canonical: str | None = None

    @property
    def id(self) -> str:
        return f"{self.module}: {self.label or self.sql.splitlines()[0][:50]}"


def load_cases(path: Path) -> list[Case]:
    """A fixture file's cases: ``-- refuse: <reason>`` or ``-- accept[: <label>]``, the SQL up
    to the next blank line, and for an accepted one ``-- canonical: <text>``; other ``--``
    lines are comments."""
    cases: list[Case] = []
    head: tuple[str, str] | None = None
    lines: list[str] = []
    canonical: str | None = None
    for line in [*path.read_text().splitlines(), ""]:
        if line.startswith("-- refuse:"):
            head, lines, canonical = (line.split(":", 1)[1].strip(), ""), [], None
        elif line.startswith("-- accept"):
            head, lines, canonical = ("accept", line.partition(":")[2].strip()), [], None
        elif line.startswith("-- canonical:"):
            canonical = line.split(":", 1)[1].strip()
        elif line.startswith("--"):
            continue
        elif line.strip():
            lines.append(line)
        elif head and lines:
            cases.append(Case(path.stem, head[0], "\n".join(lines), head[1], canonical))
            head, lines = None, []
    return cases


CASE_LIST = [case for module in MODULES for case in load_cases(FIXTURES / f"{module}.sql")]
ACCEPTED = [case for case in CASE_LIST if case.verdict == "accept"]
REFUSED = [case for case in CASE_LIST if case.verdict != "accept"]


@pytest.fixture(scope="module")
def source(sales_db):
    src = open_source(str(sales_db))
    yield src
    src.close()


def test_every_pass_module_has_its_fixture_with_both_kinds():
    assert sorted(p.stem for p in FIXTURES.glob("*.sql")) == sorted(MODULES)
    verdicts = [case.verdict for case in CASE_LIST]
    assert verdicts.count("accept") >= 7 and len(verdicts) - verdicts.count("accept") >= 25
    assert all(case.canonical for case in ACCEPTED), [c.id for c in ACCEPTED if not c.canonical]
    assert all(case.canonical is None for case in CASE_LIST if case.verdict != "accept")


def _modules_refusing(exc: SqlRejected) -> set[str]:
    """The modules of ``sql/prepare`` the refusal was raised through."""
    names: set[str] = set()
    while exc is not None:
        for frame in traceback.extract_tb(exc.__traceback__):
            path = Path(frame.filename)
            if path.parent.name == "prepare" and path.parent.parent.name == "sql":
                names.add(path.stem)
        exc = exc.__context__
    return names


@pytest.mark.parametrize("case", CASE_LIST, ids=[case.id for case in CASE_LIST])
def test_case(source, case):
    if case.verdict == "accept":
        prepared = prepare_query(case.sql, source)
        assert prepared.canonical == case.canonical
        assert prepared.executable
    else:
        with pytest.raises(SqlRejected) as info:
            prepare_query(case.sql, source)
        assert info.value.reason == case.verdict, info.value.message
        assert case.module in _modules_refusing(info.value)


def test_canonical_text_keeps_what_changes_a_result_and_drops_the_rest():
    """``canonical.sql``: every variant of the base query has its text, or another."""
    cases = load_cases(FIXTURES / "canonical.sql")
    (base,) = [case.canonical for case in cases if case.label == "base"]
    same = [case for case in cases if case.label.startswith("same as base")]
    different = [case for case in cases if case.label.startswith("not as base")]
    assert len(same) >= 6 and len(different) >= 4 and len(cases) == 1 + len(same) + len(different)
    assert all(case.canonical == base for case in same), [c.label for c in same if c.canonical != base]
    assert all(case.canonical != base for case in different), [c.label for c in different if c.canonical == base]


@pytest.mark.parametrize("case", REFUSED, ids=[case.id for case in REFUSED])
def test_a_query_is_cleared_to_start_only_once_nothing_can_refuse_it_but_its_columns(source, case):
    """The passes that refuse what must never run (one statement, read-only, allowed
    functions, known tables) come before the query is cleared; its columns are checked
    after, while it may already run."""
    cleared = []
    with pytest.raises(SqlRejected) as info:
        prepare_sql(case.sql, schema=source.schema(), dialect=source.dialect, on_cleared=cleared.append)
    assert info.value.reason == case.verdict
    assert len(cleared) == (1 if case.verdict == "unknown_column" else 0)


def test_canonical_text_is_stable(source):
    (base,) = [case.sql for case in load_cases(FIXTURES / "canonical.sql") if case.label == "base"]
    a = prepare_query(base, source).canonical
    assert a == prepare_query(base, source).canonical
    assert "_t0" in a and '"orders"' in a


def test_transpiled_to_the_source_dialect(tmp_path):
    import sqlite3

    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE sales (region TEXT, amount REAL)")
        conn.executemany("INSERT INTO sales VALUES (?, ?)", [("north", 1.5), ("south", 2.0), ("north", 3.0)])
    src = open_source(f"sqlite:///{db}")
    try:
        assert src.dialect == "sqlite"
        prepared = prepare_query("SELECT region, CAST(SUM(amount) AS DOUBLE) AS total FROM sales GROUP BY region", src)
        assert "DOUBLE" not in prepared.executable.upper()  # SQLite spells it REAL
    finally:
        src.close()


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


def test_an_unknown_qualified_column_is_looked_for_in_its_own_table_only(source):
    with pytest.raises(SqlRejected) as info:
        prepare_query("SELECT p.name, SUM(o.revenue) AS revenue FROM orders o "
                      "JOIN products p ON o.product_id = p.product_id GROUP BY 1", source)
    refusal = info.value
    products = list(source.schema()["products"])
    assert refusal.reason == "unknown_column" and "in 'products'." in refusal.message and "'orders'" not in refusal.message
    # Each of its columns once, the closest first; nothing of orders; no pointer to what it lists.
    assert sorted(refusal.suggestions) == sorted(products) and len(set(refusal.suggestions)) == len(refusal.suggestions)
    similarity = [difflib.SequenceMatcher(None, "name", c).ratio() for c in refusal.suggestions]
    assert similarity == sorted(similarity, reverse=True) and refusal.hint is None
    # An unqualified one still looks in every table the query reads, each column once.
    with pytest.raises(SqlRejected) as info:
        prepare_query("SELECT zzzz FROM orders o JOIN products p ON o.product_id = p.product_id", source)
    assert info.value.suggestions.count("product_id") == 1


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


@pytest.mark.parametrize("case", ACCEPTED, ids=[case.id for case in ACCEPTED])
def test_accepted_queries_run_against_the_sample_database(source, case, tmp_path):
    """What the guard lets through runs: through the query runner, to Parquet."""
    import asyncio

    from jupyter_analyst.sql import QueryRunner

    result = asyncio.run(QueryRunner(source).run_to_parquet(prepare_query(case.sql, source), tmp_path / "out.parquet"))
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


@pytest.mark.parametrize(("sql", "near", "line", "column"), [
    ("selec * fro orders", "selec", 1, 1),                      # read by sqlglot as an alias
    ("orders", "orders", 1, 1),                                 # a bare name
    ("SELEC region FROM orders", "SELEC", 1, 1),                # a typo in a keyword: where it is
    ("selec * fro orders limit 5", "selec", 1, 1),              # not at a later word sqlglot stops at
    ("SELECT * FRM orders", "orders", 1, 14),
    ("SELECT region FROM orders\nWHERE (revenue > 1", "1", 2, 18),  # unbalanced parentheses
    ("SELECT region, SUM(revenue) FROM orders GROUP", "GROUP", 1, 41),  # cut short
    ("SELECT region FROM orders WHERE", "WHERE", 1, 27),
])
def test_text_that_is_not_sql_is_a_syntax_error_with_where(source, sql, near, line, column):
    """Never a guard's refusal ("ALIAS is not allowed"): the model is told where to look."""
    with pytest.raises(SqlRejected) as caught:
        prepare_query(sql, source)
    assert caught.value.reason == "sql_parse_error"
    assert caught.value.message.startswith(f"syntax error near {near!r} at line {line}, column {column}")
    assert "not allowed" not in caught.value.message


LONG = "SELECT " + ", ".join(f"col{i}" for i in range(40))


@pytest.mark.parametrize(("sql", "near", "line", "column"), [
    (LONG + " FROM t WHERE ORDER x", "ORDER", 1, 290),               # DuckDB cuts the line's start to "..."
    (LONG + " FROM t WHERE ORDER " + LONG[7:], "ORDER", 1, 290),     # and its end
    ("SELECT a,\n" + LONG[7:] + " FROM t WHERE ORDER x", "ORDER", 2, 283),
    ("\n\n  SELECT a FROM t WHERE ORDER x", "ORDER", 3, 25),          # the blanks the model sent count
    ("SELECT '日本語' AS x FROM t WHERE ORDER x", "ORDER", 1, 32),     # a character is a column, wide or not
    ("SELECT\t\ta FROM t WHERE ORDER x", "ORDER", 1, 24),
    ("SELECT 'e\u0301e\u0301' AS x FROM t WHERE ORDER x", "ORDER", 1, 33),
    ("SELECT '" + "日本語" * 20 + "' AS x FROM t WHERE ORDER x", "ORDER", 1, 89),
])
def test_a_syntax_error_says_the_column_of_its_text_in_the_line_sent(sql, near, line, column):
    """DuckDB shows a long line cut short, with a caret counted in screen widths: the
    column said is the one of ``near`` in the model's own line."""
    with pytest.raises(SqlRejected) as caught:
        parse_one(sql, "duckdb")
    assert caught.value.message.startswith(f"syntax error near {near!r} at line {line}, column {column}")


def test_a_syntax_error_placed_nowhere_for_sure_says_no_column():
    """The excerpt DuckDB shows fits two places of the line: the line alone is said."""
    sql = "SELECT " + ", ".join(["a"] * 30) + " ORDER BY " + ", ".join(["a"] * 30) + " ORDER"
    with pytest.raises(SqlRejected) as caught:
        parse_one(sql, "duckdb")
    assert caught.value.message.startswith("syntax error near 'ORDER'")
    assert "column" not in caught.value.message.split(" (hint")[0]


_WORDS = st.text(alphabet=st.sampled_from("abcxyz_éß日本語"), min_size=1, max_size=12)
_LITERALS = st.text(alphabet=st.sampled_from("ab 日本\te\u0301🙂é,'"), max_size=30).map(
    lambda t: "'" + t.replace("'", "''") + "'")
_BROKEN = [" WHERE ORDER x", " WHERE (a > 1", " GROUP", " FROM FROM t", " WHERE a = = 1", " LIMIT ORDER"]


@settings(max_examples=300, deadline=None)
@given(items=st.lists(st.one_of(_WORDS, _LITERALS), min_size=1, max_size=60),
       breaks=st.lists(st.booleans(), max_size=60), blanks=st.sampled_from(["", "  ", "\n", "\n\t "]),
       broken=st.sampled_from(_BROKEN), dialect=st.sampled_from(["duckdb", "postgres", "sqlite"]))
def test_the_column_said_points_at_the_text_said(items, breaks, blanks, broken, dialect):
    """Whichever parser says it (DuckDB's, or sqlglot's for another dialect), on long,
    multi-line and unicode SQL: the line and column said are where the near text is."""
    parts = [item + (",\n" if i < len(breaks) and breaks[i] else ", ") for i, item in enumerate(items)]
    sql = blanks + "SELECT " + "".join(parts).rstrip(", \n") + " FROM t" + broken
    try:
        parse_one(sql, dialect)
    except SqlRejected as exc:
        found = re.match(r"syntax error near ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\") at line (\d+), column (\d+)",
                         exc.message)
        if found is None:
            return
        near, line, column = ast.literal_eval(found[1]), int(found[2]), int(found[3])
        assert sql.split("\n")[line - 1][column - 1:].startswith(near), (sql, exc.message)


def test_a_real_statement_that_is_not_a_query_is_still_refused(source):
    for sql in ("DELETE FROM orders", "SET threads = 1", "INSTALL httpfs"):
        with pytest.raises(SqlRejected) as caught:
            prepare_query(sql, source)
        assert caught.value.reason == "sql_not_read_only", (sql, caught.value.message)


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
