"""Artifacts by their human names, and the code that made them, as the model receives them."""

from __future__ import annotations

import json

from jupyter_analyst.testing import call_step, python_step, sql_step, text_step

SQL = "SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r USING (region_id) GROUP BY 1"
TITLED = (
    "fig, ax = plt.subplots()\n"
    "ax.bar(revenue.region, revenue.revenue)\n"
    "ax.set_title('Revenue by region')\n"
    "plt.show()\n"
)
UNTITLED = "share_fig = plt.figure()\nplt.pie(revenue.revenue)\nplt.show()\n"


def _first_agent_request(requests: list[dict]) -> dict:
    """The first of ``requests`` a turn's agent made (not the summarizer's)."""
    return next(r for r in requests if r["messages"][0]["content"].startswith("You are jupyter-analyst"))


def _told(request: dict) -> dict:
    return json.loads([m for m in request["messages"] if m["role"] == "tool"][-1]["content"])


def test_a_titled_chart_is_listed_by_its_title_and_find_returns_its_code(analyst):
    a = analyst({"turns": [{"steps": [
        sql_step(SQL, "revenue"), python_step(TITLED), python_step(UNTITLED),
        call_step("find", query="revenue by region chart", with_code=True),
        call_step("list_artifacts", type="dataset", code=True),
        text_step(),
    ]}, {"steps": [text_step()]}]})
    first = a.run("chart revenue by region")
    assert first.status == "completed"
    requests = list(a.server.requests)
    assert a.run("and the title?", thread=first.thread_id).status == "completed"
    next_turn = _first_agent_request(a.server.requests[len(requests):])
    made = _told(requests[2])["artifacts"]
    assert [m["name"] for m in made] == ["Revenue by region.png"]
    # Without a title, the variable that held the figure names it.
    assert [m["name"] for m in _told(requests[3])["artifacts"]] == ["share_fig.png"]
    # The next turn's system message lists the chart by its title (within a turn it stays
    # as the turn began, for the provider's prompt cache).
    system = next_turn["messages"][0]["content"]
    assert "Revenue by region.png" in system and "-figure-" not in system

    found = _told(requests[4])["matches"]
    chart = next(m for m in found if m["kind"] == "artifact")
    assert chart["name"] == "Revenue by region.png" and chart["id"] == made[0]["id"]
    assert chart["made_by"] == "run_python" and chart["code"] == TITLED.strip()

    listed = _told(requests[5])["artifacts"]
    assert [(d["name"], d["made_by"], d["sql"]) for d in listed] == [("revenue", "run_sql", SQL)]


def test_find_searches_the_code_that_made_an_artifact(analyst):
    a = analyst({"turns": [{"steps": [
        sql_step(SQL, "revenue"), python_step(UNTITLED), call_step("find", query="pie", kind="artifact"), text_step(),
    ]}]})
    assert a.run("a pie of revenue").status == "completed"
    (match,) = _told(a.server.requests[3])["matches"]
    assert match["name"] == "share_fig.png" and "matched in the code that made it" in match["detail"]



def test_a_dataset_is_found_once(analyst):
    a = analyst({"turns": [{"steps": [
        sql_step(SQL, "revenue"), call_step("find", query="revenue"), call_step("find", query="revenue", kind="artifact"),
        text_step(),
    ]}]})
    assert a.run("revenue by region").status == "completed"
    artifact_id = _told(a.server.requests[1])["artifact_id"]
    found = _told(a.server.requests[2])["matches"]
    assert [(m["kind"], m["name"]) for m in found if m.get("id") == artifact_id] == [("dataset", "revenue")]
    # Asked for artifacts only, the dataset's file is that one artifact.
    only = _told(a.server.requests[3])["matches"]
    assert [(m["kind"], m["name"]) for m in only if m.get("id") == artifact_id] == [("artifact", "revenue")]


def test_a_dataset_its_name_no_longer_holds_is_found_by_what_it_holds_and_says_so(analyst):
    """The total fetched into ``revenue``, then the average: a search for the total among
    datasets finds the earlier ``revenue`` too, by the SQL that made it, saying the kernel's
    ``revenue`` now holds the average."""
    a = analyst({"turns": [{"steps": [
        sql_step("SELECT region_id, SUM(revenue) AS total_revenue FROM orders GROUP BY 1", "revenue"),
        sql_step("SELECT region_id, AVG(revenue) AS average_revenue FROM orders GROUP BY 1", "revenue"),
        call_step("find", query="total revenue", kind="dataset"),
        text_step(),
    ]}]})
    assert a.run("revenue both ways").status == "completed"
    total, average = (_told(a.server.requests[n])["artifact_id"] for n in (1, 2))
    found = {m["id"]: m for m in _told(a.server.requests[3])["matches"] if m["kind"] == "dataset"}
    assert found[average]["detail"] == "a DataFrame in the kernel" and "in_kernel" not in found[average]
    assert found[total]["in_kernel"] is False
    assert found[total]["detail"] == (f"an earlier `revenue`, not in the kernel (the name now holds {average}): "
                                      "fetch it again to use it")


