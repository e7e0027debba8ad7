"""Numbers computed from the cells of one result, cited or not: a column's total, a pair."""

from __future__ import annotations

from jupyter_analyst.receipts import Evidence, read_claims, receipts
from jupyter_analyst.receipts.result_derivations import PAIR_ROWS, derive_from_results

EVENTS = Evidence(call_id="call_1", tool="run_sql", artifact_id="ds_1", columns=["kind", "n", "users"],
                  rows=[["web", 106176386.41, 812345.0], ["app", 53183468.33, 401122.0]])


def _target(written: str):
    (claim,) = read_claims(f"so {written}.")
    return claim


def test_a_total_in_another_paragraph_is_derived_from_the_rows_it_sums():
    """The case met: both rows quoted, the total on its own line, outside their sentence."""
    answer = "Web had 106,176,386 events and app 53,183,468.\n\nIn total 159,359,854 events."
    found = receipts(answer, [EVENTS])
    assert found.unsupported == []
    total = next(c for c in found.citations if c.text == "159,359,854")
    assert total.derived.operation == "total" and total.derived.of is None
    assert [(c.call_id, c.artifact_id, c.row, c.column) for c in total.derived.cells] == [
        ("call_1", "ds_1", 0, "n"), ("call_1", "ds_1", 1, "n")]


def test_a_total_is_matched_within_the_precision_written_also_from_rounded_operands():
    """159,359,854.74 rounds to ...855; the sum of the rows as rounded, ...854, is true too, and
    so is 159.4 million. An off-by-two total, or 159.5 million, is not."""
    for written in ("159,359,855", "159,359,854", "159.4 million"):
        assert derive_from_results(_target(written), [EVENTS]).operation == "total", written
    for written in ("159,359,857", "159.5 million"):
        assert derive_from_results(_target(written), [EVENTS]) is None, written


def test_a_difference_ratio_and_change_of_uncited_cells_are_derived():
    found = receipts("Web had 52,992,918 events more than app.", [EVENTS])
    (citation,) = found.citations
    assert citation.derived.operation == "difference" and [c.row for c in citation.derived.cells] == [0, 1]
    # A ratio across the columns of one row: events per user on web.
    ratio = derive_from_results(_target("130.70"), [EVENTS])
    assert ratio.operation == "ratio" and [(c.row, c.column) for c in ratio.cells] == [(0, "n"), (0, "users")]
    change = derive_from_results(_target("99.642%"), [EVENTS])
    assert change.operation == "percent_change" and [c.row for c in change.cells] == [0, 1]


def test_a_figure_too_coarse_for_its_chances_is_not_derived_from_uncited_cells():
    """"2.0 times" would be hit by some pair of many cells: an uncited pair needs five
    significant figures, a total three; and a result past the size tried gives no pairs."""
    assert receipts("Web is 2.0 times app.", [EVENTS]).unsupported[0].text == "2.0"
    assert derive_from_results(_target("1.996"), [EVENTS]) is None
    big = Evidence(call_id="c", tool="run_sql", columns=["n"],
                   rows=[[1000.0 + i] for i in range(PAIR_ROWS)] + [[7.25]])
    assert derive_from_results(_target("1,012.75"), [big]) is None  # 1005 + 7.25, in a result too big


def test_a_year_a_date_and_a_zero_are_never_derived():
    for written in ("2024", "2024-03-01", "0"):
        assert derive_from_results(_target(written), [EVENTS]) is None
