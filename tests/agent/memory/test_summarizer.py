"""The summarizer from its model's side: a compact request, labels that read right, no
duplicates of what is recorded already, questions the user ignored closed."""

from __future__ import annotations

import asyncio
import json
import re

from jupyter_analyst.agent import ContextBudget
from jupyter_analyst.testing import call_step as tool, python_step, sql_step as sql, text_step as say


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
    assert all(re.search(r"result of run_sql: all_orders art_\w+: from orders; columns: \*; 2,400 rows;", t) for t in text)
    assert not any('"sample"' in t or "turns 1-0" in t for t in text)
    assert "The turn that just finished (turn 1)" in text[0]
    folds = [t for t in text if "to fold" in t]
    # No summary yet: nothing said of it (it was "Previous summary (no turns): (none)").
    assert folds and "Previous summary" not in folds[0] and "(none)" not in folds[0]
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


def test_a_printed_table_keeps_its_lines_a_find_says_what_it_found_and_rows_are_said_once(analyst):
    a = analyst({"turns": [{"steps": [
        tool("find", query="revenue"),
        sql("SELECT order_id, revenue FROM orders ORDER BY order_id LIMIT 101", "first_orders"),
        python_step("print(first_orders.head(40))"),
        say("The first orders are in `first_orders`."),
    ]}], "summarizer": [{"steps": [{"content": "{}"}]}]})
    a.run("revenue of the first orders")
    (request,) = a.server.summarizer_requests
    text = request["messages"][1]["content"]
    # The table as printed, line by line: its head and its tail, the middle elided.
    printed = text.split("result of run_python: printed:\n", 1)[1]
    assert printed.startswith("      order_id  revenue\n  0          1    51.65\n  1          2   674.89\n")
    assert "not shown ...]" in printed and printed.split("\nassistant:")[0].endswith("\n  39        40    84.95")
    assert len(printed.split("\nassistant:")[0]) < 700
    # A find result is a result line (what it found, and as what), not a cut of its JSON.
    assert "result of find: found orders.revenue (column), regions.region (column)\n" in text and '"matches"' not in text
    # The dataset's line says its rows once (its description says them).
    (made,) = [line for line in text.splitlines() if line.startswith("result of run_sql:")]
    assert made.count("101 rows") == 1 and "from orders" in made


def test_a_clarify_question_says_which_turn_asked_it(analyst):
    question = "Which revenue do you mean?"
    a = analyst({"turns": [{"match": "^show", "steps": [tool("clarify", question=question, candidates=["gross", "net"])]},
                           {"steps": [say("ok")]}]})
    first = a.run("hello")
    asked = a.run("show revenue", thread=first.thread_id)
    a.run("gross", thread=asked.thread_id)
    (item,) = [i for i in state_of(a, asked.thread_id).items.values() if i.kind == "question"]
    assert item.ref["turn"] == 2 and item.status == "resolved"
    # The summarizer reads when it was asked, as it reads the turn of every other item, by a
    # short id it can echo (no call id).
    after = a.server.summarizer_requests[-1]["messages"][1]["content"]
    assert f"- q-t2 (question, resolved, asked in turn 2): {question} -> gross" in after
    assert "call_" not in "".join(r["messages"][1]["content"] for r in a.server.summarizer_requests)


def test_a_clarify_is_read_once_by_the_summarizer_and_an_answer_by_position_names_its_choice(analyst):
    question = "What should 'how are we doing' measure?"
    candidates = ["on-time share of departures", "average departure delay"]
    a = analyst({"turns": [{"match": "^how", "steps": [tool("clarify", question=question, candidates=candidates)]},
                           {"steps": [say("ok")]}]})
    asked = a.run("How are we doing?")
    a.run("The first one", thread=asked.thread_id)
    first, second = (r["messages"][1]["content"] for r in a.server.summarizer_requests)
    # Turn 1: its answer asks the question with the candidates; no call or result line repeats them.
    turn = first.split("The turn that just finished (turn 1):\n", 1)[1]
    assert turn.count("average departure delay") == 1
    assert "[calls" not in turn and "result of clarify" not in turn and "call_" not in first
    # Turn 2: "The first one" is recorded as the candidate it names.
    assert f"- q-t1 (question, resolved, asked in turn 1): {question} -> on-time share of departures" in second


