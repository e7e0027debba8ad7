"""The claims of an answer: each number, percentage, money amount and date its prose states,
with its span and the precision it was written with.

What a written number claims is an interval: ``21.9`` claims a value that rounds to it,
[21.85, 21.95]; ``22`` claims [21.5, 22.5]; ``1.6k`` claims [1550, 1650]; ``1,620`` claims
1620 give or take 0.5. A value on an interval's edge supports it (writers round halves both
ways). ``about``, ``around``, ``~`` and the like before a whole number widen it to its
last digit that is not zero: ``about 1,600`` claims [1550, 1650], ``about 2,000`` [1500, 2500].

What is not a claim (so is never cited nor reported unsupported):

* anything in code (fenced blocks, inline code spans) or in a URL (``answer_prose.py``);
* numbers glued to letters or marks: identifiers (``Q3``, ``v2``, ``call_1``, ``COVID-19``,
  ``H2O``), ordinals and units (``3rd``, ``10am``, ``3-day``), times (``10:30``), fractions
  and slashed dates (``3/4``, ``03/01/2024``), versions (``1.2.3``), footnotes (``[1]``);
* a list marker (``1.`` or ``2)`` starting a line, after any ``#``, ``>`` or bullet);
* a label's number: ``Step 2``, ``Table 1``, ``row 5``, ``#4`` (:data:`LABELS`);
* a day written beside a month without a year (``March 1``): without its year it names no
  date a result could hold; nor a date that is no day (``2024-02-30``).

Years: a bare whole number from 1900 to 2100 (no sign, separator, decimals, unit or ``about``)
is read as a year (``kind="year"``). It is cited when a result holds it (a ``year`` column),
and never reported unsupported: in prose a year is the answer's frame ("in 2024"), not a
result. The cost is a count in that range written without a separator (``2000 orders``),
which goes unchecked; ``2,000 orders`` is checked.

Dates: ISO days (``2024-03-01``) and months (``2024-03``), ``March 2024``, ``March 1, 2024``
and ``1 March 2024`` (English month names, full or three letters), in the years a bare
number is read as one (``1620-30`` is a range of numbers).

The answer is an attacker's: the text read is cut at :data:`MAX_ANSWER_CHARS`, every pattern
is linear (possessive runs, bounded look-arounds on slices of a few characters), a token
longer than :data:`MAX_TOKEN` characters is not a number anyone wrote, and nothing is
evaluated. Claims come lazily, so a caller reading the first few hundred pays for no more.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel

from .answer_prose import prose

#: What a claim states.
ClaimKind = Literal["number", "percent", "money", "multiple", "year", "date", "month"]

#: The answer text read for claims; the rest is not (the caller says the answer was cut).
MAX_ANSWER_CHARS = 200_000
#: The longest number token read (a longer run of digits is data pasted, not a claim).
MAX_TOKEN = 40
#: Words whose following number is a label, not a value (matched case-insensitively, plural too).
LABELS = ("step", "figure", "fig", "table", "section", "chapter", "part", "item", "line", "page", "appendix",
          "cell", "turn", "version", "phase", "option", "query", "call", "row", "column", "note", "question",
          "example", "no", "number")

#: The years a bare four-digit number, an ISO date or a month's name is read as.
_YEARS = (1900, 2100)
_MONTHS = ("jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
           "|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?")
_MONTH_NUMBER = {name: i for i, name in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), start=1)}

_RUN = re.compile(r"\d[\d,.]*+")
_WELL_FORMED = re.compile(r"(\d{1,3}(?:,\d{3})++|\d++)(?:\.(\d++))?")
_ISO = re.compile(r"(\d{4})-(\d{2})(?:-(\d{2}))?(?!\d|-\d)")
_MONTH_BEFORE = re.compile(rf"(?<![A-Za-z])({_MONTHS})\.? {{1,2}}$", re.IGNORECASE)
_DAY_YEAR_AFTER = re.compile(r",? {1,2}(\d{4})(?!\d)")
_MONTH_YEAR_AFTER = re.compile(rf" {{1,2}}({_MONTHS})\.?,? {{1,2}}(\d{{4}})(?!\d)", re.IGNORECASE)
_MONTH_AFTER = re.compile(rf" {{1,2}}(?:{_MONTHS})(?![A-Za-z])", re.IGNORECASE)
_LABEL_BEFORE = re.compile(rf"(?<![A-Za-z])(?:{'|'.join(LABELS)})s?\.? ?#?$|#$", re.IGNORECASE)
_HEDGE_BEFORE = re.compile(r"(?:(?<![A-Za-z])(?:about|around|roughly|approximately|approx\.?|nearly|almost|circa"
                           r"|some)|~|≈) ?$", re.IGNORECASE)
_PERCENT_AFTER = re.compile(r" ?%| (?:percent|per cent|pct|percentage points?|pp)(?![A-Za-z])", re.IGNORECASE)
_GLUED_SCALE = re.compile(r"(k|K|M|MM|mn|bn|B|x|×)(?![A-Za-z0-9_])")
_WORD_SCALE = re.compile(r" {1,2}(thousand|million|billion|trillion)(?![A-Za-z])", re.IGNORECASE)
_SCALES = {"k": 1e3, "K": 1e3, "thousand": 1e3, "M": 1e6, "MM": 1e6, "mn": 1e6, "million": 1e6,
           "B": 1e9, "bn": 1e9, "billion": 1e9, "trillion": 1e12}
_CURRENCIES = "$€£¥"
_SIGNS = {"-": "-", "−": "-", "+": "+"}
_GLUED_BEFORE = set(".#@/\\&^")
_MARKER_PREFIX = set(" \t#>*+-")
#: The rest of a word, up to a space or the punctuation that separates values (a table's ``|``).
_CHUNK = re.compile(r"[^\s|()\[\]{}<>,;\"']*+")


#: A claim found, but for its text (the answer's, not the blanked prose's).
_Found = dict[str, Any]


class Claim(BaseModel, frozen=True, extra="forbid"):
    """One value the answer states, where it states it, and how precisely."""

    start: int
    """Where the claim starts in the answer (a character index)."""
    end: int
    """Where it ends (exclusive)."""
    text: str
    """The answer's text of it: ``answer[start:end]``."""
    kind: ClaimKind
    """What it states."""
    value: float | date
    """The value written, units applied (``1.2M`` is 1200000.0, ``45%`` is 45.0); a date
    for ``date``, the month's first day for ``month``."""
    precision: float = 0.0
    """The place of the last digit the answer wrote, in the value's units (0.1 for
    ``21.9``, 100000 for ``1.2M``, 100 for ``about 1,600``); 0 for a date."""
    signed: bool = False
    """A sign was written (``-3.5``, ``+12%``): only a value of that sign supports it."""
    currency: str | None = None
    """The currency symbol written before it, if any."""

    @property
    def numeric(self) -> bool:
        """Whether the claim is a number (not a date or month)."""
        return self.kind not in ("date", "month")

    def bounds(self) -> tuple[float, float]:
        """The interval of values that, written as the answer wrote this one, read the same.

        >>> claim = next(read_claims("mean 21.9"))
        >>> [round(b, 6) for b in claim.bounds()]
        [21.85, 21.95]
        """
        assert isinstance(self.value, float)
        return self.value - self.precision / 2, self.value + self.precision / 2


