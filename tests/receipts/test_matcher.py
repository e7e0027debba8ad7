"""An answer's receipts: each claim cited to the cell that supports it, derived from two
cited numbers, or unsupported; bounded whatever the answer and the results."""

from __future__ import annotations

import random
from datetime import date, datetime

import pytest

from jupyter_analyst.receipts import MAX_CLAIMS, Evidence, Receipts, receipts


def _sql(call_id: str, columns: list[str], rows: list[list], artifact_id: str | None = None, **scalars) -> Evidence:
    return Evidence(call_id=call_id, tool="run_sql", artifact_id=artifact_id, columns=columns, rows=rows,
                    scalars=scalars)


DELAYS = _sql("call_1", ["carrier", "flights", "mean_delay"], [["AA", 1620, 21.93], ["UA", 410, 17.71]], "ds_delays")
SHARE = Evidence(call_id="call_2", tool="run_python", columns=["carrier", "share"], rows=[["AA", 0.45]],
                 scalars={"total": 1_234_567})


def _cited(found: Receipts) -> list[tuple]:
    return [(c.text, c.call_id, c.row, c.column) for c in found.citations if c.kind != "name"]


def test_an_answer_citing_two_results_cites_each_step_row_and_column():
    found = receipts("AA flew 1,620 flights and holds a 45% share.", [DELAYS, SHARE])
    assert _cited(found) == [("1,620", "call_1", 0, "flights"), ("45%", "call_2", 0, "share")]
    assert found.citations[1].artifact_id == "ds_delays" and found.citations[1].value == 1620
    assert found.unsupported == [] and not found.truncated


def test_an_invented_number_is_unsupported_with_its_span():
    answer = "AA flew 1,620 flights, with 37 cancellations."
    found = receipts(answer, [DELAYS])
    ((claim),) = found.unsupported
    assert (claim.text, claim.start, claim.end, claim.value) == ("37", answer.index("37"), answer.index("37") + 2, 37.0)


@pytest.mark.parametrize("written", ["1,620", "1620", "1620.0", "1.6k", "1.62k", "about 1,600", "~1.6 thousand"])
def test_one_count_written_many_ways_is_cited(written):
    found = receipts(f"AA flew {written} flights.", [DELAYS])
    assert [(c.call_id, c.row, c.column, c.value) for c in found.citations if c.kind != "name"] == [
        ("call_1", 0, "flights", 1620)]


@pytest.mark.parametrize("written", ["1,621", "1620.5", "1.7k", "1,600"])
def test_a_count_written_past_its_precision_is_not(written):
    assert [u.text for u in receipts(f"AA flew {written} flights.", [DELAYS]).unsupported] == [written]


def test_a_difference_of_two_cited_numbers_is_derived_from_them():
    found = receipts("AA averages 21.9 minutes against UA's 17.7, 4.2 minutes more.", [DELAYS])
    numbers = [c for c in found.citations if c.kind != "name"]
    assert [c.text for c in numbers] == ["21.9", "17.7", "4.2"]
    derived = numbers[2]
    assert derived.call_id is None and derived.derived.operation == "difference"
    a, b = derived.derived.of
    assert (found.citations[a].text, found.citations[b].text) == ("21.9", "17.7")
    assert derived.value == pytest.approx(4.22)


def test_a_percent_change_and_a_share_are_derived():
    found = receipts("AA's 1,620 flights are 295% more than UA's 410, and UA flies 16.4% of the 2,500.",
                     [DELAYS, _sql("call_3", ["total"], [[2500]])])
    derived = {c.text: c.derived.operation for c in found.citations if c.derived}
    assert derived == {"295%": "percent_change", "16.4%": "share"} and found.unsupported == []


@pytest.mark.parametrize("held", [0.45, 45, 45.2, 0.4512])
def test_a_percentage_is_cited_by_its_share_or_its_points(held):
    found = receipts("AA holds 45% of flights.", [_sql("call_1", ["share"], [[held]])])
    assert [(c.text, c.value) for c in found.citations] == [("45%", held)]