def test_the_summarizer_reads_calls_in_words_and_what_a_short_reply_took_up(analyst):
    offer = "I can chart the monthly share next."
    a = analyst({"turns": [
        {"match": "^continue", "steps": [python_step("# the chart\nimport matplotlib\nprint(len(big_orders))"), say("charted")]},
        {"steps": [sql("SELECT order_id, revenue FROM orders WHERE revenue > 100 AND region_id IN (1, 2, 3) "
                       "AND product_id IS NOT NULL ORDER BY revenue DESC", "big_orders"),
                   say(f"Done (`big_orders`).\n\n{offer}")]},
    ]})
    first = a.run("big orders")
    a.run("continue", thread=first.thread_id)
    made, went_on = (r["messages"][1]["content"] for r in a.server.summarizer_requests)
    assert "assistant: [run_sql → big_orders]\n" in made and "SELECT" not in made
    assert "assistant: [run_python: import matplotlib …]\n" in went_on
    assert f'user: continue (the previous answer had offered: "{offer}")' in went_on


def test_an_open_question_says_which_turn_asked_it_until_it_is_closed(analyst):
    idea = {"add": [{"section": "items", "value": {"id": "q1", "kind": "question", "text": "Should returns count?"}}]}
    a = analyst({"turns": [{"steps": [say("ok")]}],
                 "summarizer": [{"match": "^\\[summarizer\\] Agent state:\\nassumptions:\\nhypotheses:\\nitems:\\ndatasets",
                                 "steps": [{"content": json.dumps(idea)}]},
                                {"steps": [{"content": "{}"}]}]})
    thread = a.run("first").thread_id
    for prompt in ("second", "third", "fourth"):
        a.run(prompt, thread=thread)
    def system(prompt):
        (request,) = [r for r in a.server.requests if r["messages"][-1]["content"] == prompt]
        return request["messages"][0]["content"]
    # Turns 2 and 3 see it open, asked in turn 1 (the model can tell the user let it pass).
    assert "- question (asked in turn 1): Should returns count?" in system("second")
    assert "- question (asked in turn 1): Should returns count?" in system("third")
    # Turn 4 opens with it closed: not taken up in two turns after the one that asked it.
    assert "Should returns count?" not in system("fourth")
    summarizer = a.server.summarizer_requests[-1]["messages"][1]["content"]
    assert "- q1 (question, discarded, asked in turn 1): Should returns count? -> not taken up" in summarizer