def read_claims(text: str) -> Iterator[Claim]:
    """The claims in ``text``, in order (lazily; the reading rules are the module's).

    >>> [(c.text, c.kind, c.value, c.precision) for c in read_claims("Delays fell 3.5% to 21.9 min on 1,620 flights.")]
    [('3.5%', 'percent', 3.5, 0.1), ('21.9', 'number', 21.9, 0.1), ('1,620', 'number', 1620.0, 1.0)]
    >>> [(c.text, c.value, c.precision) for c in read_claims("$1.2M, about 1,600 orders, 1.6k users, 3 billion rows")]
    [('$1.2M', 1200000.0, 100000.0), ('1,600', 1600.0, 100.0), ('1.6k', 1600.0, 100.0), ('3 billion', 3000000000.0, 1000000000.0)]
    >>> [(c.text, c.kind, str(c.value)) for c in read_claims("From 2024-03-01 to March 2024 in 2023; 2024-02 too.")]
    [('2024-03-01', 'date', '2024-03-01'), ('March 2024', 'month', '2024-03-01'), ('2023', 'year', '2023.0'), ('2024-02', 'month', '2024-02-01')]
    >>> [c.text for c in read_claims("Step 2: Q3 v2 call_1 COVID-19 3rd 10:30 3/4 1.2.3 [1] `42` row 5 on March 1")]
    []
    >>> [c.text for c in read_claims("1. first\\n2) second 7\\n## 3. Third")]
    ['7']
    >>> [(c.text, c.value, c.signed) for c in read_claims("change -3.5, range 10-20, +12%, -$4")]
    [('-3.5', -3.5, True), ('10', 10.0, False), ('20', 20.0, False), ('+12%', 12.0, True), ('-$4', -4.0, True)]
    """
    body = prose(text[:MAX_ANSWER_CHARS])
    resume = 0
    for run in _RUN.finditer(body):
        if run.start() < resume:
            continue
        found = _date(body, run.start()) or _number(body, run)
        if isinstance(found, int):
            resume = found
        elif found is not None:
            resume = found["end"]
            yield Claim(text=text[found["start"]:found["end"]], **found)


