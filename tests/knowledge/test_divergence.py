"""A query compared with the team's metric definitions: another aggregate, a missing filter."""

from __future__ import annotations

import pytest

from jupyter_analyst.knowledge.definitions import Metric, Origin
from jupyter_analyst.knowledge import divergences

REVENUE = Metric(name="revenue", type="simple", table="orders", agg="sum", expr="revenue",
                 filters=["quantity > 0"], origin=Origin(file="models/orders.yml", line=46))
ORDERS = Metric(name="order_count", type="simple", table="orders", agg="count_distinct", expr="order_id",
                filters=["quantity > 0", "region_id <> 99"], origin=Origin(file="models/orders.yml", line=57))

#: (query, what its notes say; empty when it agrees with the definitions)
CASES = [
    ("SELECT SUM(revenue) FROM orders WHERE quantity > 0", []),
    ("SELECT SUM(o.revenue) AS r FROM orders AS o WHERE (o.quantity > 0) AND o.region_id = 3", []),
    ("SELECT SUM(revenue) FILTER (WHERE quantity > 0) FROM orders", []),
    ("WITH kept AS (SELECT * FROM orders WHERE quantity > 0) SELECT SUM(revenue) FROM orders JOIN kept USING (order_id)", []),
    ("SELECT region_id, COUNT(*) FROM orders GROUP BY 1", []),  # not the measure's expression
    ("SELECT SUM(revenue) FROM returns", []),  # another table
    ("SELECT AVG(revenue) FROM orders WHERE quantity > 0", ["AVG(revenue) is another aggregate than"]),
    ("SELECT MAX(revenue) AS top FROM orders", ["top = MAX(revenue) is another aggregate than"]),
    ("SELECT SUM(revenue) AS revenue FROM orders", ["revenue = SUM(revenue) lacks the filter quantity > 0 of"]),
    ("SELECT COUNT(DISTINCT order_id) FROM orders WHERE quantity > 0",
     ["COUNT(DISTINCT order_id) lacks the filter region_id <> 99 of the team's metric `order_count`"]),
    ("SELECT COUNT(order_id) FROM orders WHERE quantity > 0 AND region_id <> 99",
     ["COUNT(order_id) is another aggregate than the team's metric `order_count`"]),
    # A condition of its own on a filter's column: another measure, not the metric computed wrongly.
    ("SELECT SUM(revenue) FROM orders WHERE quantity < 0", []),
    ("SELECT SUM(revenue) FROM orders WHERE 0 < quantity", []),
    ("SELECT SUM(revenue) FILTER (WHERE NOT quantity > 0) FROM orders", []),
    ("SELECT MAX(revenue) FROM orders WHERE quantity = 0", []),
    ("SELECT COUNT(DISTINCT order_id) FROM orders WHERE quantity > 0 AND region_id = 99", []),
    ("SELECT COUNT(DISTINCT order_id) FROM orders WHERE quantity > 0 AND region_id IN (1, 2)", []),
    # Each aggregate by the filters that apply to its own rows: another aggregate's FILTER,
    # or the WHERE of another SELECT, is not one of them.
    ("SELECT SUM(revenue) FILTER (WHERE quantity > 0) AS revenue, SUM(revenue) AS revenue_incl_cancelled FROM orders",
     ["revenue_incl_cancelled = SUM(revenue) lacks the filter quantity > 0 of"]),
    ("SELECT SUM(revenue) AS r, (SELECT COUNT(*) FROM orders WHERE quantity > 0) AS kept FROM orders",
     ["r = SUM(revenue) lacks the filter quantity > 0 of"]),
    ("SELECT SUM(revenue) FROM (SELECT * FROM orders WHERE quantity > 0) AS o JOIN orders USING (order_id)", []),
    ("this is not SQL", []),
]


@pytest.mark.parametrize(("sql", "said"), CASES)
def test_a_query_is_told_where_it_differs_from_a_definition(sql, said):
    notes = divergences(sql, "duckdb", [REVENUE, ORDERS])
    assert len(notes) == len(said)
    for note, start in zip(notes, said):
        assert start in note
        assert "(models/orders.yml:" in note  # the definition is named by file and line
        assert note.endswith("compute it with the definition's filter and aggregate, or say in the answer why not")


def test_a_note_names_the_definition_in_full():
    (note,) = divergences("SELECT AVG(revenue) FROM orders", "duckdb", [REVENUE])
    assert note == ("AVG(revenue) is another aggregate than the team's metric `revenue` (models/orders.yml:46): "
                    "SUM(revenue) FROM orders WHERE quantity > 0; compute it with the definition's filter and "
                    "aggregate, or say in the answer why not")


def test_a_note_names_the_definitions_file_as_find_does():
    (note,) = divergences("SELECT AVG(revenue) FROM orders", "duckdb", [REVENUE], folder="context")
    assert "(context/models/orders.yml:46)" in note


SALES = Metric(name="revenue", type="simple", table="events", agg="sum", expr="amount",
               filters=["kind = 'sale'"], origin=Origin(file="models/events.yml", line=3))


@pytest.mark.parametrize("where", ["kind = 'refund'", "kind IN ('refund', 'chargeback')", "kind <> 'sale'",
                                   "kind != 'sale'", "NOT kind = 'sale'", "e.kind = 'refund' AND amount > 0"])
def test_a_measure_filtered_otherwise_on_the_metric_s_column_is_another_measure(where):
    sql = f"SELECT user_id, SUM(amount) AS refunded FROM events e WHERE {where} GROUP BY 1"
    assert divergences(sql, "duckdb", [SALES]) == []


def test_a_filter_left_out_with_no_condition_on_its_column_is_still_noted():
    sql = "SELECT user_id, SUM(amount) AS refunded FROM events WHERE amount > 0 GROUP BY 1"
    (note,) = divergences(sql, "duckdb", [SALES])
    assert note.startswith("refunded = SUM(amount) lacks the filter kind = 'sale' of the team's metric `revenue`")
