"""Scoring one answer against its gold answer: pure functions, no I/O.

The model is told to end its answer with a line ``ANSWER: <value>`` in the task's stated
format (or, for InfiAgent-style tasks, with ``@name[value]`` pairs). What follows the last
marker is the answer given; the rest of the text is the model's explanation and is never
scored, so a number quoted along the way cannot count as the answer.

How a gold answer compares depends on its shape:

- a number (or text that is one): within the task's absolute ``tolerance``;
- a list of values: as a set (order and repeats ignored), each value as below;
- a list of rows (lists): as a set of rows, each row cell by cell;
- ``@name[value]`` pairs: every name must be given, each value compared as below;
- :data:`NOT_IN_DATA` (also DABstep's "Not Applicable"): the answer must say so;
- any other text: equal once normalised (case, spaces, quotes, a final full stop).
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import BaseModel

#: The gold answer of a question the data cannot answer, and what the model must say then.
NOT_IN_DATA = "not in the data"
_NOT_IN_DATA_PHRASES = frozenset({NOT_IN_DATA, "not applicable", "n/a", "not in data"})

#: Why an answer is wrong. ``refused``: the model declined, or said the data cannot answer a
#: question it can; ``error``/``timeout``: the turn ended in error or ran out of time.
#: Why a turn was not scored correct; ``step_limited``: a wrong answer from a turn that ran out of
#: steps (``--max-steps``), told apart from a wrong answer the model finished.
Failure = Literal["no_answer", "wrong_number", "wrong_answer", "refused", "step_limited", "error", "timeout"]

_MARKER = re.compile(r"^[\s*_#>]*(?:final\s+)?answer[\s*_]*:[\s*_]*", re.IGNORECASE | re.MULTILINE)
_PAIR = re.compile(r"@([A-Za-z_][\w.-]*)\[([^\]]*)\]")
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?")
_NUMBER_IN_TEXT = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")


class Verdict(BaseModel):
    """How one answer scored: ``given`` is what was read from it (``None``: nothing)."""

    correct: bool
    given: str | None = None
    failure: Failure | None = None


def final_answer(text: str) -> str | None:
    """What follows the last ``ANSWER:`` marker of ``text`` (code fences dropped), or ``None``.

    >>> final_answer("The total is 12 flights.\\n\\nANSWER: 42")
    '42'
    >>> final_answer("**Answer:** North | 10\\nSouth | 4")
    'North | 10\\nSouth | 4'
    >>> final_answer("I think it is 42") is None
    True
    """
    found = list(_MARKER.finditer(text or ""))
    if not found:
        return None
    given = text[found[-1].end():].replace("```", "").strip()
    return given or None


def normalise(value: Any) -> str:
    """A value as text compares: case-folded, spaces collapsed, quotes and a final stop dropped.

    >>> normalise('  "United  Air Lines Inc." ')
    'united air lines inc'
    """
    text = re.sub(r"\s+", " ", str(value)).strip().strip("`*\"'").strip()
    return text.rstrip(".").strip().casefold()


def as_number(value: Any) -> float | None:
    """``value`` as a number when it is one (thousands separators, ``$`` and ``%`` allowed).

    >>> as_number("1,234.5"), as_number("$12"), as_number("45%"), as_number("12 flights"), as_number(True)
    (1234.5, 12.0, 45.0, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    text = normalise(value).lstrip("$").rstrip("%").strip()
    if not text or not _NUMBER.fullmatch(text) or not any(c.isdigit() for c in text):
        return None
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def same_value(given: Any, gold: Any, tolerance: float = 0.0) -> bool:
    """One value against one gold value: numbers within ``tolerance``, else normalised text.

    >>> same_value("3.14159", 3.14, 0.01), same_value("3.2", 3.14, 0.01), same_value("JFK ", "jfk")
    (True, False, True)
    """
    number, target = as_number(given), as_number(gold)
    if target is not None:
        return number is not None and abs(number - target) <= max(tolerance, 1e-9 * max(1.0, abs(target)))
    return normalise(given) == normalise(gold)


def _lines(text: str) -> list[str]:
    """The answer's lines, without a Markdown table's separator or empty lines."""
    lines = [line.strip() for line in text.splitlines()]
    return [line for line in lines if line and not re.fullmatch(r"[|:\-\s]+", line)]


def _cells(line: str) -> list[str]:
    """A row's cells: split on ``|`` (Markdown's outer bars dropped), else on commas or tabs."""
    line = line.strip()
    if "|" in line:
        return [c.strip() for c in line.strip("|").split("|")]
    return [c.strip() for c in re.split(r"\t|,\s*", line)]


def _matched(given: list[Any], gold: list[Any], same: Any) -> bool:
    """Whether ``given`` and ``gold`` pair up one to one under ``same`` (as sets: order ignored)."""
    left = list(given)
    if len(left) != len(gold):
        return False
    for target in gold:
        hit = next((i for i, item in enumerate(left) if same(item, target)), None)
        if hit is None:
            return False
        left.pop(hit)
    return True


def _dedup(items: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen


def _items(text: str) -> list[str]:
    """A list answer's values: one a line, or separated by commas or semicolons."""
    lines = _lines(text)
    parts = lines if len(lines) > 1 else re.split(r"[;,]\s*", lines[0] if lines else "")
    return _dedup([p.strip().lstrip("-*• ").strip() for p in parts if p.strip()])


def says_not_in_data(text: str) -> bool:
    """Whether an answer says the data cannot answer.

    >>> says_not_in_data("Not in the data."), says_not_in_data("Not applicable"), says_not_in_data("0")
    (True, True, False)
    """
    return normalise(text) in _NOT_IN_DATA_PHRASES


def gold_pairs(gold: Any) -> dict[str, str] | None:
    """The ``@name[value]`` pairs of an InfiAgent-style gold answer, or ``None``.

    >>> gold_pairs("@mean_fare[34.65] @count[3]")
    {'mean_fare': '34.65', 'count': '3'}
    """
    if isinstance(gold, str):
        pairs = dict(_PAIR.findall(gold))
        return pairs or None
    return None


def score(text: str | None, gold: Any, tolerance: float = 0.0) -> Verdict:
    """Score the model's whole answer ``text`` against ``gold``.

    >>> score("Counting...\\nANSWER: 336,776", 336776).correct
    True
    >>> score("ANSWER: 336,000", 336776).failure
    'wrong_number'
    >>> score("It is 336776", 336776).failure
    'no_answer'
    >>> score("ANSWER: JFK, LGA", ["LGA", "JFK"]).correct
    True
    >>> score("ANSWER:\\n| UA | 58665 |\\n| B6 | 54635 |", [["B6", 54635], ["UA", 58665]]).correct
    True
    >>> score("ANSWER: not in the data", NOT_IN_DATA).correct, score("ANSWER: Not in the data", 12).failure
    (True, 'refused')
    >>> score("@mean[2.51] @n[7]", "@n[7] @mean[2.5]", 0.05).correct
    True
    """
    pairs = gold_pairs(gold)
    if pairs is not None:
        return _score_pairs(text or "", pairs, tolerance)
    given = final_answer(text or "")
    if given is None:
        return Verdict(correct=False, failure="no_answer")
    if isinstance(gold, str) and says_not_in_data(gold):
        ok = says_not_in_data(given)
        return Verdict(correct=ok, given=given, failure=None if ok else "wrong_answer")
    if says_not_in_data(given):
        return Verdict(correct=False, given=given, failure="refused")
    ok = _compare(given, gold, tolerance)
    wrong: Failure = "wrong_number" if as_number(gold) is not None else "wrong_answer"
    return Verdict(correct=ok, given=given, failure=None if ok else wrong)


def _compare(given: str, gold: Any, tolerance: float) -> bool:
    """The answer read after the marker against a gold answer of any shape but pairs."""
    if isinstance(gold, list) and gold and all(isinstance(row, list) for row in gold):
        rows = [_cells(line) for line in _lines(given)]
        return _matched(_dedup(rows), _dedup(gold), lambda row, target: len(row) == len(target) and all(
            same_value(cell, want, tolerance) for cell, want in zip(row, target, strict=True)))
    if isinstance(gold, list):
        return _matched(_items(given), _dedup(gold), lambda item, target: same_value(item, target, tolerance))
    if as_number(gold) is not None:
        found = _NUMBER_IN_TEXT.search(given)
        return found is not None and same_value(found.group(0), gold, tolerance)
    if same_value(given, gold, tolerance):
        return True
    # A DABstep-style list written as text ("A, B, C") compares as a set.
    return isinstance(gold, str) and "," in gold and _compare(given, [g.strip() for g in gold.split(",")], tolerance)


def _score_pairs(text: str, pairs: dict[str, str], tolerance: float) -> Verdict:
    """Every ``@name[value]`` of the gold answer given, each value right."""
    given = dict(_PAIR.findall(text))
    if not given:
        return Verdict(correct=False, failure="no_answer")
    shown = " ".join(f"@{k}[{v}]" for k, v in given.items())
    ok = all(name in given and same_value(given[name], value, tolerance) for name, value in pairs.items())
    numeric = all(as_number(v) is not None for v in pairs.values())
    return Verdict(correct=ok, given=shown, failure=None if ok else "wrong_number" if numeric else "wrong_answer")