def _date(body: str, start: int) -> _Found | int | None:
    """A date or month at the run starting at ``start``; the end of a day beside a month
    with no year (not a claim, skipped); or None when the run is no date."""
    if _glued_before(body, start):
        return _chunk_end(body, start)
    if (iso := _ISO.match(body, start)) and _YEARS[0] <= int(iso[1]) <= _YEARS[1]:
        year, month, day = int(iso[1]), int(iso[2]), int(iso[3] or 1)
        return _dated(body, start, iso.end(), year, month, day, "date" if iso[3] else "month")
    if month := _MONTH_BEFORE.search(body[max(0, start - 12):start]):
        month_start = start - len(month[0])
        digits = _RUN.match(body, start)
        assert digits is not None
        token = digits[0].rstrip(".,")
        if len(token) == 4 and token.isdigit() and _YEARS[0] <= int(token) <= _YEARS[1]:
            return _dated(body, month_start, start + 4, int(token), _month(month[1]), 1, "month")
        if len(token) <= 2 and token.isdigit():
            year = _DAY_YEAR_AFTER.match(body, start + len(token))
            if year is None:
                return start + len(token)
            return _dated(body, month_start, year.end(), int(year[1]), _month(month[1]), int(token), "date")
    digits = _RUN.match(body, start)
    assert digits is not None
    token = digits[0].rstrip(".,")
    if len(token) <= 2 and token.isdigit():
        if after := _MONTH_YEAR_AFTER.match(body, start + len(token)):
            return _dated(body, start, after.end(), int(after[2]), _month(after[1]), int(token), "date")
        if after := _MONTH_AFTER.match(body, start + len(token)):
            return after.end()
    return None


def _dated(body: str, start: int, end: int, year: int, month: int, day: int, kind: ClaimKind) -> _Found | int:
    """The date claim, or ``end`` (skip it) when the numbers name no date."""
    try:
        value = date(year, month, day)
    except ValueError:
        return end
    return {"start": start, "end": end, "kind": kind, "value": value}


def _month(name: str) -> int:
    return _MONTH_NUMBER[name[:3].lower()]


def _glued_before(body: str, position: int) -> bool:
    """Whether the character before ``position`` makes the number part of something else."""
    before = body[position - 1] if position else ""
    if before.isalnum() or before in _GLUED_BEFORE:
        return True
    if before == "-" and position >= 2 and body[position - 2].isalpha():
        return True  # COVID-19, step-2
    if before == "_":
        return position >= 2 and (body[position - 2].isalnum() or body[position - 2] == "_")  # call_1, not _1,620_
    return before == ":" and position >= 2 and body[position - 2].isdigit()  # the minutes of 10:30


