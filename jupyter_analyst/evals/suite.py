"""A suite of evaluation tasks, read from JSON Lines.

The native format is one task a line::

    {"id": "n_flights", "question": "How many flights ...?", "source": "nycflights13",
     "answer": 336776, "tolerance": 0, "guidelines": "A whole number.", "tags": ["aggregate"],
     "gold_sql": "SELECT count(*) FROM flights"}

``answer`` is a number, a text, a list of values (compared as a set), a list of rows (a set of
rows) or ``"not in the data"``; ``tolerance`` is absolute (numbers only); ``guidelines`` is the
answer format the model is told. A follow-up task asks several questions in one thread:
``"turns": [{"question": ..., "answer": ..., "gold_sql": ...}, ...]`` instead of ``question``
and ``answer``; it is correct when every turn is.

``source`` names the task's data: a named source (``sample``, ``nycflights13``) or one the user
gives the run (``--source NAME=PATH_OR_URL``, a relative path inside ``--data-dir``); any other
is refused, as a suite is a file from elsewhere (see sources.py). ``--db`` overrides it for
every task.

Published files load as they are:

- DABstep (``task_id``, ``question``, ``answer``, ``guidelines``, ``level``): the level becomes a tag;
- InfiAgent-DABench (``id``, ``question``, ``concepts``, ``constraints``, ``format``,
  ``file_name``, and ``common_answers`` as ``[name, value]`` pairs, or an answer text of
  ``@name[value]`` pairs): the constraints and format are the guidelines, the file the source.
  Its answers ship in a separate labels file: pass it as ``labels``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator

from ..errors import ConfigError

#: The default answer format, when a task states none.
DEFAULT_GUIDELINES = "Give the value only."


class Turn(BaseModel):
    """One question of a task and its gold answer."""

    question: str
    answer: Any
    tolerance: float = Field(default=0.0, ge=0.0)
    guidelines: str = DEFAULT_GUIDELINES
    gold_sql: str | None = None
    """The SQL that computes ``answer`` from the data (the suite's answers are regenerated from it)."""

    @field_validator("question")
    @classmethod
    def _asked(cls, question: str) -> str:
        if not question.strip():
            raise ValueError("the question is empty")
        return question


class Task(BaseModel):
    """One task: a thread of one or more questions on one source."""

    id: str
    turns: list[Turn] = Field(min_length=1)
    source: str | None = None
    tags: list[str] = []


class Suite(BaseModel):
    """The tasks of one file, in order, and the file's folder."""

    name: str
    folder: Path
    tasks: list[Task]


def task_from_record(record: dict[str, Any]) -> Task:
    """A task from one record of any of the three formats.

    >>> task_from_record({"task_id": "5", "question": "Which country?", "answer": "NL",
    ...                   "guidelines": "A country code.", "level": "easy"}).model_dump(exclude={"turns"})
    {'id': '5', 'source': None, 'tags': ['easy']}
    >>> t = task_from_record({"id": 0, "question": "Mean fare?", "concepts": ["Summary Statistics"],
    ...                       "constraints": "Round to 2 decimals.", "format": "@mean_fare[value]",
    ...                       "file_name": "test_ave.csv", "common_answers": [["mean_fare", "34.65"]]})
    >>> t.source, t.turns[0].answer, t.turns[0].guidelines
    ('test_ave.csv', '@mean_fare[34.65]', 'Round to 2 decimals.\\nAnswer format: @mean_fare[value]')
    """
    if "task_id" in record and "id" not in record:  # DABstep
        level = record.get("level")
        return Task(id=str(record["task_id"]), tags=[str(level)] if level else [], source=record.get("source"),
                    turns=[Turn(question=record["question"], answer=record.get("answer"),
                                guidelines=record.get("guidelines") or DEFAULT_GUIDELINES)])
    if "file_name" in record or "common_answers" in record or "concepts" in record:  # InfiAgent-DABench
        answer = record.get("answer")
        if "common_answers" in record:
            answer = " ".join(f"@{name}[{value}]" for name, value in record["common_answers"])
        guidelines = "\n".join(p for p in (record.get("constraints"), f"Answer format: {record['format']}"
                                           if record.get("format") else None) if p)
        tags = [str(c) for c in record.get("concepts") or []] + ([str(record["level"])] if record.get("level") else [])
        return Task(id=str(record["id"]), source=record.get("file_name"), tags=tags,
                    turns=[Turn(question=record["question"], answer=answer,
                                guidelines=guidelines or DEFAULT_GUIDELINES, tolerance=record.get("tolerance", 1e-6))])
    fields = {k: record[k] for k in ("id", "source", "tags") if k in record}
    if "turns" in record:
        return Task.model_validate({**fields, "id": str(record.get("id")), "turns": record["turns"]})
    turn = {k: record[k] for k in ("question", "answer", "tolerance", "guidelines", "gold_sql") if k in record}
    return Task.model_validate({**fields, "id": str(record.get("id")), "turns": [turn]})


def load_suite(path: Path | str, *, labels: Path | str | None = None) -> Suite:
    """The tasks of the JSON Lines file ``path``; ``labels``: a file of answers by id
    (InfiAgent-DABench's ``da-dev-labels.jsonl``) merged into them.

    Raises:
        ConfigError: the file cannot be read, a line is not a task, two tasks share an id,
            or a task has no gold answer.
    """
    path = Path(path)
    records = read_records(path)
    if labels is not None:
        answers = {str(r.get("id")): r for r in read_records(Path(labels))}
        records = [{**r, **answers.get(str(r.get("id")), {})} for r in records]
    tasks: list[Task] = []
    for number, record in enumerate(records, 1):
        try:
            task = task_from_record(record)
        except (ValidationError, KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{path}: task {number} is malformed: {_problem(exc)}", reason="bad_suite") from exc
        if any(turn.answer is None for turn in task.turns):
            raise ConfigError(f"{path}: task {task.id!r} has no gold answer", reason="bad_suite",
                              hint="InfiAgent-DABench's answers are in a labels file: pass --labels FILE")
        tasks.append(task)
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise ConfigError(f"{path}: two tasks have the id {task.id!r}", reason="bad_suite")
        seen.add(task.id)
    return Suite(name=path.stem, folder=path.resolve().parent, tasks=tasks)


def read_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (blank lines skipped)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"the suite {path} cannot be read: {exc}", reason="bad_suite") from exc
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{number}: not JSON: {exc.msg}", reason="bad_suite") from exc
        if not isinstance(record, dict):
            raise ConfigError(f"{path}:{number}: a task is a JSON object", reason="bad_suite")
        records.append(record)
    return records


def _problem(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
