"""Reading an answer's claims: what is one, its span, its value and the precision written."""

from __future__ import annotations

import json
import random
from datetime import date
from itertools import islice
from pathlib import Path

import pytest

from jupyter_analyst.receipts import read_claims
from jupyter_analyst.receipts.claims import MAX_ANSWER_CHARS

CASES = json.loads((Path(__file__).parents[1] / "fixtures" / "receipts" / "claims.json").read_text())


def _read(text: str) -> list[list]:
    return [[c.text, c.kind, c.value.isoformat() if isinstance(c.value, date) else c.value] for c in read_claims(text)]


@pytest.mark.parametrize("text, expected", CASES["claims"])
def test_each_number_percentage_amount_and_date_is_read(text, expected):
    assert _read(text) == [[t, k, pytest.approx(v) if isinstance(v, (int, float)) else v] for t, k, v in expected]


@pytest.mark.parametrize("text", CASES["not_claims"])
def test_code_links_markers_labels_and_identifiers_are_not_claims(text):
    assert _read(text) == []


@pytest.mark.parametrize("written, low, high", [
    ("21.9", 21.85, 21.95), ("22", 21.5, 22.5), ("1.6k", 1550, 1650), ("1,620", 1619.5, 1620.5),
    ("1620.0", 1619.95, 1620.05), ("45%", 44.5, 45.5), ("$1.2M", 1_150_000, 1_250_000), ("-3.5", -3.55, -3.45),
    ("about 1,600", 1550, 1650), ("~2,000", 1500, 2500), ("about 21.9", 21.85, 21.95), ("3 billion", 2.5e9, 3.5e9),
])
def test_a_number_claims_the_interval_its_written_precision_allows(written, low, high):
    (claim,) = read_claims(f"the value is {written} here")
    assert claim.bounds() == (pytest.approx(low), pytest.approx(high))


def test_signs_and_currencies_are_kept():
    claims = list(read_claims("fell -3.5, rose +2, cost $4 and €5"))
    assert [(c.signed, c.currency) for c in claims] == [(True, None), (True, None), (False, "$"), (False, "€")]


def test_spans_index_the_answer_as_written_around_code_and_links():
    answer = "Mean `x` is 21.9 (see https://a.org/5):\n```\n9\n```\nthen $1.2M\n\n1. AA: 45% on March 1, 2024"
    claims = list(read_claims(answer))
    assert [c.text for c in claims] == ["21.9", "$1.2M", "45%", "March 1, 2024"]
    assert all(answer[c.start:c.end] == c.text for c in claims)


def test_claims_come_lazily():
    claims = read_claims(" 7" * 100_000)
    assert [c.value for c in islice(claims, 3)] == [7, 7, 7]


@pytest.mark.parametrize("unit", ["1,", "1.", "12,345.", "-1", "$1,000,00", "1-2-", "2024-03-", "` ``", "```\n", "9"])
def test_a_megabyte_of_digits_and_separators_is_read_in_one_pass(unit):
    """Linear patterns: a regex that backtracked on runs of digits and separators would not
    finish a megabyte. Only the first :data:`MAX_ANSWER_CHARS` characters are read, and a
    reader takes the first claims it needs (the matcher its first 500)."""
    text = unit * (1_000_000 // len(unit))
    claims = list(islice(read_claims(text), 1000))
    assert all(c.end <= MAX_ANSWER_CHARS and text[c.start:c.end] == c.text for c in claims)


def test_a_megabyte_of_random_number_text_is_read():
    rng = random.Random(39)
    text = "".join(rng.choice("0123456789,.-$%k `\n:/") for _ in range(1_000_000))
    claims = list(islice(read_claims(text), 1000))
    assert len(claims) == 1000 and all(text[c.start:c.end] == c.text for c in claims)