FLIGHTS = {
    "flights": {c: "BIGINT" for c in ("year", "month", "day", "dep_time", "sched_dep_time", "dep_delay", "arr_time",
                                      "sched_arr_time", "arr_delay", "carrier", "flight", "tailnum", "origin", "dest",
                                      "air_time", "distance", "hour", "minute", "time_hour")},
    "airlines": {"carrier": "VARCHAR", "name": "VARCHAR"},
    "planes": {c: "VARCHAR" for c in ("tailnum", "year", "type", "manufacturer", "model", "engines", "seats", "speed")},
}


def test_a_thing_the_data_does_not_have_is_found_only_as_weak_matches():
    from jupyter_analyst.agent.tools.find import WEAK_LIMIT, find

    weak = find("ticket fare price", schema=FLIGHTS)
    assert weak and len(weak) <= WEAK_LIMIT and all(m.weak for m in weak)
    # A word in common, a typo or an abbreviation is a real match, ranked above letters in common.
    for query, name in [("arrival delay", "flights.arr_delay"), ("carier", "flights.carrier"),
                        ("airline name", "airlines.name"), ("mfr", "planes.manufacturer"),
                        ("passenger seat count", "planes.seats")]:
        found = find(query, schema=FLIGHTS)
        assert found[0].weak is None and name in [m.name for m in found if not m.weak], (query, found)


def test_find_tells_the_model_there_is_no_good_match(analyst):
    a = analyst({"turns": [{"steps": [
        call_step("find", query="discount rate"), call_step("find", query="revnue"), text_step(),
    ]}]})
    assert a.run("what discount did we give?").status == "completed"
    nothing, something = _told(a.server.requests[1]), _told(a.server.requests[2])
    assert nothing["note"].startswith("no good match") and all(m["weak"] for m in nothing["matches"])
    assert "note" not in something and something["matches"][0]["name"] == "orders.revenue"
    assert "weak" not in something["matches"][0]


def test_find_says_a_thing_nothing_is_named_like_is_likely_not_in_the_data(analyst):
    a = analyst({"turns": [{"steps": [call_step("find", query="shipping cost"), text_step()]}]})
    assert a.run("what did shipping cost?").status == "completed"
    told = _told(a.server.requests[1])
    assert told["matches"] == [] and "likely not in the data" in told["note"] and "try other words" not in told["note"]


SALES = {
    "orders": {c: "BIGINT" for c in ("order_id", "order_date", "region_id", "product_id", "quantity", "revenue")},
    "products": {"product_id": "BIGINT", "product": "VARCHAR", "category": "VARCHAR", "unit_price": "DOUBLE"},
    "regions": {"region_id": "BIGINT", "region": "VARCHAR", "country": "VARCHAR"},
}


def _team():
    from pathlib import Path

    from jupyter_analyst.knowledge import load_team_context

    return load_team_context(Path(__file__).parents[2] / "fixtures" / "context")


def test_a_definition_outranks_bare_columns_that_fit_about_as_well_and_a_tables_name_alone_finds_no_column():
    from jupyter_analyst.agent.tools.find import find

    found = find("orders this fiscal year", schema=SALES, team=_team())
    # The metric labelled "Orders" leads; columns that share no word of their own are left out.
    assert found[0].kind == "metric" and found[0].name == "order_count"
    names = [m.name for m in found]
    assert not {"orders.product_id", "orders.quantity", "orders.region_id", "orders.revenue"} & set(names)
    assert "orders.order_date" in names and "orders" in names
    assert "products.category" not in [m.name for m in find("product name", schema=SALES, team=_team())]
    # A column that fits clearly better still leads ("orders revenue" is that column's very name).
    assert find("orders revenue", schema=SALES, team=_team())[0].name == "orders.revenue"


