"""A dataset's description as the model receives it: in the tool result and in the next
turn's system message, with every filter that feeds it and its keys resolved."""

from __future__ import annotations

import json

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


def _dataset_line(request: dict, name: str) -> str:
    return next(line for line in _system(request).splitlines() if line.startswith(f"- `{name}`"))


def test_a_filter_inside_a_cte_and_group_by_1_reach_the_model(analyst):
    a = analyst({"turns": [{"steps": [sql_step(CTE_SQL, "north_monthly"), text_step()]}, {"steps": [text_step()]}]})
    first = a.run("monthly revenue in the north")
    assert first.status == "completed"
    after = a.server.requests[1]
    told = json.loads([m for m in after["messages"] if m["role"] == "tool"][-1]["content"])
    assert "region = 'North' (in north)" in told["intent_note"]
    line = _dataset_line(_next_turn(a, first, "and in the south?"), "north_monthly")
    # The filter of the CTE is the dataset's; GROUP BY 1 names the expression, not "1".
    assert "where: regions.region = 'North' (in north)" in line
    assert "by: month = DATE_TRUNC('MONTH', order_date)" in line
    assert "by: 1" not in line


def test_a_long_case_measure_is_cut_whole_and_the_where_kept(analyst):
    a = analyst({"turns": [{"steps": [sql_step(LONG_SQL, "spring"), text_step()]}, {"steps": [text_step()]}]})
    first = a.run("big spring orders by category")
    assert first.status == "completed"
    line = _dataset_line(_next_turn(a, first, "and the summer?"), "spring")
    note = line.split(": ", 1)[1]
    assert "where: orders.region_id IN (1, 2, 3)" in note
    assert "by: category" in note
    assert "shortened to fit (full SQL: list_artifacts with_code=true)" in note
    # Cut between whole parts: each measure is there whole, as an outline, or by its name.
    assert "SUM(CASE WHEN o." not in note and note.count("(") == note.count(")")
    assert "big_spring_revenue" in note
    assert len(note) <= 300
