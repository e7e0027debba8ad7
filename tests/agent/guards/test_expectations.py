"""An expectation belongs to the call that stated it; its verdict is a fact about that step,
told with the step's result, as the model sees it in its next requests."""

from __future__ import annotations

import json

from jupyter_analyst.testing import sql_step, text_step

REVENUE = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r "
           "ON o.region_id = r.region_id GROUP BY r.region ORDER BY r.region")


def tool_results(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def system_of(request: dict) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "system")


def test_a_failed_expectation_is_attached_to_its_step_only(analyst):
    a = analyst({"turns": [
        {"match": "again", "steps": [sql_step(REVENUE, "revenue"), text_step()]},
        {"match": ".", "steps": [sql_step(REVENUE, "revenue", expect={"rows": 4}),
                                 sql_step(REVENUE, "revenue"), text_step()]},
    ]})
    first = a.run("revenue by region")
    # The call that stated it is told the verdict with its result.
    (stated,) = tool_results(a.server.requests[1])
    assert stated["expectation"] == {"status": "failed", "rule": "count", "detail": "expected 4 rows, got 5"}
    # The same step asked again without an expectation is reused, without the other's verdict.
    reused = tool_results(a.server.requests[2])[-1]
    assert reused["reused"] is True and "expectation" not in reused
    # Not a standing assumption of the thread: no "[1.0]" line, no call id the model never saw.
    for request in a.server.requests:
        system = system_of(request)
        assert "expected 4 rows" not in system and "[1.0]" not in system
    # The next turn: reused again, still without the verdict; the system prompt stays clean.
    a.run("again", thread=first.thread_id)
    request = a.server.requests[-1]
    assert "expectation" not in tool_results(request)[-1]
    assert "expected 4 rows" not in system_of(request) and "did not produce what was expected" not in system_of(request)
