"""Staged plans: checked whole before anything runs, queries of a parallel stage run together,
a failed step fails only the steps that need it, and a repeated plan is reused step by step.

Real DuckDB, a real kernel, the real openai SDK against the scripted model."""

from __future__ import annotations

import json

import nbformat
import pytest

from jupyter_analyst.agent.tools.staged_plan import MAX_STEPS, read_plan
from jupyter_analyst.errors import InvalidArguments
from jupyter_analyst.testing import call_step, text_step as answer

#: Rows each of three independent queries sums: enough that a run lasts far longer (most
#: of a second) than the jitter of when its events are stored, so runs one after another
#: could not be taken for runs side by side.
SLOW_ROWS = 200_000_000
SLOW_QUERIES = {
    name: f"SELECT {n} AS q, SUM((x * {n}) % 7) AS s FROM range({SLOW_ROWS}) AS t(x)"
    for n, name in enumerate(("first", "second", "third"), start=1)
}
REVENUE = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r ON o.region_id = r.region_id "
           "GROUP BY r.region ORDER BY r.region")


def sql(step_id: str, query: str, name: str, inputs=()) -> dict:
    return {"id": step_id, "tool": "run_sql", "arguments": {"sql": query, "name": name}, "inputs": list(inputs)}


def py(step_id: str, code: str, inputs=()) -> dict:
    return {"id": step_id, "tool": "run_python", "arguments": {"code": code}, "inputs": list(inputs)}


def plan_call(*stages: tuple[str, list[dict]], goal: str = "several datasets at once") -> dict:
    return call_step("plan", goal=goal, stages=[{"mode": mode, "steps": steps} for mode, steps in stages])


THREE_AND_SUM = plan_call(
    ("parallel", [sql(f"q{n}", query, name) for n, (name, query) in enumerate(SLOW_QUERIES.items(), start=1)]),
    ("sequence", [py("total", "print(int(first.s[0] + second.s[0] + third.s[0]))", inputs=["q1", "q2", "q3"])]),
)


def _of(a, kind: str, **match) -> list:
    return [e for e in a.of_type(kind) if all(getattr(e, k) == v for k, v in match.items())]


