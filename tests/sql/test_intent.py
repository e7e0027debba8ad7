"""A dataset's description as the model receives it: in the tool result and in the next
turn's system message, with every filter that feeds it and its keys resolved."""

from __future__ import annotations

import json

from jupyter_analyst.sql.intent import LINE_CHARS
from jupyter_analyst.testing import sql_step, text_step

CTE_SQL = (
    "WITH north AS (SELECT * FROM orders o JOIN regions r ON o.region_id = r.region_id "
    "WHERE r.region = 'North') "
    "SELECT DATE_TRUNC('month', order_date) AS month, SUM(revenue) AS revenue FROM north GROUP BY 1"
)
LONG_SQL = (
    "SELECT p.category, COUNT(*) AS orders, "
    "SUM(CASE WHEN o.quantity > 2 AND o.revenue > 50 AND o.order_date >= DATE '2025-03-01' THEN o.revenue "
    "ELSE 0 END) AS big_spring_revenue, "
    "SUM(CASE WHEN o.quantity <= 2 AND o.revenue <= 50 AND o.order_date >= DATE '2025-03-01' THEN o.revenue "
    "ELSE 0 END) AS small_spring_revenue, "
    "ROUND(100.0 * SUM(CASE WHEN o.quantity > 2 AND o.revenue > 50 THEN o.revenue ELSE 0 END) / SUM(o.revenue), 2) "
    "AS big_share_pct "
    "FROM orders o JOIN products p ON o.product_id = p.product_id "
    "WHERE o.region_id IN (1, 2, 3) GROUP BY 1"
)


def _system(request: dict) -> str:
    return request["messages"][0]["content"]


def _next_turn(a, first, prompt: str) -> dict:
    """The first request the agent makes in a follow-up turn (the system message stays as a
    turn began, so what a turn made is listed there from the next turn on)."""
    before = len(a.server.requests)
    assert a.run(prompt, thread=first.thread_id).status == "completed"
    return next(r for r in a.server.requests[before:] if _system(r).startswith("You are jupyter-analyst"))


def _description(request: dict, name: str) -> str:
    """What the system message says a dataset holds: on its active line when it is the active
    dataset (its line in the list then points there), else on its line in the list."""
    lines = _system(request).splitlines()
    active = f"- active dataset: `{name}` ("
    for line in lines:
        if line.startswith(active):
            listed = next(line for line in lines if line.startswith(f"- `{name}`"))
            assert listed.endswith(": the active dataset, described above"), listed
            return line[len(active):].removesuffix(")").split(": ", 1)[1]
    return next(line for line in lines if line.startswith(f"- `{name}`")).split(": ", 1)[1]


def test_a_filter_inside_a_cte_and_group_by_1_reach_the_model(analyst):
    a = analyst({"turns": [{"steps": [sql_step(CTE_SQL, "north_monthly"), text_step()]}, {"steps": [text_step()]}]})
    first = a.run("monthly revenue in the north")
    assert first.status == "completed"
    after = a.server.requests[1]
    told = json.loads([m for m in after["messages"] if m["role"] == "tool"][-1]["content"])
    assert "from north [orders JOIN regions ON region_id where regions.region = 'North']" in told["intent_note"]
    line = _description(_next_turn(a, first, "and in the south?"), "north_monthly")
    # The filter of the CTE is said with it; GROUP BY 1 names the expression, not "1".
    assert "from north [orders JOIN regions ON region_id where regions.region = 'North']" in line
    assert "by: month = DATE_TRUNC('MONTH', order_date)" in line
    assert "by: 1" not in line


def test_a_long_case_measure_is_cut_whole_and_the_where_kept(analyst):
    a = analyst({"turns": [{"steps": [sql_step(LONG_SQL, "spring"), text_step()]}, {"steps": [text_step()]}]})
    first = a.run("big spring orders by category")
    assert first.status == "completed"
    note = _description(_next_turn(a, first, "and the summer?"), "spring")
    assert "where: orders.region_id IN (1, 2, 3)" in note
    assert "by: category" in note
    assert "shortened to fit (full SQL: find \"spring\" with_code=true)" in note
    # Cut between whole parts: each measure is there whole, as an outline, or by its name.
    assert "SUM(CASE WHEN o." not in note and note.count("(") == note.count(")")
    # An elided part stands for a whole expression: never a THEN with nothing after it.
    assert "  " not in note and "THEN ELSE" not in note and "THEN END" not in note
    assert "big_spring_revenue = SUM(CASE WHEN " in note
    assert len(note) <= LINE_CHARS + len(" \"spring\"")


UNION_SQL = (
    "SELECT 'big' AS size, region_id, COUNT(*) AS orders FROM orders "
    "WHERE quantity > 0 AND revenue IS NOT NULL AND order_date >= DATE '2025-01-01' AND revenue > 50 GROUP BY 2 "
    "UNION ALL "
    "SELECT 'small', region_id, COUNT(*) FROM orders "
    "WHERE quantity > 0 AND revenue IS NOT NULL AND order_date >= DATE '2025-01-01' AND revenue <= 50 GROUP BY 2"
)
MANY_SQL = (
    "SELECT o.region_id, p.category, COUNT(*) AS orders, SUM(o.revenue) AS revenue, AVG(o.revenue) AS mean_revenue, "
    "SUM(o.quantity) AS units, MAX(o.revenue) AS largest_order, MIN(o.order_date) AS first_order "
    "FROM orders o JOIN products p ON o.product_id = p.product_id "
    "WHERE o.quantity > 0 AND o.revenue > 0 AND o.region_id IN (1, 2, 3, 4, 5) AND o.product_id < 1000 "
    "AND p.unit_price < 1000 AND p.category <> 'Obsolete' AND o.order_id > 0 AND o.quantity < 1000 GROUP BY 1, 2"
)
LEFT_SQL = (
    "SELECT r.region, COUNT(o.order_id) AS big_orders FROM regions r "
    "LEFT JOIN orders o ON o.region_id = r.region_id AND o.revenue > 100 GROUP BY 1"
)


