"""The expectation matcher: ids, then type, then count (then columns); skip without structure.

An expectation belongs to the call that stated it; its verdict is a fact about that step,
told with the step's result, as the model sees it in its next requests."""

from __future__ import annotations

import json

import pytest

from jupyter_analyst.agent.guards.expectations import Observed, expectation_delta, match, observe
from jupyter_analyst.agent_state import AgentState, apply_delta
from jupyter_analyst.artifacts import Artifact
from jupyter_analyst.testing import sql_step, text_step

REVENUE = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r "
           "ON o.region_id = r.region_id GROUP BY r.region ORDER BY r.region")

DATASET = Observed(("art_a",), ("dataset",), 4, ("region", "revenue"))
CHART = Observed(("art_p", "art_c"), ("image", "file"), 2, None)


@pytest.mark.parametrize(("expect", "seen", "status", "rule"), [
    ({"artifact_ids": ["art_a"]}, DATASET, "confirmed", "ids"),
    ({"artifact_ids": ["art_zz"]}, DATASET, "failed", "ids"),
    ({"artifact_type": "dataset"}, DATASET, "confirmed", "type"),
    ({"artifact_type": "image"}, DATASET, "failed", "type"),
    ({"rows": 4}, DATASET, "confirmed", "rows"),
    ({"rows": 5}, DATASET, "failed", "rows"),
    ({"count": 2}, CHART, "confirmed", "count"),
    ({"count": 1}, CHART, "failed", "count"),
    ({"columns": ["REGION"]}, DATASET, "confirmed", "columns"),
    ({"columns": ["margin"]}, DATASET, "failed", "columns"),
    # Order: ids are judged first, so a wrong id fails even when the count is wrong too.
    ({"artifact_ids": ["art_zz"], "rows": 5}, DATASET, "failed", "ids"),
    ({"artifact_type": "image", "rows": 5}, DATASET, "failed", "type"),
    ({"rows": 4, "columns": ["margin"]}, DATASET, "failed", "columns"),
    # Nothing structured: an error, or a Python step that printed only.
    ({"rows": 4}, Observed(), "skipped", None),
    # A Python step that made nothing: a count of none holds, an expected chart fails.
    ({"count": 0}, Observed((), (), 0, None), "confirmed", "count"),
    ({"artifact_type": "image"}, Observed((), (), 0, None), "failed", "type"),
    ({"artifact_type": "image", "count": 1}, Observed((), (), 0, None), "failed", "type"),
    # Something structured, but nothing the expectation names: skipped, not confirmed.
    ({"columns": ["a"]}, CHART, "skipped", None),
])
def test_rules(expect, seen, status, rule):
    verdict = match(expect, seen)
    assert (verdict.status, verdict.rule) == (status, rule), verdict.detail


def _artifact(artifact_id: str, type_: str) -> Artifact:
    return Artifact(artifact_id=artifact_id, thread_id="t", name="n", type=type_, mime="x", created_at="now",
                    producer="sql", fingerprint="sha256:00", size=1)


def test_observe_reads_structured_results_only():
    sql = observe("run_sql", "ok", {"rows": 3, "columns": [{"name": "a", "type": "INT"}]}, [_artifact("art_1", "dataset")])
    assert sql == Observed(("art_1",), ("dataset",), 3, ("a",))
    # A Python step that only printed made no figure or file: counted, none.
    assert observe("run_python", "ok", {"stdout": "42"}, []) == Observed((), (), 0, None)
    assert not observe("run_sql", "error", {"rows": 3}, []).structured


def test_a_failure_is_recorded_as_the_step_s_expectation_not_an_assumption():
    verdict = match({"rows": 5}, DATASET)
    delta = expectation_delta(tool="run_sql", call_id="c1", expect={"rows": 5}, verdict=verdict, checked_at="now")
    state = apply_delta(AgentState(), delta)
    assert state.expectations["exp:c1"].status == "failed"
    assert state.expectations["exp:c1"].expected_count == 5
    assert state.expectations["exp:c1"].detail == "expected 5 rows, got 4"
    assert state.assumptions == {}


def test_a_confirmation_records_no_assumption():
    verdict = match({"rows": 4}, DATASET)
    state = apply_delta(AgentState(), expectation_delta(tool="run_sql", call_id="c1", expect={"rows": 4},
                                                        verdict=verdict, checked_at="now"))
    assert state.expectations["exp:c1"].status == "confirmed" and state.assumptions == {}



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
    assert stated["expectation"] == {"status": "failed", "rule": "rows", "detail": "expected 4 rows, got 5"}
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
