"""Scoring: only the marked answer counts, tolerances are inclusive, sets ignore order but not
members, and the failure class says what went wrong."""

from __future__ import annotations

import pytest

from jupyter_analyst.evals.report import compare, load_report
from jupyter_analyst.evals.scoring import NOT_IN_DATA, score


@pytest.mark.parametrize(("text", "gold", "tolerance", "correct", "failure"), [
    ("There were 336776 flights, I think.", 336776, 0, False, "no_answer"),  # a number in passing is not an answer
    ("ANSWER: 7\nOn second thought:\nANSWER: 8", 8, 0, True, None),  # the last ANSWER line counts
    ("ANSWER: 12.12", 12.11, 0.01, True, None),  # the tolerance is inclusive
    ("ANSWER: 12.13", 12.11, 0.01, False, "wrong_number"),
    ("ANSWER: -0.48 minutes", -0.48, 0.01, True, None),
    ("ANSWER: LGA, LEX, JFK", ["LEX", "LGA"], 0, False, "wrong_answer"),  # a set: no extra member
    ("ANSWER: LEX", ["LEX", "LGA"], 0, False, "wrong_answer"),  # nor a missing one
    ("ANSWER:\nUA | 58665\nB6 | 54635", [["UA", 58665], ["B6", 54635], ["EV", 54173]], 0, False, "wrong_answer"),
    ("ANSWER:\n| 1 | 27004 |\n|---|---|\n| 2 | 24951 |", [[2, 24951], [1, 27004]], 0, True, None),
    ("**Final answer:** united air lines inc", "United Air Lines Inc.", 0, True, None),
    ("ANSWER: 0", NOT_IN_DATA, 0, False, "wrong_answer"),  # the data cannot answer: no number is right
    ("ANSWER: Not Applicable", "Not Applicable", 0, True, None),  # DABstep's spelling
    ("ANSWER: 2013-11-28", "2013-11-28", 0, True, None),
    ("ANSWER: 2013-11-27", "2013-11-28", 0, False, "wrong_answer"),
    ("@mean[2.5]", "@mean[2.5] @n[7]", 0, False, "wrong_number"),  # every pair is required
    ("", 3, 0, False, "no_answer"),
])
def test_score(text, gold, tolerance, correct, failure):
    verdict = score(text, gold, tolerance)
    assert (verdict.correct, verdict.failure) == (correct, failure)


def test_a_file_that_is_not_a_report_is_refused(tmp_path):
    from jupyter_analyst.errors import ConfigError

    bad = tmp_path / "r.json"
    bad.write_text('{"settings": {}, "totals": {}, "tasks": [{"id": "a"}]}')
    with pytest.raises(ConfigError, match="is not an evaluation report"):
        load_report(bad)


def test_compare_names_tasks_only_one_run_has():
    task = {"id": "a", "correct": True, "failure": None, "model_calls": 1, "time_s": 1.0}
    run = {"settings": {"model": "m", "suite": "s"}, "totals": {"correct": 1, "tasks": 1}, "tasks": [task]}
    other = {**run, "tasks": [{**task, "id": "b"}]}
    shown = compare(run, other)
    assert "| a | correct | — | only in A |" in shown and "| b | — | correct | only in B |" in shown