def _number(body: str, run: re.Match[str]) -> _Found | int | None:
    """The number at ``run``, or its end when it is not a claim (the module's rules)."""
    start, token = run.start(), run[0].rstrip(".,")
    end = start + len(token)
    written = _WELL_FORMED.fullmatch(token) if len(token) <= MAX_TOKEN else None
    if written is None:
        return run.end()
    position, sign, currency = start, "", None
    for _ in range(2):
        before = body[position - 1] if position else " "
        if before in _CURRENCIES and currency is None:
            currency, position = before, position - 1
        elif before in _SIGNS and not sign and (position < 2 or not (body[position - 2].isalnum() or body[position - 2]
                                                                    in ").")):
            sign, position = _SIGNS[before], position - 1
        else:
            break
    if _glued_before(body, position):
        return _chunk_end(body, end)
    if _LABEL_BEFORE.search(body[max(0, position - 12):position]):
        return end
    if (body[position - 1:position], body[end:end + 1]) == ("[", "]"):
        return end  # a footnote
    if _list_marker(body, position, end, token):
        return end
    kind, scale = "number", 1.0
    if percent := _PERCENT_AFTER.match(body, end):
        kind, end = "percent", percent.end()
    elif scaled := _GLUED_SCALE.match(body, end) or _WORD_SCALE.match(body, end):
        unit = scaled[1] if scaled[1] in _SCALES else scaled[1].lower()
        kind, scale, end = ("multiple", 1.0, scaled.end()) if unit in ("x", "×") else ("number", _SCALES[unit],
                                                                                     scaled.end())
    if _glued_after(body, end):
        return _chunk_end(body, end)
    whole, places = written[1].replace(",", ""), written[2] or ""
    approximate = bool(_HEDGE_BEFORE.search(body[max(0, position - 16):position]))
    precision = 10.0 ** -len(places)
    if approximate and not places:
        precision = 10.0 ** (len(whole) - len(whole.rstrip("0"))) if whole.strip("0") else 1.0
    value = float(f"{whole}.{places}" if places else whole) * scale
    if kind == "number" and currency:
        kind = "money"
    elif kind == "number" and not (sign or places or approximate or scale != 1 or "," in written[1]) \
            and len(whole) == 4 and _YEARS[0] <= value <= _YEARS[1]:
        kind = "year"
    return {"start": position, "end": end, "kind": kind, "value": -value if sign == "-" else value,
            "precision": precision * scale, "signed": bool(sign), "currency": currency}


def _glued_after(body: str, end: int) -> bool:
    """Whether what follows makes the number part of something else (``3rd``, ``3/4``,
    ``10:30``, ``3-day``)."""
    after, then = body[end:end + 1], body[end + 1:end + 2]
    if after.isalnum():
        return True
    if after == "_":
        return then.isalnum() or then == "_"  # 1_000, 2_b; not the emphasis of _1,620_
    return (after in "/:" and then.isdigit()) or (after == "-" and then.isalpha())


def _list_marker(body: str, start: int, end: int, token: str) -> bool:
    """Whether the number is a list marker: a short whole number then ``.`` or ``)`` and a
    space, first on its line after any heading, quote or bullet marks."""
    if not (token.isdigit() and len(token) <= 3 and body[end:end + 1] in (".", ")")
            and body[end + 1:end + 2] in ("", " ", "\t", "\n")):
        return False
    before = body[max(0, start - 12):start]  # a slice: no scan back over a long line
    if "\n" in before:
        before = before[before.rfind("\n") + 1:]
    elif start > 12:
        return False
    return all(ch in _MARKER_PREFIX for ch in before)


def _chunk_end(body: str, position: int) -> int:
    """The end of the word a glued number is part of (``v2024-03``, ``10:30``): none of its
    digits is a claim. Linear: the reader resumes after it."""
    chunk = _CHUNK.match(body, position)
    assert chunk is not None
    return chunk.end()
