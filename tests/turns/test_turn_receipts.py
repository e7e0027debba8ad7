"""An answer's receipts, end to end: each number the answer states cited to the step result
that holds it (call id, row, column), derived from two cited numbers, or unsupported; the
model told once of unsupported numbers, and never asked again when all are supported.

A real DuckDB file, a real kernel, the real openai SDK over HTTP to the scripted model.
"""

from __future__ import annotations

from jupyter_analyst.testing import python_step, sql_step, text_step as answer

REVENUE_SQL = ("SELECT r.region, ROUND(SUM(o.revenue), 2) AS revenue FROM orders o "
               "JOIN regions r ON o.region_id = r.region_id GROUP BY r.region ORDER BY revenue DESC")
COUNT_SQL = "SELECT COUNT(*) AS orders FROM orders"


def call_ids(a) -> list[str]:
    """The tool calls' ids, in the order they were made."""
    return [e.call_id for e in a.of_type("tool_call")]


def ended(a):
    (event,) = a.of_type("turn_ended")
    return event


def test_an_answer_citing_two_results_gets_their_call_ids_rows_and_columns(analyst):
    a = analyst({"turns": [{"steps": [
        sql_step(REVENUE_SQL, "revenue"), sql_step(COUNT_SQL, "order_count"),
        answer("Central had the most revenue, 192,506.67, of 2,400 orders in all."),
    ]}]})
    summary = a.run("Which region had the most revenue?")
    revenue_call, count_call = call_ids(a)
    cited = [(c.text, c.call_id, c.row, c.column) for c in summary.citations]
    assert cited == [("Central", revenue_call, 0, "region"), ("192,506.67", revenue_call, 0, "revenue"),
                     ("2,400", count_call, 0, "orders")]
    assert summary.unsupported == []
    # Every number supported: the answer was final at once, no model call more.
    assert len(a.server.requests) == 3
    assert "unsupported_claim_flagged" not in summary.counters
    assert [c.text for c in ended(a).citations] == ["Central", "192,506.67", "2,400"]


def test_written_forms_of_one_value_all_match_it_without_an_extra_call(analyst):
    a = analyst({"turns": [{"steps": [
        sql_step("SELECT 1620 AS flights", "flights"),
        answer("1,620 flights (1620.0 exactly, about 1.6k)."),
    ]}]})
    summary = a.run("How many flights?")
    (call,) = call_ids(a)
    assert [(c.text, c.value, c.call_id, c.column) for c in summary.citations] == [
        ("1,620", 1620, call, "flights"), ("1620.0", 1620, call, "flights"), ("1.6k", 1620, call, "flights")]
    assert summary.unsupported == []
    assert len(a.server.requests) == 2


def test_a_difference_of_two_cited_numbers_is_derived(analyst):
    a = analyst({"turns": [{"steps": [
        sql_step(REVENUE_SQL, "revenue"),
        answer("Central 192,506.67 against North 150,581.09: a gap of 41,925.58."),
    ]}]})
    summary = a.run("Central against North?")
    gap = summary.citations[-1]
    assert gap.text == "41,925.58" and gap.call_id is None
    assert gap.derived is not None and gap.derived.operation == "difference"
    a_cited, b_cited = (summary.citations[i] for i in gap.derived.of)
    assert (a_cited.text, b_cited.text) == ("192,506.67", "150,581.09")
    assert summary.unsupported == [] and len(a.server.requests) == 2


def test_an_invented_number_is_told_once_and_stays_marked_when_kept(analyst):
    a = analyst({"turns": [{"steps": [
        sql_step(REVENUE_SQL, "revenue"),
        answer("Central leads with 192,506.67; West grew 37% last year."),
    ]}]})
    summary = a.run("Which region leads?")
    # The answer, then once more after the check (the script keeps its answer): no third time.
    requests = a.server.requests
    assert len(requests) == 3
    check = requests[2]["messages"][-1]
    assert check["role"] == "user" and check["content"].startswith("[answer check] ")
    assert '"37%"' in check["content"] and "192,506.67" not in check["content"].split("(in")[0]
    assert requests[2]["messages"][-2] == {"role": "assistant", "content": summary.answer}
    assert [(u.text, u.kind) for u in summary.unsupported] == [("37%", "percent")]
    start = summary.unsupported[0].start
    assert summary.answer[start:start + 3] == "37%"
    assert summary.counters["unsupported_claim_flagged"] == 1
    assert [u.text for u in ended(a).unsupported] == ["37%"]
    # The check is this turn's alone: the thread's history keeps the prompt, the steps and the answer.
    stored = [m for m in requests[2]["messages"] if m["role"] == "user"]
    assert len(stored) == 2


def test_told_of_a_number_the_model_computes_it_and_the_answer_is_supported(analyst):
    a = analyst({"turns": [{
        "steps": [sql_step(REVENUE_SQL, "revenue"), answer("Central's share of revenue is 31.6%.")],
        "after_check": [python_step("print(round(100 * revenue.revenue.max() / revenue.revenue.sum(), 1))"),
                        answer("Central's share of revenue is 31.4%.")],
    }]})
    summary = a.run("What is Central's share?")
    assert len(a.server.requests) == 4
    assert summary.unsupported == []
    (share,) = summary.citations
    assert share.text == "31.4%" and share.call_id == call_ids(a)[1] and share.column == "stdout:1"
    assert "31.6%" in a.server.requests[2]["messages"][-1]["content"]
    # Told once: the answer after the computed step is final.
    assert summary.answer == "Central's share of revenue is 31.4%."


def test_a_number_the_question_states_is_not_asked_about(analyst):
    a = analyst({"turns": [{"steps": [sql_step(REVENUE_SQL, "revenue"), answer("The top 3: Central, North, East.")]}]})
    summary = a.run("Top 3 regions by revenue?")
    assert summary.unsupported == [] and len(a.server.requests) == 2


def test_a_row_count_the_system_message_states_is_the_prompts_not_unsupported(analyst):
    # The schema the model is sent gives each table's row count: repeating it is no claim
    # to support (nothing is asked), while a number nothing gave still is.
    a = analyst({"turns": [{"steps": [answer("The orders table has 2,400 rows.")]}]})
    summary = a.run("How big is the orders table?")
    system = a.server.requests[0]["messages"][0]["content"]
    assert "orders (2,400 rows)" in system
    assert summary.unsupported == [] and len(a.server.requests) == 1
    assert "unsupported_claim_flagged" not in summary.counters

    b = analyst({"turns": [{"steps": [answer("The orders table has 2,500 rows.")]}]})
    told = b.run("How big is the orders table?")
    assert [u.text for u in told.unsupported] == ["2,500"] and len(b.server.requests) == 2


def test_an_earlier_answers_number_the_system_message_recalls_supports_nothing(analyst):
    # The next turn's request recalls earlier answers (their messages; in time, the rolling
    # summary): an unsupported number said once does not become supported by being remembered.
    said = "West grew 37% last year."
    a = analyst({"turns": [{"match": "grow", "steps": [answer(said)]},
                           {"match": "again", "steps": [answer(said)]}]})
    first = a.run("How fast did West grow?")
    assert [u.text for u in first.unsupported] == ["37%"]
    again = a.run("Say that again", thread=first.thread_id)
    last = next(r for r in a.server.requests if {"role": "user", "content": "Say that again"} in r["messages"])
    assert {"role": "assistant", "content": said} in last["messages"]
    assert [u.text for u in again.unsupported] == ["37%"]
    assert again.counters["unsupported_claim_flagged"] == 1
