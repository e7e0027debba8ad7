"""Suites load from the native format and from DABstep's and InfiAgent-DABench's files as
published; a file that is not a suite is a clear error that names the line."""

from __future__ import annotations

import json

import pytest

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.evals.scoring import score
from jupyter_analyst.evals.suite import load_suite


def lines(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_dabstep_tasks_load_as_published(tmp_path):
    suite = load_suite(lines(tmp_path / "dabstep.jsonl",
                             {"task_id": "1", "question": "How many transactions are there?", "level": "easy",
                              "answer": "138236", "guidelines": "Answer must be just a number."},
                             {"task_id": "2", "question": "Which fee id applies?", "level": "hard",
                              "answer": "Not Applicable", "guidelines": "A comma separated list."}))
    first, second = suite.tasks
    assert (first.id, first.tags, first.turns[0].guidelines) == ("1", ["easy"], "Answer must be just a number.")
    assert score("ANSWER: 138,236", first.turns[0].answer).correct
    assert score("ANSWER: not in the data", second.turns[0].answer).correct


def test_infiagent_questions_and_labels_load_as_published(tmp_path):
    questions = lines(tmp_path / "da-dev-questions.jsonl", {
        "id": 0, "question": "Calculate the mean fare paid by the passengers.", "concepts": ["Summary Statistics"],
        "constraints": "Round the mean to two decimal places.", "format": "@mean_fare[mean_fare_value]",
        "file_name": "test_ave.csv", "level": "easy"})
    with pytest.raises(ConfigError, match="has no gold answer") as caught:
        load_suite(questions)
    assert "--labels" in (caught.value.hint or "")
    labels = lines(tmp_path / "da-dev-labels.jsonl", {"id": 0, "common_answers": [["mean_fare", "34.65"]]})
    task = load_suite(questions, labels=labels).tasks[0]
    assert (task.id, task.source, task.tags) == ("0", "test_ave.csv", ["Summary Statistics", "easy"])
    assert "@mean_fare[mean_fare_value]" in task.turns[0].guidelines
    assert score("The mean is @mean_fare[34.65]", task.turns[0].answer).correct
    assert score("@mean_fare[34.7]", task.turns[0].answer).failure == "wrong_number"


def test_a_follow_up_task_keeps_its_turns_in_order(tmp_path):
    task = load_suite(lines(tmp_path / "s.jsonl", {"id": "f", "source": "sample", "turns": [
        {"question": "Which region?", "answer": "North"}, {"question": "And its revenue?", "answer": 3.5,
                                                           "tolerance": 0.1}]})).tasks[0]
    assert [t.question for t in task.turns] == ["Which region?", "And its revenue?"] and task.turns[1].tolerance == 0.1


@pytest.mark.parametrize(("text", "message"), [
    ('{"id": "a", "question": "q", "answer": 1}\nnot json\n', r"s.jsonl:2: not JSON"),
    ('[1, 2]\n', r"s.jsonl:1: a task is a JSON object"),
    ('{"id": "a", "question": "", "answer": 1}\n', r"task 1 is malformed: turns.0.question"),
    ('{"id": "a", "question": "q", "answer": 1, "tolerance": -1}\n', r"task 1 is malformed: turns.0.tolerance"),
    ('{"id": "a", "question": "q", "answer": 1}\n{"id": "a", "question": "r", "answer": 1}\n', "two tasks have the id 'a'"),
])
def test_a_file_that_is_not_a_suite_says_where(tmp_path, text, message):
    (tmp_path / "s.jsonl").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_suite(tmp_path / "s.jsonl")
