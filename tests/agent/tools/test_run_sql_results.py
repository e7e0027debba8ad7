"""What the model is told of a query's result, read from the requests it receives next.

A model trusts what it is sent: a result says whether it is whole, and when it is not, how
many rows it holds and how to see the others; no fact is said twice.
"""

from __future__ import annotations

import json

from jupyter_analyst.agent.spec.shown import RESULT_CHARS
from jupyter_analyst.testing import sql_step, text_step

# 5 regions x 7 months: the row that answers a question may be any of the 35.
BY_REGION_MONTH = (
    "SELECT r.region, date_trunc('month', o.order_date) AS month, SUM(o.revenue) AS revenue, COUNT(*) AS orders "
    "FROM orders o JOIN regions r ON o.region_id = r.region_id WHERE month(o.order_date) <= 7 "
    "GROUP BY 1, 2 ORDER BY 1, 2"
)
ORDERS_2000 = "SELECT * FROM orders WHERE order_id <= 2000 ORDER BY order_id"


def told(server, request: int = 1) -> dict:
    """The last tool result in the model's ``request``-th request."""
    tool = [m for m in server.requests[request]["messages"] if m["role"] == "tool"]
    return json.loads(tool[-1]["content"])


def test_a_35_row_result_comes_back_whole(analyst):
    a = analyst({"turns": [{"steps": [sql_step(BY_REGION_MONTH, "monthly"), text_step()]}]})
    a.run("monthly revenue by region")
    result = told(a.server)
    assert result["rows"] == 35 and result["shown"] == "all 35 rows"
    assert list(result["columns"]) == ["region", "month", "revenue", "orders"]
    assert len(result["data"]) == 35
    # The last row is there, in the order of the columns (West, July).
    assert result["data"][-1][0] == "West" and result["data"][-1][1].startswith("2025-07-01")
    # Said once: no flag claiming completeness beside a sample, no second and third intent.
    assert not {"truncated", "sample", "note", "intent", "row_cap"} & set(result)
    assert result["intent_note"].startswith("from orders JOIN regions ON region_id;")
    assert "reused" not in result  # said only when true


def test_a_2000_row_result_says_first_k_of_n_and_how_to_see_more(analyst):
    a = analyst({"turns": [{"steps": [sql_step(ORDERS_2000, "orders_2k"), text_step()]}]})
    a.run("the first orders")
    result = told(a.server)
    k = len(result["data"])
    assert result["rows"] == 2000 and 1 <= k < 2000
    assert result["shown"].startswith(f"the first {k} of 2,000 rows")
    assert f"orders_2k.iloc[{k}:" in result["shown"] and "run_python" in result["shown"]
    assert [row[0] for row in result["data"]] == list(range(1, k + 1))  # the first k, in order
    # Nothing beside the rows says otherwise (no flag, sample or note of its own).
    assert not {"truncated", "sample", "note", "row_cap"} & set(result)
    # Within the budget: the rows and what surrounds them.
    assert len(json.dumps(result["data"])) <= RESULT_CHARS
    # The events (the panel, the notebook) keep the rows as records, and the row cap's flag.
    (event,) = a.of_type("tool_result")
    assert len(event.result["sample"]) == k and event.result["truncated"] is False


def test_a_reused_result_says_so_once(analyst):
    a = analyst({"turns": [{"steps": [sql_step(BY_REGION_MONTH, "monthly"), sql_step(BY_REGION_MONTH, "monthly"),
                                      text_step()]}]})
    a.run("twice")
    again = told(a.server, 2)
    assert again["reused"] is True and again["shown"] == "all 35 rows" and len(again["data"]) == 35


def test_a_plan_step_says_reused_once(analyst):
    plan = {"tool_calls": [{"name": "plan", "arguments": {"steps": [
        {"id": "q1", "tool": "run_sql", "arguments": {"sql": BY_REGION_MONTH, "name": "monthly"}}]}}]}
    a = analyst({"turns": [{"steps": [plan, text_step()]}]})
    a.run("a plan")
    (step,) = told(a.server)["steps"]
    assert "reused" not in step and "reused" not in step["result"]
    assert step["result"]["shown"] == "all 35 rows"


def test_time_ranges_are_said_only_where_the_rows_do_not_say_them_and_only_of_columns_the_note_names(analyst):
    lookup = "SELECT current_date AS today, MIN(order_date) AS first_order, MAX(order_date) AS last_order FROM orders"
    a = analyst({"turns": [
        {"match": "^and", "steps": [text_step()]},
        {"steps": [sql_step(BY_REGION_MONTH, "monthly"), sql_step(lookup, "date_range"), sql_step(ORDERS_2000, "orders_2k"),
                   text_step("`monthly` and `date_range`.")]},
    ]})
    first = a.run("monthly revenue by region")
    whole, one_row, partial = told(a.server, 1), told(a.server, 2), told(a.server, 3)
    # All 35 rows shown: their months are not repeated as a range.
    assert whole["shown"] == "all 35 rows" and "month 2025-01-01" not in whole["intent_note"]
    # One row: no range that repeats it, and none of a column the note does not name.
    assert one_row["intent_note"] == (
        "from orders; measures: first_order = MIN(order_date), last_order = MAX(order_date); 1 row")
    # Rows not all shown: the range says what the rows shown do not.
    assert "order_date 2025-01-01 .. " in partial["intent_note"]
    # The description kept for later turns, which do not see the rows, keeps what is true of them.
    a.run("and then?", thread=first.thread_id)
    system = a.server.requests[-1]["messages"][0]["content"]
    assert "month 2025-01-01 00:00:00 .. 2025-07-01 00:00:00" in system
    assert "1 row; first_order 2025-01-01; last_order 2025-12-31" in system and "today 20" not in system


def test_a_fetch_says_what_its_name_held_before_and_rows_another_dataset_holds(analyst):
    """The model is told what a fetch did to the kernel's names: ``revenue`` fetched again
    replaces the dataset it held (by id); the first rows fetched into another name are the
    dataset stored before, not stored again; a name a Python step assigned is replaced too.
    A first fetch into a name says neither."""
    from jupyter_analyst.testing import python_step

    total = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1 ORDER BY 1"
    a = analyst({"turns": [{"steps": [
        sql_step(total, "revenue"),
        sql_step("SELECT region_id, AVG(revenue) AS revenue FROM orders GROUP BY 1 ORDER BY 1", "revenue"),
        sql_step(total, "total"),
        python_step("top = 3"),
        sql_step("SELECT * FROM regions", "top"),
        text_step(),
    ]}]})
    assert a.run("revenue both ways").status == "completed"
    first, second, third, _, fifth = (told(a.server, n) for n in range(1, 6))
    assert "replaces" not in first and "same_rows_as" not in first
    assert second["replaces"] == (f"{first['artifact_id']}, which `revenue` held before (fetch it under another "
                                  "name to keep both)")
    assert third["artifact_id"] == first["artifact_id"] and "replaces" not in third
    assert third["same_rows_as"] == f"{first['artifact_id']} (first fetched as `revenue`): not stored again"
    assert fifth["replaces"] == "the value a Python step had assigned to `top`"