def test_a_percentage_is_not_cited_by_a_share_past_its_precision():
    assert [u.text for u in receipts("45%", [_sql("c", ["share"], [[0.456]])]).unsupported] == ["45%"]


def test_money_in_millions_is_cited_by_the_amount():
    found = receipts("Revenue was $1.2M.", [SHARE])
    assert [(c.text, c.kind, c.column, c.row, c.value) for c in found.citations] == [
        ("$1.2M", "money", "total", None, 1_234_567)]


def test_a_rounded_figure_is_not_cited_by_a_value_it_does_not_round_to():
    found = receipts("The mean delay is 21.9 minutes.", [_sql("call_1", ["mean_delay"], [[22.4]])])
    assert found.citations == [] and [u.text for u in found.unsupported] == ["21.9"]


def test_numbers_in_code_are_not_claims():
    answer = "I ran `SELECT count(*) FROM flights WHERE delay > 15` and:\n```python\nx = 99\n```\nAA: 1,620."
    found = receipts(answer, [DELAYS])
    assert [c.text for c in found.citations if c.kind != "name"] == ["1,620"] and found.unsupported == []


def test_the_exact_value_is_cited_over_a_rounded_one_and_the_latest_step_over_an_earlier():
    first = _sql("call_1", ["v"], [[21.9], [21.93]])
    second = _sql("call_2", ["v"], [[21.93], [21.9]])
    assert _cited(receipts("mean 21.9", [first])) == [("21.9", "call_1", 0, "v")]
    assert _cited(receipts("mean 21.93", [first])) == [("21.93", "call_1", 1, "v")]
    assert _cited(receipts("mean 21.9", [first, second])) == [("21.9", "call_2", 1, "v")]
    assert _cited(receipts("mean 21.9", [second, first])) == [("21.9", "call_1", 0, "v")]


def test_of_rows_holding_one_value_the_one_named_on_the_line_is_cited_with_its_name():
    counts = _sql("call_1", ["carrier", "flights"], [["AA", 12], ["DL", 12], ["UA", 12]])
    found = receipts("| UA | 12 |\n\nDL also had 12.", [counts])
    assert [(c.text, c.kind, c.row, c.column) for c in found.citations] == [
        ("UA", "name", 2, "carrier"), ("12", "number", 2, "flights"),
        ("DL", "name", 1, "carrier"), ("12", "number", 1, "flights")]


def test_a_name_is_cited_only_as_a_whole_word_beside_a_number_of_its_row():
    counts = _sql("call_1", ["carrier", "flights"], [["AA", 1620], ["UA", 410]])
    found = receipts("AAL is not AA. UA flew 1,620 flights.", [counts])
    assert [(c.text, c.row) for c in found.citations] == [("1,620", 0)]


def test_a_number_written_without_its_sign_is_cited_by_the_negative_one_with_it_is_not():
    change = _sql("call_1", ["change"], [[-3.5]])
    assert _cited(receipts("delays fell by 3.5 minutes", [change])) == [("3.5", "call_1", 0, "change")]
    assert _cited(receipts("delays changed by -3.5", [change])) == [("-3.5", "call_1", 0, "change")]
    assert [u.text for u in receipts("delays changed by +3.5", [change]).unsupported] == ["+3.5"]


def test_dates_and_months_are_cited_by_the_days_results_hold():
    days = _sql("call_1", ["day", "at", "month"], [[date(2024, 3, 1), datetime(2024, 3, 5, 10, 30), "2024-04"]])
    found = receipts("From 2024-03-01 (peak March 5, 2024) to April 2024; not 2024-06-01.", [days])
    assert _cited(found) == [("2024-03-01", "call_1", 0, "day"), ("March 5, 2024", "call_1", 0, "at"),
                             ("April 2024", "call_1", 0, "month")]
    assert [u.text for u in found.unsupported] == ["2024-06-01"]


def test_a_year_is_cited_when_a_result_holds_it_and_never_unsupported():
    found = receipts("In 2023 there were fewer flights than in 2024.", [_sql("call_1", ["year"], [[2024]])])
    assert _cited(found) == [("2024", "call_1", 0, "year")] and found.unsupported == []


