"""Agent memory end to end: a real DuckDB file, the real SDK over HTTP, the scripted model.

Most turns here fetch data only (no kernel), so they are quick; the prompts the agent sent
are read back from the scripted server.
"""

from __future__ import annotations

import asyncio
import json
import re


from jupyter_analyst.agent import ContextBudget
from jupyter_analyst.testing import call_step as tool, sql_step as sql, text_step as say

REVENUE = (
    "SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r "
    "ON o.region_id = r.region_id GROUP BY r.region"
)


def system_of(request):
    return request["messages"][0]["content"]


def requests_for(server, prompt):
    """The agent's requests whose last user message is ``prompt``."""
    out = []
    for request in server.requests:
        users = [m for m in request["messages"] if m["role"] == "user"]
        if users and users[-1]["content"] == prompt:
            out.append(request)
    return out


def test_data_intent_note_and_entities_are_recorded(analyst):
    a = analyst({"turns": [{"steps": [sql(REVENUE + " HAVING SUM(o.revenue) > 0", "revenue"), say()]}]})
    summary = a.run("revenue by region")
    result = next(e for e in a.of_type("tool_result") if e.tool == "run_sql").result
    intent = result["intent"]
    assert intent["tables"] == ["orders", "regions"]
    # Table aliases read as the tables they stand for; the key by its output name.
    assert intent["measures"] == ["revenue = SUM(orders.revenue)"]
    assert intent["dimensions"] == ["region"]
    # HAVING keeps groups: its own field, the aggregate said by the measure's name.
    assert intent["having"] == ["revenue > 0"] and intent["rows"] == result["rows"]
    assert "having: revenue > 0" in result["intent_note"]
    assert "from orders JOIN regions ON region_id;" in result["intent_note"]

    from jupyter_analyst.workspace import Workspace

    ws = Workspace(a.workspace)
    state = ws.store.agent_state(summary.thread_id)
    ws.close()
    dataset = state.entities["dataset:revenue"]
    assert dataset.derived_from == ["table:orders", "table:regions"]
    assert dataset.detail["artifact_id"] == result["artifact_id"]
    assert state.active["dataset"].value == "revenue"
    assert state.active["notebook"].value.endswith("notebook.ipynb")


def test_time_range_of_date_columns(analyst):
    a = analyst({"turns": [{"steps": [sql("SELECT order_date, revenue FROM orders WHERE region_id = 1", "north"), say()]}]})
    a.run("north orders")
    intent = next(e for e in a.of_type("tool_result") if e.tool == "run_sql").result["intent"]
    first, last = intent["time_range"]["order_date"]
    assert first <= last and first.startswith("20")
    assert intent["filters"] == ["region_id = 1"]


def test_expectation_mismatch_is_told_with_its_step_the_model_sees_next_call(analyst):
    a = analyst({"turns": [{"steps": [sql(REVENUE, "revenue", expect={"rows": 99, "columns": ["region"]}), say()]}]})
    a.run("revenue by region")
    result = next(e for e in a.of_type("tool_result") if e.tool == "run_sql").result
    assert result["expectation"]["status"] == "failed" and result["expectation"]["rule"] == "rows"
    assert [g.reason for g in a.of_type("guard")].count("expectation_failed") == 1
    second_call = a.server.requests[1]
    # The system message holds through the turn; the tool message of the same call carries
    # the verdict, which is not made an assumption.
    assert system_of(second_call) == system_of(a.server.requests[0])
    tool_message = next(m for m in second_call["messages"] if m["role"] == "tool")
    assert json.loads(tool_message["content"])["expectation"]["status"] == "failed"
    assert "expected 99 rows, got" in json.loads(tool_message["content"])["expectation"]["detail"]
    assert "expected 99 rows, got" not in system_of(second_call)


def test_invented_table_is_refused_with_suggestions(analyst):
    a = analyst({"turns": [{"steps": [sql("SELECT * FROM order_lines", "lines"), say()]}]})
    summary = a.run("show the order lines")
    result = next(e for e in a.of_type("tool_result") if e.tool == "run_sql")
    assert result.status == "error"
    assert result.result["error"]["reason"] == "unknown_table"
    assert "orders" in result.result["error"]["suggestions"]
    assert "unknown_name_refused" in [g.reason for g in a.of_type("guard")]
    assert summary.artifacts["total"] == 0


def test_invented_column_is_refused_with_suggestions(analyst):
    a = analyst({"turns": [{"steps": [sql("SELECT revenu FROM orders", "x"), say()]}]})
    a.run("revenue")
    error = next(e for e in a.of_type("tool_result") if e.tool == "run_sql").result["error"]
    assert error["reason"] == "unknown_column" and "revenue" in error["suggestions"]


