"""A turn's SQL read for the team's definitions: the measures it computes that the folder
lacks are offered (name, expression, filters, table), those it defines are not, and the
definitions a query follows are cited."""

from __future__ import annotations

import shutil

import pytest

from jupyter_analyst.knowledge import load_team_context
from jupyter_analyst.knowledge import definitions_followed, suggest_metrics

pytest.importorskip("dbt_semantic_interfaces")


@pytest.fixture
def team(tmp_path):
    folder = tmp_path / "context"
    shutil.copytree("tests/fixtures/context", folder)
    return load_team_context(folder)


def offered(sql, team, **kw):
    return [(s.name, s.table, s.agg, s.expr, s.filters) for s in suggest_metrics(sql, "duckdb", team, call_id="c1", **kw)]


def test_a_filtered_measure_the_folder_lacks_is_offered(team):
    sql = "SELECT SUM(o.quantity) AS units_shipped FROM orders o WHERE o.quantity > 0 AND o.region_id = 2"
    (suggestion,) = suggest_metrics(sql, "duckdb", team, call_id="c1")
    assert (suggestion.name, suggestion.table, suggestion.agg, suggestion.expr, suggestion.filters,
            suggestion.call_id) == ("units_shipped", "orders", "sum", "quantity", ["quantity > 0", "region_id = 2"], "c1")
    assert suggestion.measure == "SUM(quantity) FROM orders WHERE quantity > 0 AND region_id = 2"


def test_a_defined_measure_is_not_offered_but_another_over_its_table_is(team):
    # revenue is the folder's metric (SUM(revenue) WHERE quantity > 0): followed, and cited.
    assert offered("SELECT SUM(revenue) FROM orders WHERE quantity > 0", team) == []
    assert offered("SELECT SUM(o.revenue) FROM orders o WHERE o.quantity > 0 AND o.region_id = 1", team) == []
    # Another aggregate, another expression or other filters: another measure.
    assert offered("SELECT AVG(revenue) FROM orders", team) == [("average_revenue", "orders", "average", "revenue", [])]
    assert offered("SELECT SUM(revenue) AS returned FROM orders WHERE quantity < 0", team) == [
        ("returned", "orders", "sum", "revenue", ["quantity < 0"])]
    assert offered("SELECT COUNT(DISTINCT order_id) FROM orders", team) == [
        ("count_distinct_order_id", "orders", "count_distinct", "order_id", [])]


EVENTS = """semantic_models:
  - name: events
    model: ref('events')
    entities:
      - name: user
        type: primary
        expr: user_id
    dimensions:
      - name: kind
        type: categorical
    measures:
      - name: amount
        agg: sum
        expr: amount
      - name: events_counted
        agg: count
        expr: "1"
metrics:
  - name: revenue
    type: simple
    type_params:
      measure: amount
    filter: "{{ Dimension('user__kind') }} = 'sale'"
  - name: sales
    type: simple
    type_params:
      measure: events_counted
    filter: "{{ Dimension('user__kind') }} = 'sale'"
"""


def test_refunds_beside_a_sales_metric_are_offered_and_the_sales_are_not(tmp_path):
    folder = tmp_path / "context"
    (folder / "models").mkdir(parents=True)
    (folder / "models" / "events.yml").write_text(EVENTS)
    events = load_team_context(folder)
    assert {m.name: m.formula() for m in events.metrics} == {
        "revenue": "SUM(amount) FROM events WHERE kind = 'sale'", "sales": "COUNT(1) FROM events WHERE kind = 'sale'"}
    assert offered("SELECT user_id, SUM(amount) AS refunded FROM events WHERE kind = 'refund' GROUP BY 1", events) == [
        ("refunded", "events", "sum", "amount", ["kind = 'refund'"])]
    (refunds,) = suggest_metrics("SELECT COUNT(*) FROM events e WHERE e.kind = 'refund'", "duckdb", events, call_id="c")
    assert (refunds.name, refunds.agg, refunds.expr, refunds.filters, refunds.measure) == (
        "row_count", "count", "1", ["kind = 'refund'"], "COUNT(1) FROM events WHERE kind = 'refund'")
    # The metrics themselves, however written: not offered.
    assert offered("SELECT SUM(amount) FROM events WHERE kind = 'sale'", events) == []
    assert offered("SELECT COUNT(*) AS n FROM events WHERE 'sale' = kind", events) == []
    assert offered("SELECT COUNT(1) FROM events WHERE kind = 'sale'", events) == []


def test_a_period_asked_about_is_the_question_s_not_the_measure_s(team):
    sql = ("SELECT MAX(quantity) FILTER (WHERE region_id = 1) FROM orders "
           "WHERE order_date >= DATE '2024-01-01'")
    assert offered(sql, team, time_columns={"order_date"}) == [
        ("max_quantity", "orders", "max", "quantity", ["region_id = 1"])]


@pytest.mark.parametrize("sql", [
    "SELECT SUM(o.quantity) FROM orders o JOIN regions r ON o.region_id = r.region_id",  # two tables
    "SELECT SUM(quantity) FROM orders WHERE region_id IN (SELECT region_id FROM regions)",  # a subquery
    "WITH x AS (SELECT * FROM orders) SELECT SUM(quantity) FROM x",  # a CTE
    "SELECT quantity FROM orders",  # no aggregate
    "SELEC nonsense",  # not SQL
])
def test_what_is_not_one_table_s_measure_offers_nothing(team, sql):
    assert offered(sql, team) == []


def test_an_alias_that_names_a_defined_metric_is_not_proposed_again(team):
    assert [o[0] for o in offered("SELECT SUM(quantity) AS revenue FROM orders", team)] == ["revenue_2"]


def test_the_definitions_a_query_follows_are_cited(team):
    followed = definitions_followed("SELECT SUM(o.revenue) AS r FROM orders o WHERE o.quantity > 0 AND region_id = 1",
                                    "duckdb", team, call_id="c7")
    assert [(d.kind, d.name, d.definition, d.file, d.call_id) for d in followed] == [
        ("definition", "revenue", "metric", "context/models/orders.yml:46", "c7")]
    # The filter left out: not followed (divergence.py notes it instead).
    assert definitions_followed("SELECT SUM(revenue) FROM orders", "duckdb", team, call_id="c") == []
    (query,) = team.queries
    followed = definitions_followed(query.sql.replace("\n", "  \n") + " -- as verified", "duckdb", team, call_id="c")
    assert [(d.name, d.definition, d.file) for d in followed] == [
        ("revenue_by_month.sql", "verified_query", "context/queries/revenue_by_month.sql"),
        ("revenue", "metric", "context/models/orders.yml:46")]
