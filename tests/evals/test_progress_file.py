"""The resume file: a line cut by a kill is dropped, another run's file is refused."""

from __future__ import annotations

import json

import pytest

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.evals.progress_file import ResumeFile
from jupyter_analyst.evals.results import TaskResult, TurnResult

SETTINGS = {"suite": "s.jsonl", "model": "m"}


def result(task_id):
    return TaskResult.of(task_id, [TurnResult(question="q", gold=1, correct=True)], tags=[], thread_id=None,
                         notebook=None)


def test_a_line_cut_by_a_kill_is_dropped_and_the_rest_kept(tmp_path):
    path = tmp_path / "r.progress.jsonl"
    first = ResumeFile(path, SETTINGS)
    assert first.open() == {}
    first.add(result("a"))
    with path.open("a") as f:
        f.write('{"kind": "task", "task": {"id": "b", "corr')  # the kill came mid-write
    done = ResumeFile(path, SETTINGS).open()
    assert list(done) == ["a"] and done["a"].correct
    assert path.read_text().endswith("\n") and "\"b\"" not in path.read_text()
    again = ResumeFile(path, SETTINGS)
    again.open()
    again.add(result("b"))
    assert list(ResumeFile(path, SETTINGS).open()) == ["a", "b"]


def test_another_run_s_file_is_refused_and_restart_starts_over(tmp_path):
    path = tmp_path / "r.progress.jsonl"
    ResumeFile(path, SETTINGS).open()
    with pytest.raises(ConfigError, match="of another run"):
        ResumeFile(path, {**SETTINGS, "model": "other"}).open()
    assert ResumeFile(path, {**SETTINGS, "model": "other"}).open(restart=True) == {}
    assert json.loads(path.read_text().splitlines()[0])["settings"]["model"] == "other"


def test_a_damaged_line_inside_the_file_is_an_error_not_a_skip(tmp_path):
    path = tmp_path / "r.progress.jsonl"
    f = ResumeFile(path, SETTINGS)
    f.open()
    f.add(result("a"))
    path.write_text(path.read_text().replace('"kind": "task"', '"kind": "task', 1) + path.read_text().splitlines()[1] + "\n")
    with pytest.raises(ConfigError, match="damaged at line 2"):
        ResumeFile(path, SETTINGS).open()
