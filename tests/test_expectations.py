"""The expectation matcher: ids, then type, then count (then columns); skip without structure."""

from __future__ import annotations

import pytest

from jupyter_analyst.agent.guards.expectations import Observed, expectation_delta, match, observe
from jupyter_analyst.agent_state import AgentState, apply_delta
from jupyter_analyst.artifacts import Artifact

DATASET = Observed(("art_a",), ("dataset",), 4, ("region", "revenue"))
CHART = Observed(("art_p", "art_c"), ("image", "file"), 2, None)


@pytest.mark.parametrize(("expect", "seen", "status", "rule"), [
    ({"artifact_ids": ["art_a"]}, DATASET, "confirmed", "ids"),
    ({"artifact_ids": ["art_zz"]}, DATASET, "failed", "ids"),
    ({"artifact_type": "dataset"}, DATASET, "confirmed", "type"),
    ({"artifact_type": "image"}, DATASET, "failed", "type"),
    ({"rows": 4}, DATASET, "confirmed", "count"),
    ({"rows": 5}, DATASET, "failed", "count"),
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
    assert observe("run_python", "ok", {"stdout": "42"}, []) == Observed()
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