def test_python_reading_an_undefined_dataset_is_refused_before_running(analyst):
    a = analyst({"turns": [{"steps": [sql(REVENUE, "revenue"), tool("run_python", code="print(revenu.sum())"), say()]}]})
    summary = a.run("total revenue")
    result = next(e for e in a.of_type("tool_result") if e.tool == "run_python")
    assert result.status == "refused"
    assert result.result["error"]["reason"] == "unknown_name"
    assert result.result["error"]["suggestions"] == ["revenue"]
    assert summary.tool_calls["executed"] == 1  # the SQL only: no kernel was started for the refusal


def test_answer_citing_a_missing_artifact_or_dataset_is_flagged(analyst):
    a = analyst({"turns": [{"steps": [
        sql(REVENUE, "revenue"),
        say("Revenue is in art_00000000deadbeef and in the dataset `revenue_by_month`; see dataset `revenue`."),
    ]}]})
    summary = a.run("revenue by region")
    answer = a.of_type("answer")[-1]
    assert answer.flagged and any("art_00000000deadbeef" in f for f in answer.flagged)
    assert any("revenue_by_month" in f for f in answer.flagged)
    assert not any(f.startswith("dataset `revenue`") for f in answer.flagged)
    assert "do not exist" in summary.answer and "invented_name_flagged" in summary.counters


def test_answer_citing_real_ids_is_not_flagged(analyst):
    a = analyst({"turns": [
        {"match": "^again", "steps": [say("PLACEHOLDER")]},
        {"steps": [sql(REVENUE, "revenue"), say()]},
    ]})
    first = a.run("revenue by region")
    artifact = next(e for e in a.of_type("artifact"))
    a.server.script.turns[0].steps[0].content = f"See {artifact.artifact_id} (dataset `revenue`)."
    a.run("again", thread=first.thread_id)
    assert a.of_type("answer")[-1].flagged == []


def test_active_dataset_answers_it_and_expires(analyst):
    script = {"turns": [
        {"match": "^plot it", "steps": [say("[scripted model] using the active dataset")]},
        {"steps": [sql(REVENUE, "revenue"), say()]},
    ]}
    a = analyst(script)
    first = a.run("revenue by region")
    a.run("plot it", thread=first.thread_id)
    (request,) = requests_for(a.server, "plot it")
    assert re.search(r"- active dataset: `revenue` \(art_\w+: from orders JOIN regions ON region_id;", system_of(request))

    b = analyst(script)
    b.workspace = b.workspace.with_name("ws-expiring")
    first = b.run("revenue by region", active_ttl_s=0.0)
    b.run("plot it", thread=first.thread_id, active_ttl_s=0.0)
    (request,) = requests_for(b.server, "plot it")
    assert "- active dataset:" not in system_of(request) and "- no active dataset when this turn began:" in system_of(request)
    # Expired context is gone from the prompt, not from the record.
    assert "Datasets (DataFrames in the kernel)" in system_of(request)


def test_find_resolves_loose_names(analyst):
    a = analyst({"turns": [{"steps": [tool("find", query="the region table"), say()]}]})
    a.run("what is in the region table?")
    result = next(e for e in a.of_type("tool_result") if e.tool == "find").result
    assert result["matches"][0] == {"kind": "table", "name": "regions", "score": 1.0, "detail": "3 columns"}
    b = analyst({"turns": [{"steps": [tool("find", query="zzqx", kind="artifact"), say()]}]})
    b.workspace = b.workspace.with_name("ws2")
    b.run("where is zzqx")
    result = next(e for e in b.of_type("tool_result") if e.tool == "find").result
    assert result["matches"] == [] and result["note"].startswith("no artifact matches 'zzqx'")


def test_ambiguous_request_keeps_candidates_and_asks(analyst):
    a = analyst({"turns": [
        {"match": "gross", "steps": [sql(REVENUE, "revenue"), say()]},
        {"steps": [tool("clarify", question="Which revenue do you mean?", candidates=["gross revenue", "net of returns"])]},
    ]})
    summary = a.run("show revenue")
    assert summary.answer.startswith("Which revenue do you mean?") and "1. gross revenue" in summary.answer
    assert summary.tool_calls["executed"] == 0 and "clarification_asked" in summary.counters
    from jupyter_analyst.workspace import Workspace

    ws = Workspace(a.workspace)
    (question,) = [i for i in ws.store.agent_state(summary.thread_id).items.values() if i.kind == "question"]
    ws.close()
    assert question.candidates == ["gross revenue", "net of returns"] and question.status == "active"

    a.run("gross revenue please", thread=summary.thread_id)
    ws = Workspace(a.workspace)
    resolved = ws.store.agent_state(summary.thread_id).items[question.id]
    ws.close()
    assert resolved.status == "resolved" and resolved.resolution == "gross revenue"


