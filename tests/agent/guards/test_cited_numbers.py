"""The answer check's evidence and message: what each tool's result offers (its rows as sent,
its row counts, its printed lines), what is left out (failed calls, tools that show no
values), and the one message the model is told, bounded whatever the answer."""

from __future__ import annotations

import pytest

import jupyter_analyst.agent.tools  # noqa: F401 - the built-in tools, registered
from jupyter_analyst.agent.guards import ANSWER_CHECK_MARKER, answer_check, answer_receipts
from jupyter_analyst.agent.guards.cited_numbers import NAMED_SPANS, evidence_of
from jupyter_analyst.events import TextDelta, ToolResult
from jupyter_analyst.receipts import UnsupportedClaim

SQL_RESULT = {
    "dataset": "revenue", "artifact_id": "art_1", "rows": 1000,
    "columns": [{"name": "region", "type": "VARCHAR"}, {"name": "revenue", "type": "DOUBLE"}],
    "sample": [{"region": "Central", "revenue": 192506.67000000001}, {"region": "North", "revenue": 150581.09}],
    "shown": "...", "truncated": True, "reused": False, "row_cap": {"cap": 1000, "kept": 1000, "dropped": 620},
}


def result(tool: str, body: dict, *, call_id: str = "call_1", status: str = "ok") -> ToolResult:
    return ToolResult(call_id=call_id, tool=tool, status=status, result=body)  # type: ignore[arg-type]


def test_a_query_offers_its_rows_as_sent_and_what_the_row_cap_kept_and_dropped():
    (found,) = evidence_of([result("run_sql", SQL_RESULT)])
    assert (found.call_id, found.artifact_id, found.columns) == ("call_1", "art_1", ["region", "revenue"])
    assert found.rows == [["Central", 192506.67], ["North", 150581.09]]
    assert found.scalars == {"row_count": 1000, "rows_dropped": 620, "rows_before_cap": 1620}
    cited = answer_receipts("It holds 1,000 of 1,620 rows; 620 were dropped.", [result("run_sql", SQL_RESULT)])
    assert [(c.text, c.column, c.row) for c in cited.citations] == [
        ("1,000", "row_count", None), ("1,620", "rows_before_cap", None), ("620", "rows_dropped", None)]


def test_a_python_step_offers_its_printed_lines_and_its_last_value():
    body = {"stdout": "region  share\nCentral  31.4\n", "result": "0.314", "reused": False, "artifacts": []}
    stdout, value = evidence_of([result("run_python", body, call_id="call_2")])
    assert stdout.rows == [["region", "share"], ["Central", "31.4"]] and value.rows == [["0.314"]]
    cited = answer_receipts("Central holds 31.4%.", [result("run_python", body, call_id="call_2")])
    assert [(c.text, c.kind, c.row, c.column) for c in cited.citations] == [
        ("Central", "name", 1, "stdout:1"), ("31.4%", "percent", 1, "stdout:2")]


def test_a_table_description_and_the_table_list_offer_their_samples_and_row_counts():
    described = {"name": "orders", "columns": [{"name": "order_id", "type": "BIGINT"}], "rows": 2400,
                 "sample": [{"order_id": 17}]}
    listed = {"tables": [{"name": "orders", "kind": "table", "rows": 2400}, {"name": "regions", "kind": "table",
                                                                                  "rows": 5}]}
    one, many = evidence_of([result("describe_table", described), result("list_tables", listed, call_id="call_3")])
    assert one.scalars == {"row_count": 2400} and one.rows == [[17]]
    assert many.columns == ["name", "kind", "rows"] and many.rows[1] == ["regions", "table", 5]


def test_failed_calls_other_events_and_tools_that_show_no_values_offer_nothing():
    events = [
        result("run_sql", {"error": {"message": "no such table"}}, status="error"),
        result("clarify", {"asked": "Which?", "candidates": ["a"]}),
        result("no_such_tool", {"rows": 5}),
        TextDelta(text="42"),
    ]
    assert evidence_of(events) == []
    assert [u.text for u in answer_receipts("42 rows.", events).unsupported] == ["42"]


def test_a_number_the_question_states_is_the_users_and_not_reported():
    found = answer_receipts("Of the 3 largest regions, Central leads with 9%.", [], asked="the 3 largest regions?")
    assert [u.text for u in found.unsupported] == ["9%"]


def claim(text: str, start: int) -> UnsupportedClaim:
    return UnsupportedClaim(start=start, end=start + len(text), text=text, kind="number", value=float(text))


def test_the_check_names_each_span_in_its_words_and_counts_what_it_does_not_name():
    answer = " ".join(str(100 + n) for n in range(NAMED_SPANS + 3))
    claims = [claim(str(100 + n), 4 * n) for n in range(NAMED_SPANS + 3)]
    message = answer_check(answer, claims)
    assert message["role"] == "user" and message["content"].startswith(f"{ANSWER_CHECK_MARKER} These numbers")
    assert f'"{100 + NAMED_SPANS - 1}"' in message["content"] and f'"{100 + NAMED_SPANS}"' not in message["content"]
    assert "and 3 more." in message["content"] and "Correct them, compute them with a step, or keep them" in (
        message["content"])


@pytest.mark.parametrize("answer", [
    "x" * 100_000 + " 42 " + "y" * 100_000,  # one long line
    "\n".join(["42"] * 5_000),  # many lines
])
def test_the_check_stays_short_whatever_the_answer(answer):
    at = answer.index("42")
    message = answer_check(answer, [claim("42", at)] * 50)
    assert len(message["content"]) < 2_000
