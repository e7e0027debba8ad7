"""The loop end to end: a real DuckDB file, a real kernel, the real openai SDK over HTTP.

The only stand-in is the model's words, replayed by the scripted model server.
"""

from __future__ import annotations

import json

import nbformat
import pytest

from jupyter_analyst.testing import python_step as py_step, sql_step, text_step as answer

REVENUE_SQL = (
    "SELECT r.region, SUM(o.revenue) AS revenue FROM orders o "
    "JOIN regions r ON o.region_id = r.region_id GROUP BY r.region ORDER BY r.region"
)
# The same query, written differently: layout, case and table aliases do not count.
REVENUE_SQL_AGAIN = (
    "select x.region,\n  sum(y.revenue) as revenue\nfrom orders as y join regions as x\n"
    "  on y.region_id = x.region_id\ngroup by x.region order by x.region"
)
CHART = (
    "import matplotlib.pyplot as plt\n"
    "ax = revenue.plot.bar(x='region', y='revenue', legend=False)\n"
    "plt.tight_layout()\n"
    "revenue.to_csv('outputs/revenue.csv', index=False)\n"
    "plt.show()\n"
    "print(round(revenue.revenue.sum(), 2))"
)
# The same code with comments and another layout.
CHART_AGAIN = "# again\n" + CHART.replace("legend=False", "legend = False") + "\n\n# end\n"


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


FIRST_AND_CONTINUE = {
    "turns": [
        {"match": "^continue", "steps": [sql_step(REVENUE_SQL_AGAIN, "revenue"), py_step(CHART_AGAIN), answer()]},
        {"match": ".", "steps": [sql_step(REVENUE_SQL, "revenue"), py_step(CHART), answer()]},
    ]
}


def test_first_turn_then_continue_reuses_everything(analyst):
    a = analyst(FIRST_AND_CONTINUE)
    first = a.run("Revenue by region, with a chart")
    assert first.status == "completed"
    assert first.tool_calls == {"executed": 2, "reused": 0, "blocked": 0}
    assert first.artifacts["created"] == 3  # dataset, figure, outputs/revenue.csv
    assert first.transitions == ["planning", "data_fetching", "analyzing", "presenting", "completed"]

    second = a.run("continue", thread=first.thread_id)
    assert second.status == "completed"
    assert second.tool_calls == {"executed": 0, "reused": 2, "blocked": 0}
    assert second.artifacts["created"] == 0
    assert second.artifacts["reused"] == 3
    assert second.artifacts["total"] == 3
    skipped = [e for e in a.of_type("guard") if e.reason == "duplicate_tool_call_skipped"]
    assert len(skipped) == 2

    nb = nbformat.read(second.notebook, as_version=4)
    nbformat.validate(nb)
    steps = [c for c in nb.cells if c.metadata.get("jupyter_analyst", {}).get("tool")]
    assert [c.metadata.jupyter_analyst.reused for c in steps] == [False, False, True, True]
    assert any("image/png" in o.get("data", {}) for o in steps[1].outputs)


def test_inventory_is_in_every_model_call(analyst):
    a = analyst(FIRST_AND_CONTINUE)
    first = a.run("Revenue by region")
    requests = a.server.requests
    dataset_event = next(e for e in a.of_type("artifact") if e.artifact_type == "dataset")
    # The call after run_sql (and every later one) has the dataset's artifact id: in this turn
    # its result, under a system message that holds through the turn; in the next, the system message.
    assert dataset_event.artifact_id not in requests[0]["messages"][0]["content"]
    for request in requests[1:]:
        assert request["messages"][0] == requests[0]["messages"][0]
        assert dataset_event.artifact_id in json.dumps(request["messages"])
    a.run("continue", thread=first.thread_id)
    assert dataset_event.artifact_id in a.server.requests[-1]["messages"][0]["content"]