def test_a_summary_that_answers_late_never_replaces_a_newer_one(analyst):
    """Turn 2's summarizer answers after turn 3's (a slow reply, the next turn started at
    once): the late summary of turn 1 is not applied over the one of turns 1-2, its event
    says so, and the next request carries the newer summary."""
    from jupyter_analyst.turns import AnalystConfig, BackgroundWork, ModelSettings, TurnRequest, run_turn

    long_answer = "North leads the regions. " * 30  # enough characters to fold
    a = analyst({
        "turns": [{"match": f"^q{n}$", "steps": [say(f"answer {n}. {long_answer}")]} for n in range(1, 5)],
        "summarizer": [
            {"match": r"just finished \(turn 2\)", "steps": [{"content": json.dumps({"summary": "LATE: turn 1 only"})}]},
            {"match": r"just finished \(turn 3\)", "steps": [{"content": json.dumps({"summary": "NEWER: turns 1 and 2"})}]},
        ],
    })
    held, release = a.server.hold_summarizer_of(r"just finished \(turn 2\)")
    config = AnalystConfig(workspace=a.workspace, context=ContextBudget(summarize_chars=500, tool_output_turns=1))
    model = ModelSettings(model="jupyter-analyst-scripted", base_url=a.server.base_url, api_key="x")

    async def turn(prompt, thread, background):
        return await run_turn(TurnRequest(prompt=prompt, thread_id=thread, source=None if thread else str(a.source)),
                              config=config, model=model, on_event=a.events.append, background=background)

    async def scenario():
        first = await turn("q1", None, None)
        late = BackgroundWork()
        second = await turn("q2", first.thread_id, late)
        assert await asyncio.to_thread(held.wait, 60)  # turn 2's summarizer has read the state and waits
        await turn("q3", first.thread_id, None)  # its summarizer answers on time
        release.set()
        await late.drain()
        await turn("q4", first.thread_id, None)
        return first, second

    first, second = asyncio.run(scenario())
    state = state_of(a, first.thread_id)
    assert (state.summary.text, state.summary.through_turn) == ("NEWER: turns 1 and 2", 2)
    (late_event,) = [e for e in a.of_type("memory") if e.turn_id == second.turn_id]
    assert late_event.status == "applied" and late_event.summarized_through == 2
    assert "summary of turn 1 was not applied" in late_event.message
    (request,) = [r for r in a.server.requests if r["messages"][-1]["content"] == "q4"]
    system = request["messages"][0]["content"]
    assert "Summary of turns 1-2" in system and "NEWER: turns 1 and 2" in system and "LATE" not in system


def test_a_summarizer_reply_without_the_summary_it_was_asked_for_says_so(analyst):
    """The summarizer is asked to fold turn 1 into the rolling summary and replies without
    one: the rest of its reply is applied, its event says no summary was written, and the next
    turn's summarizer is asked again (and its summary is taken)."""
    long_answer = "North leads the regions. " * 30  # enough characters to fold
    a = analyst({
        "turns": [{"match": f"^q{n}$", "steps": [say(f"answer {n}. {long_answer}")]} for n in range(1, 4)],
        "summarizer": [
            {"match": r"just finished \(turn 2\)", "steps": [{"content": json.dumps({"summary": 42})}]},
            {"match": r"just finished \(turn 3\)", "steps": [{"content": json.dumps({"summary": "turns 1-2"})}]},
        ],
    })
    config_budget = ContextBudget(summarize_chars=500, tool_output_turns=1)
    first = a.run("q1", context=config_budget)
    second = a.run("q2", thread=first.thread_id, context=config_budget)
    (event,) = [e for e in a.of_type("memory") if e.turn_id == second.turn_id]
    assert event.status == "applied" and event.summarized_through == 0, event
    assert event.message == ("it was asked to fold turn 1 into the rolling summary and wrote none: there is no "
                             "summary yet; the next turn asks again"), event.message
    third = a.run("q3", thread=first.thread_id, context=config_budget)
    (event,) = [e for e in a.of_type("memory") if e.turn_id == third.turn_id]
    assert event.message is None and event.summarized_through == 2, event
    assert state_of(a, first.thread_id).summary.text == "turns 1-2"


def test_the_summarizer_reads_a_find_in_words_and_a_chart_by_its_title(analyst):
    chart = ("import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.bar(rev.region_id, rev.revenue)\n"
             "ax.set_title('Revenue by region')\nplt.show()")
    a = analyst({"turns": [{"steps": [
        tool("find", query="revenue by region", with_code=False),
        sql("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY 1", "rev"),
        python_step(chart),
        say("Charted."),
    ]}], "summarizer": [{"steps": [{"content": "{}"}]}]})
    a.run("chart revenue by region")
    (request,) = a.server.summarizer_requests
    text = request["messages"][1]["content"]
    assert '[find "revenue by region"]' in text and '{"query"' not in text
    # What the chart shows, and the id a later turn cites.
    assert re.search(r'result of run_python: made image "Revenue by region\.png" \(art_\w+\)', text), text
