"""The summarizer from its model's side: a compact request, labels that read right, no
duplicates of what is recorded already, questions the user ignored closed."""

from __future__ import annotations

import json

from jupyter_analyst.agent import ContextBudget
from jupyter_analyst.testing import call_step as tool, sql_step as sql, text_step as say


def state_of(a, thread):
    from jupyter_analyst.workspace import Workspace

    ws = Workspace(a.workspace)
    try:
        return ws.store.agent_state(thread)
    finally:
        ws.close()


def test_the_request_reads_results_in_one_line_and_labels_turns_right(analyst):
    a = analyst({"turns": [{"steps": [sql("SELECT * FROM orders", "all_orders"), say("done")]}],
                 "summarizer": [{"steps": [{"content": "{}"}]}]})
    first = a.run("all orders", context=ContextBudget(summarize_turns=2, tool_output_turns=1))
    for _ in range(3):
        a.run("all orders", thread=first.thread_id, context=ContextBudget(summarize_turns=2, tool_output_turns=1))
    requests = a.server.summarizer_requests
    text = [r["messages"][1]["content"] for r in requests]
    assert all("result of run_sql: all_orders art_" in t and "rows; columns" in t for t in text)
    assert not any('"sample"' in t or "turns 1-0" in t for t in text)
    assert "The turn that just finished (turn 1)" in text[0]
    folds = [t for t in text if "to fold" in t]
    assert folds and "Previous summary (no turns)" in folds[0]
    assert max(len(json.dumps(r["messages"])) for r in requests) < 6_000


def test_a_clarify_question_is_not_recorded_twice(analyst):
    question = "Which revenue do you mean?"
    again = {"add": [{"section": "items", "value": {"id": "q_dup", "kind": "question", "text": question}}]}
    a = analyst({"turns": [{"steps": [tool("clarify", question=question, candidates=["gross", "net"])]}],
                 "summarizer": [{"steps": [{"content": json.dumps(again)}]}]})
    asked = a.run("show revenue")
    assert a.of_type("memory")[-1].status == "applied"
    questions = [i for i in state_of(a, asked.thread_id).items.values() if i.kind == "question"]
    assert [q.text for q in questions] == [question]
    (request,) = a.server.summarizer_requests
    assert "questions the agent asked with clarify" in request["messages"][0]["content"]


def test_a_question_the_user_ignores_is_closed_after_two_turns(analyst):
    idea = {"add": [{"section": "items", "value": {"id": "q1", "kind": "question", "text": "Should returns count?"}}]}
    a = analyst({"turns": [{"steps": [say("ok")]}],
                 "summarizer": [{"match": "^\\[summarizer\\] Agent state:\\nassumptions:\\nhypotheses:\\nitems:\\ndatasets",
                                 "steps": [{"content": json.dumps(idea)}]},
                                {"steps": [{"content": "{}"}]}]})
    thread = a.run("first").thread_id
    assert state_of(a, thread).items["q1"].ref == {"turn": 1}
    a.run("second", thread=thread)
    a.run("third", thread=thread)
    assert state_of(a, thread).items["q1"].status == "active"
    a.run("fourth", thread=thread)
    closed = state_of(a, thread).items["q1"]
    assert closed.status == "discarded" and "not taken up" in closed.resolution
