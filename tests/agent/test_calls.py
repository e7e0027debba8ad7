"""Each call of a multi-call reply is judged on its own, as the model sees it in its next request."""

from __future__ import annotations

import json

from jupyter_analyst.testing import text_step

GOOD_SQL = "SELECT region, country FROM regions ORDER BY region"


def tool_results(request: dict) -> dict[str, dict]:
    return {m["tool_call_id"]: json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"}


def test_a_failing_call_beside_a_good_one_does_not_stop_it(analyst):
    reply = {"tool_calls": [
        {"name": "run_python", "arguments": {"code": "raise RuntimeError('boom')"}},
        {"name": "run_sql", "arguments": {"sql": GOOD_SQL, "name": "regions_list"}},
        {"name": "run_python", "arguments": {"code": "print(len(regions_list))"}},
    ]}
    a = analyst({"turns": [{"steps": [reply, text_step()]}]})
    out = a.run("three calls at once")
    failed, fetched, printed = tool_results(a.server.requests[1]).values()
    assert "RuntimeError: boom" in failed["error"]["message"]
    assert fetched["rows"] == 5 and fetched["shown"] == "all 5 rows" and "error" not in fetched
    assert printed["stdout"] == "5\n"
    assert out.status == "completed" and out.tool_calls["blocked"] == 0


def test_a_rescued_call_is_echoed_as_a_call_the_model_can_copy(analyst):
    # An argument the tool does not take is dropped; the call sent back is the canonical one,
    # with no marker of the rescue for the model to copy into its next calls.
    reply = {"tool_calls": [{"name": "run_sql", "arguments": {"sql": GOOD_SQL, "name": "regions_list",
                                                               "intent": "list the regions"}}]}
    a = analyst({"turns": [{"steps": [reply, text_step()]}]})
    a.run("the regions")
    (echoed,) = [c for m in a.server.requests[1]["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert json.loads(echoed["function"]["arguments"]) == {"sql": GOOD_SQL, "name": "regions_list"}