def test_continue_in_a_new_process_reuses(analyst, tmp_path):
    import os
    import subprocess
    import sys

    a = analyst(FIRST_AND_CONTINUE)
    env = {**os.environ, "OPENAI_BASE_URL": a.server.base_url, "OPENAI_API_KEY": "x"}
    cmd = [sys.executable, "-m", "jupyter_analyst.cli", "run", "--workspace", str(a.workspace), "--json"]
    first = subprocess.run(
        [*cmd, "--db", str(a.source), "--prompt", "Revenue by region"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert first.returncode == 0, first.stderr
    out1 = json.loads(first.stdout)
    second = subprocess.run(
        [*cmd, "--thread", out1["thread_id"], "--prompt", "continue"],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert second.returncode == 0, second.stderr
    out2 = json.loads(second.stdout)
    for key in ("thread_id", "turn_id", "status", "answer", "transitions", "tool_calls", "artifacts", "notebook"):
        assert key in out2
    assert out2["tool_calls"]["executed"] == 0 and out2["tool_calls"]["reused"] == 2
    assert out2["artifacts"]["created"] == 0


def test_rerun_executes_again_but_stores_nothing_new(analyst):
    a = analyst(FIRST_AND_CONTINUE)
    first = a.run("Revenue by region")
    again = a.run("continue", thread=first.thread_id, rerun=True)
    assert again.tool_calls["executed"] == 2 and again.tool_calls["reused"] == 0
    assert again.artifacts["created"] == 0 and again.artifacts["total"] == 3
    prevented = [e for e in a.of_type("guard") if e.reason == "duplicate_artifact_prevented"]
    assert len(prevented) == 3


def test_duplicate_call_within_a_turn_is_skipped(analyst):
    a = analyst({"turns": [{"steps": [sql_step(REVENUE_SQL, "revenue"), sql_step(REVENUE_SQL_AGAIN, "revenue"), answer()]}]})
    out = a.run("twice")
    assert out.tool_calls == {"executed": 1, "reused": 1, "blocked": 0}
    results = a.of_type("tool_result")
    assert results[1].reused and results[1].artifact_ids == results[0].artifact_ids


def test_a_query_of_the_current_date_is_reused_that_day_and_run_again_the_next(analyst):
    """Its text is the same tomorrow; its answer is not: the step key takes the day it ran.
    The days are the clock's (``_clock.moved``), not waited for."""
    from datetime import UTC, datetime

    from jupyter_analyst._clock import moved

    recent = ("SELECT COUNT(*) AS n FROM orders "
              "WHERE CAST(order_date AS DATE) > current_date - INTERVAL 30000 DAY")
    fixed = "SELECT COUNT(*) AS n FROM orders WHERE CAST(order_date AS DATE) > DATE '1990-01-01'"
    a = analyst({"turns": [{"steps": [sql_step(recent, "recent"), sql_step(fixed, "fixed"), answer()]}]})
    with moved(lambda: datetime(2031, 3, 1, 9, tzinfo=UTC)):
        first = a.run("orders of the last days")
        assert first.tool_calls == {"executed": 2, "reused": 0, "blocked": 0}
    with moved(lambda: datetime(2031, 3, 1, 23, 59, tzinfo=UTC)):
        later = a.run("again", thread=first.thread_id)
        assert later.tool_calls == {"executed": 0, "reused": 2, "blocked": 0}
    with moved(lambda: datetime(2031, 3, 2, 0, 1, tzinfo=UTC)):
        tomorrow = a.run("again", thread=first.thread_id)
    # The query of today runs again; the one of fixed dates is still reused.
    assert tomorrow.tool_calls == {"executed": 1, "reused": 1, "blocked": 0}
    results = {e.call_id: e for e in a.of_type("tool_result")}
    calls = a.of_type("tool_call")[-2:]
    assert [(c.arguments["name"], results[c.call_id].reused) for c in calls] == [("recent", False), ("fixed", True)]


def test_changed_filter_is_a_new_step(analyst):
    filtered = REVENUE_SQL.replace("GROUP BY", "WHERE o.quantity > 5 GROUP BY")
    a = analyst({"turns": [{"steps": [sql_step(REVENUE_SQL, "revenue"), sql_step(filtered, "revenue"), answer()]}]})
    out = a.run("filtered")
    assert out.tool_calls["executed"] == 2 and out.artifacts["created"] == 2


def test_equivalent_artifact_is_stored_once(analyst):
    write = "open('outputs/{}.txt', 'w').write('same bytes')"
    a = analyst({"turns": [{"steps": [py_step(write.format("a")), py_step(write.format("b")), answer()]}]})
    out = a.run("write twice")
    assert out.tool_calls["executed"] == 2
    assert out.artifacts == {"created": 1, "reused": 1, "total": 1}
    assert [e.reason for e in a.of_type("guard")] == ["duplicate_artifact_prevented"]


def test_argument_drift_and_empty_payloads(analyst):
    steps = [
        # `query` for `sql`, nested under `arguments`, JSON in a string.
        {"tool_calls": [{"name": "run_sql", "raw_arguments": json.dumps(
            json.dumps({"arguments": {"query": REVENUE_SQL, "name": "revenue"}}))}]},
        {"tool_calls": [{"name": "run_python", "arguments": {"code": "   "}}]},
        {"tool_calls": [{"name": "run_python", "arguments": {"script": "print(len(revenue))"}}]},
        {"tool_calls": [{"name": "run_python", "raw_arguments": "{not json"}]},
        {"tool_calls": [{"name": "run_python", "raw_arguments": ""}]},
        answer(),
    ]
    a = analyst({"turns": [{"steps": steps}]})
    out = a.run("drift")
    assert out.status == "completed"
    results = a.of_type("tool_result")
    assert results[0].status == "ok" and results[0].result["rows"] == 5
    assert results[1].status == "refused"
    assert results[2].status == "ok" and results[2].result["stdout"].strip() == "5"
    assert results[3].status == "refused" and results[3].result["error"]["reason"] == "invalid_arguments"
    assert results[4].status == "refused"
    reasons = [e.reason for e in a.of_type("guard")]
    assert "empty_python_payload_retried" in reasons and "invalid_arguments" in reasons
    # The guided retry told the model what to do.
    retry_msg = json.loads(tool_messages(a.server.requests[2])[-1]["content"])
    assert "hint" in retry_msg["error"]


@pytest.mark.parametrize("quirk", ["id_first_chunk_only", "id_changes", "no_id", "split_arguments"])
def test_stream_id_quirks_still_run_the_call(analyst, quirk):
    a = analyst({"turns": [{"steps": [sql_step(REVENUE_SQL, "revenue", quirk=quirk), answer()]}]})
    out = a.run("quirk")
    assert out.tool_calls["executed"] == 1
    final = a.server.requests[-1]["messages"]
    call_ids = [c["id"] for m in final if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    answered = [m["tool_call_id"] for m in final if m["role"] == "tool"]
    assert call_ids and call_ids == answered, "every call answered under the id it was sent with"


def test_python_error_is_reported_and_the_loop_goes_on(analyst):
    a = analyst({"turns": [{"steps": [py_step("1/0"), py_step("print('recovered')"), answer()]}]})
    out = a.run("error then recover")
    assert out.status == "completed"
    told = json.loads(tool_messages(a.server.requests[1])[-1]["content"])
    assert "ZeroDivisionError" in told["error"]["message"]
    assert a.of_type("tool_result")[1].result["stdout"].strip() == "recovered"
    assert out.transitions == ["planning", "analyzing", "error", "planning", "analyzing", "presenting", "completed"]


def test_unknown_column_answered_with_suggestions(analyst):
    bad = "SELECT regon, SUM(revenue) AS revenue FROM regions JOIN orders USING (region_id) GROUP BY regon"
    a = analyst({"turns": [{"steps": [sql_step(bad, "revenue"), answer()]}]})
    out = a.run("typo")
    told = json.loads(tool_messages(a.server.requests[1])[-1]["content"])
    assert told["error"]["reason"] == "unknown_column"
    assert "region" in told["error"]["suggestions"]
    assert out.tool_calls["blocked"] == 1 and out.tool_calls["executed"] == 0


def test_write_attempt_refused_and_nothing_written(analyst, sales_db):
    a = analyst({"turns": [{"steps": [sql_step("DELETE FROM orders", "x"), answer()]}]})
    a.run("delete")
    told = json.loads(tool_messages(a.server.requests[1])[-1]["content"])
    assert told["error"]["reason"] == "sql_not_read_only"
    import duckdb

    with duckdb.connect(str(sales_db), read_only=True) as conn:
        assert conn.execute("SELECT COUNT(*) FROM orders").fetchone()[0] == 2400


def test_a_failed_call_does_not_lock_out_the_next_of_its_reply(analyst):
    # Two calls in one reply: the first fails (state -> error); the second is judged on its
    # own: the turn is planned past the failure, as before the next model call, and it runs.
    step = {"tool_calls": [
        {"name": "run_python", "arguments": {"code": "raise RuntimeError('boom')"}},
        {"name": "run_sql", "arguments": {"sql": REVENUE_SQL, "name": "revenue"}},
    ]}
    a = analyst({"turns": [{"steps": [step, answer()]}]})
    out = a.run("forbidden")
    assert "invalid_state" not in [e.reason for e in a.of_type("guard")]
    assert out.tool_calls == {"executed": 2, "reused": 0, "blocked": 0}
    assert out.artifacts["total"] == 1
    assert out.transitions[:5] == ["planning", "analyzing", "error", "planning", "data_fetching"]


def test_step_cap_ends_the_turn(analyst):
    steps = [py_step(f"x = {i}") for i in range(10)]
    a = analyst({"turns": [{"steps": steps}]})
    out = a.run("loop forever", max_steps=3)
    assert out.tool_calls["executed"] == 3
    assert "step_limit_reached" in out.counters
    assert a.server.requests[-1].get("tools") in (None, [])


def test_dying_kernel_is_reported_restarted_and_rehydrated(analyst):
    steps = [
        sql_step(REVENUE_SQL, "revenue"),
        py_step("import os; os._exit(1)"),
        py_step("print(len(revenue))"),
        answer(),
    ]
    a = analyst({"turns": [{"steps": steps}]})
    out = a.run("die")
    results = a.of_type("tool_result")
    assert results[1].status == "error" and results[1].result["error"]["reason"] == "kernel_died"
    assert results[2].status == "ok" and results[2].result["stdout"].strip() == "5"
    assert out.status == "completed"


def test_new_process_kernel_is_rehydrated_with_earlier_python_state(analyst):
    a = analyst({"turns": [
        {"match": "second", "steps": [py_step("print(total)"), answer()]},
        {"match": "first", "steps": [sql_step(REVENUE_SQL, "revenue"), py_step("total = len(revenue) * 2"), answer()]},
    ]})
    first = a.run("first")
    second = a.run("second", thread=first.thread_id)
    assert a.of_type("tool_result")[-1].result["stdout"].strip() == "10"
    assert second.tool_calls["executed"] == 1


def test_events_are_numbered_and_persisted(analyst):
    from jupyter_analyst.workspace import Workspace

    a = analyst(FIRST_AND_CONTINUE)
    out = a.run("Revenue by region")
    seqs = [e.seq for e in a.events]
    assert seqs == list(range(1, len(seqs) + 1))
    ws = Workspace(a.workspace)
    try:
        stored = ws.store.events(out.thread_id)
    finally:
        ws.close()
    assert [e.model_dump() for e in stored] == [e.model_dump() for e in a.events]


def test_memory_limit_reported_to_the_model_and_the_turn_goes_on(analyst):
    from jupyter_analyst.kernel import SandboxPolicy

    steps = [
        sql_step(REVENUE_SQL, "revenue"),
        py_step("x = bytearray(3 * 2**30); x[::4096] = b'y' * len(x[::4096])"),
        py_step("print(len(revenue))"),
        answer(),
    ]
    a = analyst({"turns": [{"steps": steps}]})
    out = a.run("memory bomb", sandbox=SandboxPolicy(memory_mb=768))
    bomb = a.of_type("tool_result")[1]
    assert bomb.status == "error"
    told = json.loads(tool_messages(a.server.requests[2])[-1]["content"])
    assert "memory" in told["error"]["message"].lower() or "MemoryError" in told["error"]["message"]
    assert a.of_type("tool_result")[2].result["stdout"].strip() == "5"
    assert out.status == "completed" and out.artifacts["total"] == 1