def _epoch(ts: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def test_a_plan_runs_its_queries_together_then_its_python_step(analyst):
    a = analyst({"turns": [{"steps": [THREE_AND_SUM, answer()]}]})
    out = a.run("three totals and their sum")
    assert out.status == "completed", out.error
    assert out.tool_calls == {"executed": 4, "reused": 0, "blocked": 0}

    (made,) = a.of_type("plan")
    assert [[s.id for s in stage.steps] for stage in made.stages] == [["q1", "q2", "q3"], ["total"]]
    starts = {e.call_id: e for e in a.of_type("tool_call") if e.tool in ("run_sql", "run_python")}
    ends = {e.call_id: e for e in a.of_type("tool_result") if e.tool in ("run_sql", "run_python")}
    queries = [f"{made.call_id}.q{n}" for n in (1, 2, 3)]
    # Every query was under way before any of them ended (each step says it runs before it
    # is checked), and their runs overlapped: each began (its end less its duration, which
    # counts from the moment its checked SQL started) before any of them ended.
    running = {e.step_call_id: e.seq for e in _of(a, "plan_step", status="running")}
    assert max(running[q] for q in queries) < min(ends[q].seq for q in queries)
    spans = [(_epoch(ends[q].ts) - ends[q].duration_s, _epoch(ends[q].ts)) for q in queries]
    assert max(begin for begin, _ in spans) < min(end for _, end in spans)
    # The Python step started only after every query it needs had ended.
    total = f"{made.call_id}.total"
    assert starts[total].seq > max(ends[q].seq for q in queries)
    assert all(ends[c].status == "ok" for c in [*queries, total])
    expected = sum(sum((x * n) % 7 for x in range(7)) * (SLOW_ROWS // 7) for n in (1, 2, 3))
    assert ends[total].result["stdout"].strip().isdigit() and abs(int(ends[total].result["stdout"]) - expected) < 100

    steps = _of(a, "plan_step", status="ok")
    assert sorted(s.step_id for s in steps) == ["q1", "q2", "q3", "total"]
    (result,) = _of(a, "tool_result", tool="plan")
    assert result.status == "ok" and result.result["succeeded"] == 4
    # The model was told each step's result in the plan call's one tool message.
    told = json.loads([m for m in a.server.requests[-1]["messages"] if m["role"] == "tool"][-1]["content"])
    assert [s["id"] for s in told["steps"]] == ["q1", "q2", "q3", "total"]
    assert told["steps"][0]["result"]["dataset"] == "first"
    # Each step by its number, its id and what it does; never a call id no tool takes.
    assert [(s["step"], s["does"]) for s in told["steps"][:3]] == [
        (1, "query → first"), (2, "query → second"), (3, "query → third")]
    assert made.call_id not in json.dumps(told)


def test_a_concurrency_of_one_runs_the_queries_one_after_another(analyst):
    a = analyst({"turns": [{"steps": [THREE_AND_SUM, answer()]}]})
    out = a.run("three totals, one at a time", plan_concurrency=1)
    assert out.status == "completed", out.error
    starts = [e for e in a.of_type("tool_call") if e.tool == "run_sql"]
    ends = [e for e in a.of_type("tool_result") if e.tool == "run_sql"]
    for earlier_end, later_start in zip(ends, starts[1:], strict=False):
        assert earlier_end.seq < later_start.seq


@pytest.mark.parametrize("stages, reason", [
    ([("sequence", [py("a", "x = 1", ["b"]), py("b", "y = 1", ["a"])])], "plan_cycle"),
    ([("sequence", [py("a", "x = 1", ["a"])])], "plan_cycle"),
    ([("parallel", [sql("a", REVENUE, "revenue", ["ghost"])])], "plan_undefined_input"),
    ([("parallel", [sql("a", REVENUE, "revenue"), {"id": "b", "tool": "drop_table", "arguments": {}}])],
     "unknown_tool"),
    ([("parallel", [sql("a", REVENUE, "revenue"), py("b", "print(revenue)", ["a"])])], "plan_order"),
    ([("sequence", [py("b", "print(revenue)", ["a"])]), ("parallel", [sql("a", REVENUE, "revenue")])], "plan_order"),
    ([("parallel", [sql("a", REVENUE, "revenue"), sql("b", "SELECT 1 AS one", "revenue")])], "invalid_plan"),
    ([("parallel", [sql("a", "", "revenue")])], "empty_payload"),
    ([("parallel", [sql("a", REVENUE, "print")])], "reserved_name"),
])
def test_a_plan_that_cannot_run_is_refused_before_anything_runs(analyst, stages, reason):
    a = analyst({"turns": [{"steps": [plan_call(*stages), answer()]}]})
    out = a.run("a bad plan")
    assert out.status == "completed"  # the model is told, and answers
    (refused,) = _of(a, "tool_result", tool="plan")
    assert refused.status == "refused" and refused.result["error"]["reason"] == reason
    assert refused.result["error"]["hint"]
    assert [g.reason for g in a.of_type("guard")] == ["plan_refused"]
    # Nothing ran: no step call, no plan, no artifact, no state change past planning.
    assert not [e for e in a.of_type("tool_call") if e.tool != "plan"]
    assert a.of_type("plan") == [] and a.of_type("artifact") == []
    assert out.tool_calls == {"executed": 0, "reused": 0, "blocked": 1}


def test_a_failed_query_fails_only_the_steps_that_need_it(analyst):
    bad = "SELECT CAST(region AS INTEGER) AS n FROM regions"  # valid SQL; fails as it runs
    a = analyst({"turns": [{"steps": [plan_call(
        ("parallel", [sql("good", REVENUE, "revenue"), sql("bad", bad, "broken")]),
        ("sequence", [py("uses_bad", "print(len(broken))", ["bad"]),
                      py("after", "print(len(broken) + 1)", ["uses_bad"]),
                      py("uses_good", "print(round(revenue.revenue.sum(), 2))", ["good"])]),
    ), answer()]}]})
    out = a.run("two datasets, one of them broken")
    status = {e.step_id: e.status for e in a.of_type("plan_step") if e.status != "running"}
    assert status == {"good": "ok", "bad": "error", "uses_bad": "skipped", "after": "skipped", "uses_good": "ok"}
    skipped = {e.step_id: e.message for e in _of(a, "plan_step", status="skipped")}
    assert "'bad'" in skipped["uses_bad"] and "'uses_bad'" in skipped["after"]
    # Skipped steps never ran: no call of theirs exists.
    ran = {e.call_id.rsplit(".", 1)[1] for e in a.of_type("tool_call") if e.tool != "plan"}
    assert ran == {"good", "bad", "uses_good"}
    (result,) = _of(a, "tool_result", tool="plan")
    assert result.status == "error" and (result.result["failed"], result.result["skipped"]) == (1, 2)
    assert out.tool_calls["executed"] == 3
    # The query's failure is the model's to fix: the turn itself completes with its answer.
    assert out.status == "completed"


def test_a_repeated_plan_is_reused_step_by_step(analyst):
    a = analyst({"turns": [{"steps": [THREE_AND_SUM, answer()]}]})
    first = a.run("three totals")
    assert first.tool_calls["executed"] == 4
    a.events.clear()
    again = a.run("three totals again", thread=first.thread_id)
    assert again.status == "completed"
    assert again.tool_calls == {"executed": 0, "reused": 4, "blocked": 0}
    assert again.artifacts["created"] == 0
    assert all(e.reused for e in _of(a, "plan_step", status="ok")) and len(_of(a, "plan_step", status="ok")) == 4
    (result,) = _of(a, "tool_result", tool="plan")
    assert result.reused is True


def test_the_notebook_shows_the_plan_and_its_steps(analyst):
    a = analyst({"turns": [{"steps": [plan_call(
        ("parallel", [sql("rev", REVENUE, "revenue"), sql("n", "SELECT COUNT(*) AS n FROM orders", "order_count")]),
        ("sequence", [py("share", "print(round(revenue.revenue.sum() / order_count.n[0], 2))", ["rev", "n"])]),
        goal="average revenue per order"), answer()]}]})
    out = a.run("average revenue per order")
    assert out.status == "completed", out.error
    nb = nbformat.read(out.notebook, as_version=4)
    nbformat.validate(nb)
    (plan_cell,) = [c for c in nb.cells if c.metadata.get("jupyter_analyst", {}).get("role") == "plan"]
    assert plan_cell.cell_type == "markdown"
    assert "average revenue per order" in plan_cell.source
    assert "| 1 (parallel) | `rev` | run_sql | query → revenue |  | ✅ ok |" in plan_cell.source
    assert "| 2 (sequence) | `share` | run_python |" in plan_cell.source and "`rev`, `n`" in plan_cell.source
    after = nb.cells[nb.cells.index(plan_cell) + 1:]
    tools = [c.metadata["jupyter_analyst"]["tool"] for c in after if c.cell_type == "code"]
    assert sorted(tools[:2]) == ["run_sql", "run_sql"] and tools[2] == "run_python"


def test_plan_arguments_in_other_shapes_are_read():
    # Steps without stages are staged by their inputs; arguments beside the step's own keys.
    plan, rescues = read_plan({"steps": [
        {"id": "a", "tool": "sql", "sql": "SELECT 1 AS one", "name": "one"},
        {"id": "b", "tool": "run_sql", "arguments": {"query": "SELECT 2 AS two", "name": "two"}},
        {"id": "c", "tool": "python", "arguments": {"code": "print(one, two)"}, "inputs": ["a", "b"]},
    ]})
    assert [(s.mode, [p.id for p in s.steps]) for s in plan.stages] == [("parallel", ["a", "b"]), ("parallel", ["c"])]
    assert plan.stages[0].steps[1].arguments == {"sql": "SELECT 2 AS two", "name": "two"}
    assert {"plan:staged_by_inputs", "plan:flat_arguments", "alias:query"} <= set(rescues)


@pytest.mark.parametrize("raw, reason", [
    ({}, "invalid_plan"),
    ({"stages": []}, "invalid_plan"),
    ({"stages": "q1 then q2"}, "invalid_plan"),
    ({"stages": [{"mode": "sideways", "steps": [sql("a", "SELECT 1 AS x", "x")]}]}, "invalid_plan"),
    ({"stages": [{"mode": "parallel", "steps": []}]}, "invalid_plan"),
    ({"stages": [{"mode": "parallel", "steps": ["SELECT 1"]}]}, "invalid_plan"),
    ({"stages": [{"mode": "parallel", "steps": [sql("a", "SELECT 1 AS x", "x"), sql("a", "SELECT 2 AS y", "y")]}]},
     "invalid_plan"),
    ({"stages": [{"mode": "parallel", "steps": [sql("a b", "SELECT 1 AS x", "x")]}]}, "invalid_plan"),
    ({"stages": [{"mode": "parallel", "steps": [sql(f"s{n}", "SELECT 1 AS x", f"x{n}") for n in range(MAX_STEPS + 1)]}]},
     "invalid_plan"),
    ({"stages": [{"mode": "parallel", "steps": [{"id": "a", "tool": "run_sql", "arguments": "not json"}]}]},
     "invalid_arguments"),
    ({"stages": [{"mode": "parallel", "steps": [{"id": "a", "tool": "run_sql", "arguments": {"sql": 1, "name": "x"}}]}]},
     "invalid_arguments"),
    ({"stages": [{"mode": "parallel", "steps": [py("a", "x = 1", inputs=[{"id": "b"}])]}]}, "invalid_plan"),
])
def test_malformed_plans_are_refused_with_a_reason(raw, reason):
    with pytest.raises(InvalidArguments) as refused:
        read_plan(raw)
    assert refused.value.reason == reason and refused.value.hint


def test_stopping_a_turn_mid_plan_stops_its_running_queries_and_keeps_what_finished(tmp_path, sales_db):
    """A stop while a parallel stage runs: the query that finished is kept, the one that would
    run for hours is interrupted (the test ends only if it is), no staged file is left."""
    import asyncio

    from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
    from jupyter_analyst.testing import ScriptedModelServer

    endless = ("SELECT COUNT(*) AS n FROM regions, range(100000000000000) AS r(x) "
               "WHERE (x * 7 + length(regions.region)) % 13 = 5")
    script = {"turns": [{"steps": [plan_call(
        ("parallel", [sql("quick", REVENUE, "revenue"), sql("endless", endless, "forever")]),
        ("sequence", [py("after", "print(len(forever))", ["endless"])]),
    ), answer()]}]}
    seen: list = []

    async def scenario() -> None:
        quick_done = asyncio.Event()

        def on_event(event) -> None:
            seen.append(event)
            if event.type == "plan_step" and event.step_id == "quick" and event.status == "ok":
                quick_done.set()

        with ScriptedModelServer(script) as server:
            model = ModelSettings(model="jupyter-analyst-scripted", base_url=server.base_url, api_key="x")
            task = asyncio.create_task(run_turn(
                TurnRequest(prompt="a plan to stop", source=str(sales_db)),
                config=AnalystConfig(workspace=tmp_path / "ws", summarizer=False), model=model, on_event=on_event))
            await quick_done.wait()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(scenario())
    (ended,) = [e for e in seen if e.type == "turn_ended"]
    assert ended.status == "interrupted"
    assert [e.name for e in seen if e.type == "artifact"] == ["revenue"]
    assert not [e for e in seen if e.type == "tool_call" and e.call_id.endswith(".after")]
    staged = tmp_path / "ws" / "artifacts" / ".incoming"
    assert staged.is_dir() and not [p for p in staged.iterdir() if p.suffix == ".parquet"]
    # The database is free again: nothing still runs a query on it.
    import duckdb

    duckdb.connect(str(sales_db)).close()


def test_the_next_turn_is_told_each_step_the_plan_ran(analyst):
    """A plan is one call of several steps: the next request counts its steps, not the call."""
    cheap = plan_call(
        ("parallel", [sql("q1", "SELECT COUNT(*) AS n FROM orders", "order_count"),
                      sql("q2", "SELECT COUNT(*) AS n FROM regions", "region_count")]),
        ("sequence", [py("ratio", "print(order_count.n[0] / region_count.n[0])", inputs=["q1", "q2"])]),
    )
    a = analyst({"turns": [{"match": "^orders", "steps": [cheap, answer("[scripted] 480 orders a region")]},
                           {"match": "^and", "steps": [answer("[scripted] ok")]}]})
    first = a.run("orders per region")
    assert first.status == "completed", first.error
    a.run("and now?", thread=first.thread_id)
    request = next(r for r in a.server.requests if r["messages"][-1]["content"] == "and now?")
    system = request["messages"][0]["content"]
    assert "Previous turn (1): completed in 3 steps." in system, system[-800:]


def test_a_python_step_of_a_plan_is_told_by_what_it_made(analyst):
    chart = ("import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.bar(rev.region, rev.revenue)\n"
             "ax.set_title('Revenue by region')\nplt.show()")
    a = analyst({"turns": [{"steps": [
        plan_call(("sequence", [sql("q1", REVENUE, "rev"), py("c1", chart, inputs=["q1"])]), goal="a chart"),
        answer(),
    ]}]})
    out = a.run("chart revenue by region")
    assert out.status == "completed", out.error
    told = json.loads([m for m in a.server.requests[-1]["messages"] if m["role"] == "tool"][-1]["content"])
    assert [s["does"] for s in told["steps"]] == ["query → rev", 'python → image "Revenue by region.png"']
