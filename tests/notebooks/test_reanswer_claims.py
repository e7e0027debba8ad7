"""Restating receipts on today's values, without a kernel: a row gone, a printed-output
citation, a derived percent change, a share written as a percentage, the terminal's text."""

from __future__ import annotations

from jupyter_analyst.notebooks.reanswer import ReanswerReport, format_reanswer
from jupyter_analyst.notebooks.reanswer_claims import AnswerReceipts, recheck
from jupyter_analyst.receipts import Citation, Derivation, UnsupportedClaim

ANSWER = "West 1,620 vs East 1,200: 35.0% more; West is 45% of all. Printed: 7.5"


def cite(text: str, value, row=None, column=None, artifact="a1", derived=None) -> Citation:
    start = ANSWER.index(text)
    return Citation(start=start, end=start + len(text), text=text, kind="percent" if "%" in text else "number",
                    value=value, call_id=None if derived else "call_1", artifact_id=None if derived else artifact,
                    row=row, column=column, derived=derived)


RECEIPTS = AnswerReceipts(answer=ANSWER, citations=[
    cite("1,620", 1620, 0, "n"), cite("1,200", 1200, 1, "n"),
    cite("35.0%", 35.0, derived=Derivation(operation="percent_change", of=(0, 1))),
    cite("45%", 0.45, 2, "share"), cite("7.5", 7.5, 0, "x", artifact="printed"),
])


def test_changed_unchanged_gone_and_not_rechecked():
    today = {"a1": {"n": [1800, 1200], "share": [0.4, 0.3, 0.5]}}
    restated = recheck(RECEIPTS, today, {"a1"})
    status = {c.text: (c.status, c.new_text) for c in restated.claims}
    assert status == {"1,620": ("changed", "1,800"), "1,200": ("unchanged", "1,200"),
                      "35.0%": ("changed", "50.0%"), "45%": ("changed", "50%"), "7.5": ("not_rechecked", "7.5")}
    assert restated.answer == "West 1,800 vs East 1,200: 50.0% more; West is 50% of all. Printed: 7.5"
    # Each moved citation still spans its text in the new answer.
    assert all(restated.answer[c.start:c.end] == c.text for c in restated.citations)
    # And each claim says where it stands in the new answer, as written there now.
    assert all(restated.answer[c.start:c.end] == c.new_text for c in restated.claims)
    unsupported = AnswerReceipts(answer=ANSWER, citations=RECEIPTS.citations[:1], unsupported=[
        UnsupportedClaim(start=ANSWER.index("7.5"), end=ANSWER.index("7.5") + 3, text="7.5", kind="number",
                         value=7.5)])
    grown = recheck(unsupported, {"a1": {"n": [16200]}}, {"a1"})  # "1,620" -> "16,200": a character more
    moved = grown.claims[-1]
    assert (moved.status, moved.start) == ("not_rechecked", ANSWER.index("7.5") + 1)
    assert grown.answer[moved.start:moved.end] == "7.5"

    gone = recheck(RECEIPTS, {"a1": {"n": [1620]}}, {"a1"})
    by_text = {c.text: c for c in gone.claims}
    assert by_text["1,200"].status == "gone" and by_text["1,200"].note == "today's result has no row 2"
    assert by_text["45%"].status == "gone" and "column 'share'" in by_text["45%"].note
    assert by_text["35.0%"].status == "unchanged" and "not re-checked" in by_text["35.0%"].note

    report = ReanswerReport(notebook="nb.ipynb", output="nb.reanswered.ipynb", source="today.duckdb",
                            answers=[restated], verify={"verdict": "not_verified", "counts": {}, "error": None,
                                                         "causes": ["data_changed"]})
    text = format_reanswer(report)
    assert "West 1,800 (was 1,620) vs East 1,200" in text and "  changed         1,620 -> 1,800" in text
    assert "3 changed, 1 unchanged, 0 gone, 1 not re-checked" in text and text.endswith("written: nb.reanswered.ipynb")
