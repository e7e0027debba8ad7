"""The context pack: compact tool outputs, whole exchanges only, a budget that holds."""

from __future__ import annotations

import json

from jupyter_analyst.agent import ContextBudget
from jupyter_analyst.agent.context.pack import (
    PackedTurn,
    assemble,
    compact_tool_message,
    estimate_tokens,
    shape_prior,
    well_formed,
)


def turn_messages(n: int, rows: int = 50) -> list[dict]:
    result = {"dataset": f"d{n}", "artifact_id": f"art_{n:016x}", "rows": rows,
              "columns": [{"name": "a", "type": "INT"}], "sample": [{"a": i} for i in range(rows)],
              "intent_note": f"from orders; {rows} rows"}
    return [
        {"role": "user", "content": f"question {n}"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{n}", "type": "function", "function": {"name": "run_sql", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": json.dumps(result)},
        {"role": "assistant", "content": f"answer {n}"},
    ]


def test_compact_results_keep_ids_names_and_shapes_only():
    message = turn_messages(1)[2]
    compact = json.loads(compact_tool_message(message)["content"])
    assert compact == {"dataset": "d1", "artifact_id": "art_0000000000000001", "rows": 50, "columns": ["a"],
                       "intent_note": "from orders; 50 rows"}
    long = {"stdout": "x" * 5_000, "artifacts": [{"id": f"a{i}", "name": "n", "type": "image", "size": 1} for i in range(30)]}
    compact = json.loads(compact_tool_message({"role": "tool", "content": json.dumps(long)})["content"])
    assert len(compact["stdout"]) < 300
    assert len(compact["artifacts"]) == 13 and compact["artifacts"][0] == {"id": "a0", "name": "n", "type": "image"}


def test_a_call_without_its_result_is_dropped_whole():
    cut = turn_messages(1)[:2]  # the turn stopped before the tool answered
    assert [m["role"] for m in well_formed(cut)] == ["user"]
    assert well_formed(turn_messages(2)) == turn_messages(2)


def test_only_recent_turns_keep_their_tool_exchanges():
    turns = {n: turn_messages(n) for n in range(1, 7)}
    shaped = shape_prior(turns, ContextBudget(tool_output_turns=3, recent_messages=100))
    with_tools = [t.number for t in shaped if any(m["role"] == "tool" for m in t.messages)]
    assert with_tools == [5, 6]  # with the current turn, three turns
    assert [m["content"] for m in shaped[0].messages] == ["question 1", "answer 1"]


def test_recent_messages_cap_cuts_at_turn_boundaries():
    turns = {n: turn_messages(n) for n in range(1, 11)}
    shaped = shape_prior(turns, ContextBudget(recent_messages=9, tool_output_turns=1))
    assert [t.number for t in shaped] == [7, 8, 9, 10][-4:]
    assert sum(len(t.messages) for t in shaped) <= 9
    assert all(t.messages[0]["role"] == "user" for t in shaped)


def test_the_token_budget_drops_oldest_turns_first():
    prior = [PackedTurn(n, [{"role": "user", "content": "x" * 4_000}, {"role": "assistant", "content": "y"}]) for n in range(1, 11)]
    budget = ContextBudget(tokens=5_000)
    messages, report = assemble(sections={"rules": "r" * 400}, prior=prior, current=[{"role": "user", "content": "now"}],
                                budget=budget, call=1, summarized_through=0)
    assert report.tokens <= budget.tokens
    assert report.dropped_turns > 0 and report.turns == list(range(report.dropped_turns + 1, 11))
    assert messages[-1] == {"role": "user", "content": "now"} and messages[0]["role"] == "system"
    assert report.tokens == sum(report.parts.values())


def test_prompt_size_is_flat_as_the_thread_grows():
    budget = ContextBudget()

    def tokens_at(turn_count: int) -> int:
        turns = {n: turn_messages(n) for n in range(1, turn_count + 1)}
        prior = shape_prior(dict(list(turns.items())[-budget.recent_turns:]), budget)
        return assemble(sections={"rules": "r" * 2_000}, prior=prior, current=[{"role": "user", "content": "q"}],
                        budget=budget, call=1, summarized_through=0)[1].tokens

    # Flat: only the numbers in the text (turn 193 vs turn 13) differ in length.
    assert abs(tokens_at(200) - tokens_at(20)) <= 0.02 * tokens_at(20)
    whole = sum(estimate_tokens(json.dumps(m)) for n in range(1, 201) for m in turn_messages(n))
    assert tokens_at(200) * 10 < whole


def test_an_old_result_s_long_text_is_cut_between_words_within_its_budget():
    """A definition's description in an old find result, one line: the edges of the elided
    middle are whole words, and the cut text is no longer than before."""
    from jupyter_analyst.agent.context.pack import _TEXT_CAP, compact_value

    words = ("Sessions are counted from the events table, one per user and day, ending after thirty "
             "idle minutes; a bot's events are left out, and to count them compute it with the raw table.")
    text = f"(context/models/events.yml:41): {words} " * 2
    cut = compact_value({"note": text})["note"]
    head, rest = cut.split("[... ", 1)
    tail = rest.split(" ...]\n", 1)[1]
    assert len(cut) <= _TEXT_CAP + len("[... 999 characters not shown ...]\n") and len(cut) < len(text)
    assert head.endswith(" ") and text.startswith(head)
    assert text.endswith(tail) and text[len(text) - len(tail) - 1] == " "
    assert all(word in text.split() for word in head.split() + tail.split())