def test_named_values_are_cited_by_name():
    found = receipts("The result has 1,620 rows.", [_sql("call_1", ["x"], [[1]], row_count=1620)])
    assert _cited(found) == [("1,620", "call_1", None, "row_count")]


def test_receipts_are_deterministic_and_travel_as_json():
    answer = "AA flew 1,620 flights (45%), 21.9 min late, 4.2 more than UA's 17.7; 37 cancelled."
    first = receipts(answer, [DELAYS, SHARE])
    assert receipts(answer, [DELAYS, SHARE]) == first
    assert Receipts.model_validate_json(first.model_dump_json()) == first


def test_past_the_claim_cap_the_rest_is_left_and_said_to_be():
    answer = " ".join(str(1000 + i) + "," for i in range(MAX_CLAIMS + 50)).replace(",", " units,")
    found = receipts(answer, [_sql("c", ["v"], [[1000]])])
    assert found.truncated
    assert len(found.citations) + len(found.unsupported) == MAX_CLAIMS
    assert not receipts("1,620", [DELAYS]).truncated


def test_a_huge_answer_over_huge_results_is_matched():
    rng = random.Random(39)
    rows = [[f"name{i}", i, round(i * 1.37, 2), date(2020, 1, 1 + i % 28)] for i in range(20_000)]
    evidence = [_sql(f"call_{k}", ["name", "n", "x", "day"], rows[k::4]) for k in range(4)]
    values = [str(rng.randrange(20_000)) for _ in range(300)] + [f"{rng.randrange(20_000) * 1.37:.2f}" for _ in range(150)]
    answer = "\n".join(f"- name{v.split('.')[0]} has {v} and {rng.randrange(10**6) + 0.123:.3f}" for v in values)
    found = receipts(answer, evidence)
    assert found.truncated  # 900 claims, 500 read
    assert len(found.citations) >= 250 and len(found.unsupported) >= 200
    assert all(c.call_id is not None or c.derived for c in found.citations)


@pytest.mark.parametrize("unit", ["1,", "-1", "1.2.", "$1,000,00", "`1` ", "2024-03-", "45% ", "1 "])
def test_a_megabyte_of_hostile_answer_is_matched_within_the_caps(unit):
    answer = unit * (1_000_000 // len(unit))
    found = receipts(answer, [DELAYS])
    assert found.truncated
    assert len(found.citations) + len(found.unsupported) <= 2 * MAX_CLAIMS
    assert all(answer[c.start:c.end] == c.text for c in [*found.citations, *found.unsupported])


def test_a_number_is_derived_only_beside_one_of_the_numbers_it_follows_from():
    answer = "AA flew 1,620 flights. UA flew 410.\n\nDL had 1,210 delays."
    assert [u.text for u in receipts(answer, [DELAYS]).unsupported] == ["1,210"]
    beside = "AA flew 1,620 flights.\n\nUA flew 410, 1,210 fewer."
    assert [(c.text, c.derived.operation) for c in receipts(beside, [DELAYS]).citations if c.derived] == [
        ("1,210", "difference")]


def test_a_share_of_a_total_stated_earlier_is_derived():
    answer = "Across 2,030 flights in all:\n\n- AA and UA fly most.\n- UA flies 410 of them, 20.2% of all flights."
    found = receipts(answer, [DELAYS, _sql("call_3", ["total"], [[2030]])])
    assert [(c.text, c.derived.operation) for c in found.citations if c.derived] == [("20.2%", "share")]


def test_without_results_every_claim_but_a_year_is_unsupported():
    assert receipts("", []) == Receipts()
    found = receipts("In 2024, 1,620 flights on 2024-03-01 (45%).", [])
    assert found.citations == [] and [u.kind for u in found.unsupported] == ["number", "date", "percent"]


def test_a_cited_date_travels_in_json_as_its_iso_text():
    found = receipts("on 2024-03-01", [_sql("c", ["day"], [[date(2024, 3, 1)]])])
    again = Receipts.model_validate_json(found.model_dump_json())
    assert found.citations[0].value == date(2024, 3, 1) and again.citations[0].value == "2024-03-01"
    assert again.model_dump(mode="json") == found.model_dump(mode="json")