def _described(analyst, sql: str, name: str) -> str:
    """The description of the dataset ``sql`` makes, as the next turn's system message lists it."""
    a = analyst({"turns": [{"steps": [sql_step(sql, name), text_step()]}, {"steps": [text_step()]}]})
    first = a.run("fetch it")
    assert first.status == "completed"
    return _description(_next_turn(a, first, "and then?"), name)


def test_each_union_part_keeps_the_filter_that_makes_its_rows(analyst):
    note = _described(analyst, UNION_SQL, "by_size")
    # Each part says what makes its rows; the terms both parts share limit the whole dataset, said once.
    assert note.startswith("from UNION ALL of (orders where revenue > 50; size = 'big') "
                           "and (orders where revenue <= 50; size = 'small'); measures: orders = COUNT(*); "
                           "by: region_id; where: quantity > 0 AND NOT revenue IS NULL AND ")
    assert note.count("quantity > 0") == 1
    assert len(note) <= 300


def test_measures_keep_their_definitions_before_filters_past_the_first(analyst):
    note = _described(analyst, MANY_SQL, "by_category")
    # Every measure is defined (a later "is revenue a sum or a mean?" is answered from here).
    assert ("measures: orders = COUNT(*), revenue = SUM(orders.revenue), mean_revenue = AVG(orders.revenue), "
            "units = SUM(orders.quantity), largest_order = MAX(orders.revenue), "
            "first_order = MIN(orders.order_date);") in note
    assert "by: region_id, category;" in note
    assert "left out" not in note
    # The first filters are whole; the rest are counted, and the line says where the SQL is.
    assert "where: orders.quantity > 0 AND orders.revenue > 0 AND orders.region_id IN (1, 2, 3, 4, 5) AND" in note
    assert " more;" in note
    assert "shortened to fit (full SQL: find \"by_category\" with_code=true)" in note
    assert len(note) <= LINE_CHARS + len(" \"by_category\"")


def test_a_left_join_is_said_with_its_keys_and_its_condition(analyst):
    note = _described(analyst, LEFT_SQL, "big_by_region")
    # Regions without a big order are kept (with a count of 0): the join's condition is not a filter.
    assert note.startswith("from regions LEFT JOIN orders ON region_id AND orders.revenue > 100;")
    assert "where:" not in note


SIDES_SQL = (
    "WITH sides AS (SELECT region_id AS rid, 1 AS as_big, 0 AS as_small FROM orders "
    "WHERE quantity > 0 AND revenue > 50 "
    "UNION ALL SELECT product_id AS rid, 0 AS as_big, 1 AS as_small FROM orders "
    "WHERE quantity > 0 AND revenue <= 50 AND product_id <> 6) "
    "SELECT s.rid, r.region, SUM(s.as_big) AS big, SUM(s.as_small) AS small, COUNT(*) AS n "
    "FROM sides s LEFT JOIN regions r ON r.region_id = s.rid GROUP BY s.rid, r.region HAVING COUNT(*) > 10"
)
NORTH_SQL = (
    "WITH north AS (SELECT product_id, revenue FROM orders WHERE region_id = 1 AND quantity > 1) "
    "SELECT n.product_id, p.product, AVG(n.revenue) AS avg_revenue FROM north n "
    "JOIN products p ON p.product_id = n.product_id GROUP BY n.product_id, p.product"
)
RANKED_SQL = (
    "WITH ranked AS (SELECT product, unit_price, RANK() OVER (ORDER BY unit_price DESC) AS price_rank "
    "FROM products WHERE unit_price IS NOT NULL) SELECT product, unit_price FROM ranked WHERE price_rank <= 3"
)


def test_a_union_in_a_cte_joined_after_is_said_part_by_part_with_its_join(analyst):
    note = _described(analyst, SIDES_SQL, "by_side")
    assert note == (
        "from sides [UNION ALL of (orders where revenue > 50; rid = region_id, as_big = 1, as_small = 0) "
        "and (orders where revenue <= 50 AND product_id <> 6; rid = product_id, as_big = 0, as_small = 1), "
        "each where quantity > 0] LEFT JOIN regions ON region_id = rid; "
        "measures: big = SUM(sides.as_big), small = SUM(sides.as_small), n = COUNT(*); by: rid, region; "
        "having: n > 10; 5 rows"
    )


def test_an_alias_is_said_as_its_cte_and_the_cte_once_with_its_filters(analyst):
    note = _described(analyst, NORTH_SQL, "north_products")
    assert note.startswith("from north [orders where region_id = 1 AND quantity > 1] JOIN products ON product_id; "
                           "measures: avg_revenue = AVG(north.revenue); by: product_id, product;")
    assert "(in north)" not in note and "n.revenue" not in note


def test_a_computed_column_in_a_filter_is_defined(analyst):
    note = _described(analyst, RANKED_SQL, "top_priced")
    assert note.startswith("from ranked [products where NOT unit_price IS NULL; "
                           "price_rank = RANK() OVER (ORDER BY unit_price DESC)]; columns: product, unit_price; "
                           "where: price_rank <= 3;")
