"""Canonical SQL and Python: what must not change a step's key, and what must."""

from __future__ import annotations

import pytest

from jupyter_analyst.artifacts import canonical_python, step_key
from jupyter_analyst.sql import open_source, prepare_query

BASE = "SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r ON o.region_id = r.region_id WHERE o.quantity > 2 GROUP BY r.region"

SAME = {
    "layout": "SELECT r.region,\n       SUM(o.revenue) AS revenue\n  FROM orders o\n  JOIN regions r\n    ON o.region_id = r.region_id\n WHERE o.quantity > 2\n GROUP BY r.region\n",
    "keyword case": "select r.region, sum(o.revenue) as revenue from orders o join regions r on o.region_id = r.region_id where o.quantity > 2 group by r.region",
    "identifier case": "SELECT R.REGION, SUM(O.REVENUE) AS revenue FROM ORDERS O JOIN REGIONS R ON O.REGION_ID = R.REGION_ID WHERE O.QUANTITY > 2 GROUP BY R.REGION",
    "quoting": 'SELECT "r"."region", SUM("o"."revenue") AS "revenue" FROM "orders" "o" JOIN "regions" "r" ON "o"."region_id" = "r"."region_id" WHERE "o"."quantity" > 2 GROUP BY "r"."region"',
    "table aliases": "SELECT reg.region, SUM(ord.revenue) AS revenue FROM orders AS ord JOIN regions AS reg ON ord.region_id = reg.region_id WHERE ord.quantity > 2 GROUP BY reg.region",
    "trailing semicolon": BASE + ";",
}
DIFFERENT = {
    "filter value": BASE.replace("> 2", "> 3"),
    "filter column": BASE.replace("o.quantity > 2", "o.revenue > 2"),
    "output alias": BASE.replace("AS revenue", "AS total"),
    "aggregate": BASE.replace("SUM(", "AVG("),
}


@pytest.fixture(scope="module")
def source(sales_db):
    src = open_source(str(sales_db))
    yield src
    src.close()


@pytest.mark.parametrize("variant", sorted(SAME))
def test_does_not_change_the_key(source, variant):
    assert prepare_query(SAME[variant], source).canonical == prepare_query(BASE, source).canonical


@pytest.mark.parametrize("variant", sorted(DIFFERENT))
def test_changes_the_key(source, variant):
    assert prepare_query(DIFFERENT[variant], source).canonical != prepare_query(BASE, source).canonical


def test_canonical_text_is_stable(source):
    a = prepare_query(BASE, source).canonical
    assert a == prepare_query(BASE, source).canonical
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


PY_BASE = "monthly = df.groupby('month')['revenue'].sum()\nprint(monthly.head())\n"
PY_SAME = [
    "# monthly totals\nmonthly = df.groupby('month')['revenue'].sum()  # sum\n\n\nprint(monthly.head())",
    'monthly = df.groupby("month")["revenue"].sum()\nprint(monthly.head())',
    "monthly = df.groupby(\n    'month'\n)['revenue'].sum()\nprint( monthly.head() )\n",
]
PY_DIFFERENT = [
    PY_BASE.replace("sum()", "mean()"),
    PY_BASE.replace("head()", "head(10)"),
    PY_BASE.replace("'month'", "'region'"),
]


@pytest.mark.parametrize("code", PY_SAME)
def test_python_comments_and_layout_do_not_count(code):
    assert canonical_python(code) == canonical_python(PY_BASE)


@pytest.mark.parametrize("code", PY_DIFFERENT)
def test_python_changes_count(code):
    assert canonical_python(code) != canonical_python(PY_BASE)


def test_unparsable_python_is_only_trimmed():
    assert canonical_python("  def broken(:\n    pass   \n\n") == "  def broken(:\n    pass"


def test_step_key_depends_on_every_part():
    base = step_key("run_python", {"code": "x"}, ["sha256:a"], "v1")
    assert base == step_key("run_python", {"code": "x"}, ["sha256:a"], "v1")
    assert base != step_key("run_sql", {"code": "x"}, ["sha256:a"], "v1")
    assert base != step_key("run_python", {"code": "y"}, ["sha256:a"], "v1")
    assert base != step_key("run_python", {"code": "x"}, ["sha256:b"], "v1")
    assert base != step_key("run_python", {"code": "x"}, ["sha256:a"], "v2")
    assert step_key("t", {}, ["b", "a"]) == step_key("t", {}, ["a", "b"]), "inputs are a set"