def test_greeting_is_answered_without_tools(analyst):
    a = analyst({"turns": [{"steps": [say("Hello! I analyse your data.")]}]})
    summary = a.run("Hello!")
    (request,) = a.server.requests
    assert "tools" not in request
    assert "chat_mode" in summary.counters and summary.tool_calls["executed"] == 0


def test_every_call_reports_its_context_usage(analyst):
    a = analyst({"turns": [{"steps": [sql(REVENUE, "revenue"), say()]}]})
    a.run("revenue by region")
    told = a.of_type("context_usage")
    # Each call is told twice: the estimate before it, then the same with the server's counts.
    assert [u.call for u in told] == [1, 1, 2, 2] and len(a.server.requests) == 2
    usages, served = told[0::2], told[1::2]
    for usage, counted, request in zip(usages, served, a.server.requests, strict=True):
        assert usage.prompt_tokens is None
        assert counted.model_dump(exclude={"seq", "ts", "prompt_tokens", "completion_tokens"}) == \
            usage.model_dump(exclude={"seq", "ts", "prompt_tokens", "completion_tokens"})
        assert counted.prompt_tokens == len(json.dumps(request["messages"])) // 4  # the scripted server's count
        sent = sum(len(json.dumps(m)) for m in request["messages"])
        assert usage.messages == len(request["messages"])
        assert abs(usage.tokens - sent / 4) < 0.2 * usage.tokens  # the estimate tracks what was sent
        assert {"rules", "state", "history", "current"} <= set(usage.parts)
    # Events come before the call they describe.
    kinds = [e.type for e in a.events]
    assert kinds.index("context_usage") < kinds.index("tool_call")


def test_tool_outputs_older_than_three_turns_are_absent(analyst):
    queries = {n: f"SELECT {n} AS turn_marker_{n}, COUNT(*) AS n FROM orders" for n in range(1, 6)}
    script = {"turns": [
        {"match": f"^question {n}$", "steps": [sql(queries[n], f"d{n}"), say(f"answer {n}")]} for n in range(1, 6)
    ]}
    a = analyst(script)
    thread = None
    for n in range(1, 6):
        thread = a.run(f"question {n}", thread=thread).thread_id
    first_call = requests_for(a.server, "question 5")[0]
    sent = json.dumps(first_call["messages"][1:])
    # Turns 3 and 4 (with turn 5, three turns) keep their tool calls, compacted...
    assert "turn_marker_4" in sent and "turn_marker_3" in sent
    # ...older turns keep only the question and the answer.
    assert "turn_marker_2" not in sent and "turn_marker_1" not in sent
    assert "question 1" in sent and "answer 1" in sent
    tool_results = [json.loads(m["content"]) for m in first_call["messages"] if m["role"] == "tool"]
    assert tool_results and all("sample" not in r for r in tool_results)


SUMMARY_TEXT = "Turns 1-2: fetched d1 and d2 from orders (counts)."


def test_rolling_summary_replaces_old_turns(analyst):
    script = {
        "turns": [{"match": f"^question {n}$", "steps": [say(f"answer {n}")]} for n in range(1, 7)],
        "summarizer": [{"match": "to fold", "steps": [{"content": json.dumps({"summary": SUMMARY_TEXT})}]}],
    }
    a = analyst(script)
    budget = ContextBudget(summarize_turns=4, summarize_chars=100_000, tool_output_turns=3)
    thread = None
    for n in range(1, 7):
        thread = a.run(f"question {n}", thread=thread, context=budget).thread_id
    folds = [r for r in a.server.summarizer_requests if "to fold" in r["messages"][1]["content"]]
    assert folds, "the summarizer was never asked to fold"
    memory = a.of_type("memory")
    assert memory and memory[-1].status == "applied" and memory[-1].summarized_through >= 2
    last = requests_for(a.server, "question 6")[0]
    system = system_of(last)
    assert SUMMARY_TEXT in system and "Summary of turns 1-" in system
    sent = json.dumps(last["messages"][1:])
    assert "question 1" not in sent and "answer 1" not in sent  # folded into the summary
    assert "question 5" in sent