def test_a_metric_is_found_with_its_meaning_and_a_verified_query_with_its_sql_as_the_schema_says():
    from jupyter_analyst.agent.tools.find import FIND, find

    metric = find("turnover", schema=SALES, team=_team())[0]
    assert metric.name == "revenue" and metric.definition == "SUM(revenue) FROM orders WHERE quantity > 0"
    assert metric.description == "What customers paid for orders that were not cancelled."
    assert metric.synonyms == ["sales", "turnover"]
    verified = next(m for m in find("monthly revenue", schema=SALES, team=_team()) if m.kind == "verified_query")
    assert verified.sql and "SELECT" in verified.sql.upper()
    assert "a verified query's SQL comes always" in FIND.properties["with_code"]["description"]


def test_a_dataset_its_name_no_longer_holds_says_what_replaced_it(analyst):
    """Two queries fetch into ``revenue``, then a Python step assigns ``top``, first fetched
    by a query: the older ``revenue`` names the newer one's id, ``top`` says a Python step's
    value holds the name, and the datasets the names still hold say nothing."""
    a = analyst({"turns": [{"steps": [
        sql_step("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "revenue"),
        sql_step("SELECT region_id, AVG(revenue) AS revenue FROM orders GROUP BY 1", "revenue"),
        sql_step("SELECT * FROM regions", "top"),
        python_step("top = revenue.head(2)"),
        call_step("list_artifacts", type="dataset"),
        text_step(),
    ]}]})
    assert a.run("revenue twice").status == "completed"
    listed = _told(a.server.requests[5])["artifacts"]
    older, newer, top = listed
    assert (older["name"], newer["name"], top["name"]) == ("revenue", "revenue", "top")
    assert older["replaced_by"] == newer["id"] and "replaced_by" not in newer
    assert top["replaced_by"] == "a Python step's value"
    # The older `revenue` is in no name now; the newer one is in its own alone (said by nothing).
    assert older["in_kernel_as"] == [] and "in_kernel_as" not in newer
    assert top["in_kernel_as"] == []  # the name `top` holds a Python value: no name holds these rows


def test_rows_fetched_again_into_another_name_are_one_dataset_that_both_names_hold(analyst):
    """The total fetched into ``revenue``, the average into ``revenue``, then the total again
    into ``total``: the total's dataset is not stored again; the name ``total`` holds it, and
    both list_artifacts and the next turn's system message say so."""
    total = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1 ORDER BY 1"
    a = analyst({"turns": [{"steps": [
        sql_step(total, "revenue"),
        sql_step("SELECT region_id, AVG(revenue) AS revenue FROM orders GROUP BY 1 ORDER BY 1", "revenue"),
        sql_step(total, "total"),
        call_step("list_artifacts", type="dataset"),
        text_step(),
    ]}, {"steps": [text_step()]}]})
    first = a.run("revenue both ways")
    assert first.status == "completed"
    requests = list(a.server.requests)
    listed = _told(requests[4])["artifacts"]
    assert len(listed) == 2, listed  # the total's rows are stored once
    the_total, the_average = listed
    assert the_total["in_kernel_as"] == ["total"] and the_total["replaced_by"] == the_average["id"]
    assert "in_kernel_as" not in the_average and "replaced_by" not in the_average
    assert a.run("and now?", thread=first.thread_id).status == "completed"
    request = _first_agent_request(a.server.requests[len(requests):])
    system = request["messages"][0]["content"]
    assert f"- `total` {the_total['id']}" in system and f"- `revenue` {the_average['id']}" in system, system
    assert f"- `revenue` {the_total['id']}" not in system
    # The first fetch, shortened in the next turn, points to where the system message
    # describes its dataset now: under `total`, not `revenue` (which holds the average).
    fetched = [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"][0]
    assert fetched["artifact_id"] == the_total["id"]
    assert fetched["intent_note"] == "described in the system message (`total`)", fetched


def test_charts_side_by_side_are_named_after_every_title(analyst):
    """Two axes of one figure, each titled: the chart is named after both, not the first alone."""
    both = ("fig, (left, right) = plt.subplots(1, 2)\n"
            "left.bar(revenue.region, revenue.revenue)\nleft.set_title('Total revenue')\n"
            "right.pie(revenue.revenue)\nright.set_title('Share by region')\nplt.show()\n")
    a = analyst({"turns": [{"steps": [sql_step(SQL, "revenue"), python_step(both), text_step()]}]})
    assert a.run("both charts").status == "completed"
    made = _told(a.server.requests[2])["artifacts"]
    assert [m["name"] for m in made] == ["Total revenue and Share by region.png"]