def test_summarizer_runs_after_done_while_the_next_turn_starts(analyst):
    """The summarizer is held; the next turn runs to completion; then its delta lands."""
    from jupyter_analyst.turns import BackgroundWork
    from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
    from jupyter_analyst.workspace import Workspace

    delta = {"add": [{"section": "hypotheses", "value": {"id": "h1", "text": "North leads revenue"}}]}
    a = analyst({
        "turns": [{"match": "^next", "steps": [say("next answer")]}, {"steps": [sql(REVENUE, "revenue"), say()]}],
        "summarizer": [{"match": "revenue by region", "steps": [{"content": json.dumps(delta)}]}],
    })
    gate = a.server.hold_summarizer()
    config = AnalystConfig(workspace=a.workspace)
    model = ModelSettings(model="jupyter-analyst-scripted", base_url=a.server.base_url, api_key="x")

    async def scenario():
        background = BackgroundWork()
        first = await run_turn(TurnRequest(prompt="revenue by region", source=str(a.source)), config=config,
                               model=model, on_event=a.events.append, background=background)
        assert background.pending == 1  # done, while the summarizer still waits for the model
        second = await run_turn(TurnRequest(prompt="next", thread_id=first.thread_id), config=config, model=model,
                                on_event=a.events.append, background=background)
        ws = Workspace(a.workspace)
        before = ws.store.agent_state(first.thread_id)
        ws.close()
        gate.set()
        await background.drain()
        return first, second, before

    first, second, before = asyncio.run(scenario())
    assert second.status == "completed" and before.hypotheses == {}
    ws = Workspace(a.workspace)
    after = ws.store.agent_state(first.thread_id)
    deltas = ws.store.state_deltas(first.thread_id)
    events = ws.store.events(first.thread_id)
    ws.close()
    assert after.hypotheses["h1"].text == "North leads revenue"
    # Applied on top of what the second turn changed meanwhile, not instead of it.
    assert after.active["notebook"] and after.entities["dataset:revenue"]
    assert deltas[-1]["origin"] == "summarizer" or "summarizer" in [d["origin"] for d in deltas]
    kinds = [(e.type, e.turn_id) for e in events]
    ended_first = kinds.index(("turn_ended", first.turn_id))
    memory_first = next(n for n, e in enumerate(events) if e.type == "memory" and e.turn_id == first.turn_id)
    assert memory_first > ended_first
    assert memory_first > kinds.index(("turn_ended", second.turn_id))


def test_summarizer_failure_changes_nothing_and_is_recorded(analyst):
    a = analyst({
        "turns": [{"steps": [sql(REVENUE, "revenue"), say()]}],
        "summarizer": [{"steps": [{"content": "not json at all"}]}],
    })
    summary = a.run("revenue by region")
    (memory,) = a.of_type("memory")
    assert memory.status == "failed" and "JSON" in memory.message
    assert summary.status == "completed"


def test_pasted_text_stays_verbatim_after_folding(analyst):
    pasted = "Definitions: " + "net revenue excludes returns and shipping. " * 50
    script = {
        "turns": [{"match": f"^q{n}$", "steps": [say(f"a{n}")]} for n in range(2, 6)]
        + [{"match": "^Definitions", "steps": [say("noted")]}],
        "summarizer": [{"match": "to fold", "steps": [{"content": json.dumps({"summary": "the user pasted definitions"})}]}],
    }
    a = analyst(script)
    budget = ContextBudget(summarize_turns=2, summarize_chars=100_000)
    thread = a.run(pasted, context=budget).thread_id
    for n in range(2, 6):
        a.run(f"q{n}", thread=thread, context=budget)
    system = system_of(requests_for(a.server, "q5")[0])
    assert re.search(r"Summary of turns? 1(-\d+)? \(older", system)
    assert "pasted in turn 1 (verbatim" in system and pasted in system


def test_describing_an_invented_table_is_refused(analyst):
    a = analyst({"turns": [{"steps": [tool("describe_table", table="sales"), say()]}]})
    a.run("describe sales")
    result = next(e for e in a.of_type("tool_result") if e.tool == "describe_table")
    assert result.status == "refused" and result.result["error"]["reason"] == "unknown_name"
    assert set(result.result["error"]["suggestions"]) <= {"orders", "products", "regions"}


def test_expecting_an_artifact_id_that_does_not_exist_is_refused(analyst):
    a = analyst({"turns": [{"steps": [sql(REVENUE, "revenue", expect={"artifact_ids": ["art_0000000000000000"]}), say()]}]})
    summary = a.run("revenue by region")
    result = next(e for e in a.of_type("tool_result") if e.tool == "run_sql")
    assert result.status == "refused" and "art_0000000000000000" in result.result["error"]["message"]
    assert summary.tool_calls["executed"] == 0
