"""An answer's cited numbers restated with today's values (``verify --reanswer``).

Pure: given an answer's receipts and the values its cited cells hold now, each citation
is ``unchanged``, ``changed`` (its text rewritten in the form the answer wrote it: ``21.9``
stays one decimal, ``1.6k`` a multiple of a thousand, ``45%`` a percentage), ``gone`` (its
row or column is not in today's result) or ``not_rechecked`` (it was cited from a step's
printed output, which is not read back). A derived number is recomputed from its operands'
new values by its one operation. An unsupported claim is never re-checked; nor is any text
around the cited spans.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..receipts import Citation, UnsupportedClaim

ClaimStatus = Literal["changed", "unchanged", "gone", "not_rechecked"]

_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


class AnswerReceipts(BaseModel, frozen=True, extra="forbid"):
    """The receipts an exported answer cell carries (``metadata.jupyter_analyst.receipts``)."""

    answer: str
    citations: list[Citation] = Field(default_factory=list)
    unsupported: list[UnsupportedClaim] = Field(default_factory=list)


class ClaimCheck(BaseModel):
    """One claim of the answer, then and now."""

    text: str
    """As the answer wrote it."""
    new_text: str
    """As the re-answer writes it (the same unless ``changed``)."""
    status: ClaimStatus
    kind: str
    old: Any
    new: Any = None
    call_id: str | None = None
    row: int | None = None
    column: str | None = None
    derived: str | None = None
    """For a derived number, its operation."""
    note: str | None = None
    start: int | None = None
    """Where the claim stands in the restated answer (``end`` past it), when it has a place."""
    end: int | None = None


class ReansweredAnswer(BaseModel):
    """One answer restated on today's data."""

    turn_id: str | None
    original: str
    answer: str
    """The answer with today's values in place of the changed cited ones."""
    marked: str
    """The same with each changed span written ``new (was old)``."""
    claims: list[ClaimCheck]
    citations: list[Citation]
    """The receipts for ``answer``: the spans moved, the values today's."""
    unsupported: list[UnsupportedClaim]


def _number(value: Any) -> float | None:
    """A cell's value as a number, if it is one (a DECIMAL column's cells are ``Decimal``)."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal) or not math.isfinite(value):
        return None
    return float(value)


def _same(old: Any, new: Any) -> bool:
    a, b = _number(old), _number(new)
    if a is not None and b is not None:
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return _text(old) == _text(new)


def _text(value: Any) -> str:
    return value.isoformat() if isinstance(value, date | datetime) else str(value)


def scale_of(text: str, value: Any) -> float:
    """What the written number is multiplied by to give the held value, a power of ten
    (``45%`` of 0.45: 0.01; ``1.6k`` of 1620: 1000).

    >>> scale_of("45%", 0.45), scale_of("1.6k", 1620), scale_of("21.9", 21.93), scale_of("$1.2M", 1.2e6)
    (0.01, 1000, 1, 1000000)
    """
    match, held = _NUMBER.search(text), _number(value)
    written = float(match.group().replace(",", "")) if match else 0.0
    if not written or not held:
        return 1
    power = round(math.log10(abs(held / written)))
    return 10 ** power if power >= 0 else 10.0 ** power


def restate(text: str, old: Any, new: Any) -> str:
    """``text``, which wrote ``old``, rewritten to write ``new`` the same way.

    >>> restate("21.9", 21.93, 23.456), restate("1,620", 1620, 1702), restate("1.6k", 1620, 1702)
    ('23.5', '1,702', '1.7k')
    >>> restate("45%", 0.45, 0.5), restate("$1.2M", 1.2e6, 1.31e6), restate("Frontier", "Frontier", "Delta")
    ('50%', '$1.3M', 'Delta')
    """
    match, value = _NUMBER.search(text), _number(new)
    if match is None or value is None or _number(old) is None:
        return _text(new)
    written = match.group()
    value /= scale_of(text, old)
    before, after = text[: match.start()], text[match.end():]
    signed = before.endswith(("-", "−", "+"))
    if signed:
        before = before[:-1]
    elif (_number(old) or 0) < 0:
        value = abs(value)  # the answer stated a magnitude ("fell 12%")
    decimals = len(written.split(".")[1]) if "." in written else 0
    body = f"{abs(value):{',' if ',' in written else ''}.{decimals}f}"
    sign = "-" if value < 0 and float(body.replace(",", "")) else "+" if signed and text[len(before)] == "+" else ""
    return f"{before}{sign}{body}{after}"


def _compute(operation: str, a: float, b: float) -> float | None:
    """One operation of ``derivations.py`` on two numbers in the answer's units."""
    if operation == "difference":
        return a - b
    if operation == "sum":
        return a + b
    if not b:
        return None
    return {"ratio": a / b, "percent_change": (a - b) / b * 100, "share": a / b * 100}.get(operation)


def recheck(receipts: AnswerReceipts, values: Mapping[str, Mapping[str, list[Any]]], queried: set[str],
            turn_id: str | None = None) -> ReansweredAnswer:
    """Each claim of ``receipts`` against ``values`` (artifact id -> column -> today's cells,
    for the query results the re-run kept); ``queried`` are the artifacts query steps made,
    whose cells are read back (a citation of another is not re-checked)."""
    checks: list[ClaimCheck] = []
    now: list[Any] = []
    for citation in receipts.citations:
        check, new = _check(citation, values, queried)
        checks.append(check)
        now.append(new)
    for i, citation in enumerate(receipts.citations):
        if citation.derived is None:
            continue
        if citation.derived.of is None:
            # Computed from a result's cells the answer does not cite: they are not re-read.
            checks[i].note = "derived from cells of a result the answer does not cite; not re-checked"
            continue
        a, b = citation.derived.of
        operands = [receipts.citations[j] for j in (a, b)]
        news = [now[j] for j in (a, b)]
        check = checks[i]
        if any(checks[j].status in ("gone", "not_rechecked") for j in (a, b)) or None in map(_number, news):
            check.note = "derived from a number that is not re-checked"
            continue
        units = [_number(n) / scale_of(o.text, o.value) for n, o in zip(news, operands, strict=True)]  # type: ignore[operator]
        value = _compute(citation.derived.operation, units[0], units[1])
        if value is None:
            check.status, check.note = "gone", "its operation has no value on today's numbers (division by zero)"
            continue
        if citation.derived.operation == "percent_change" and not citation.text.lstrip().startswith(("-", "+", "−")):
            value = abs(value)
        now[i] = value
        if not _same(citation.value, value):
            check.status, check.new, check.new_text = "changed", value, restate(citation.text, citation.value, value)
    for claim in receipts.unsupported:
        checks.append(ClaimCheck(text=claim.text, new_text=claim.text, status="not_rechecked", kind=claim.kind,
                                 old=_text(claim.value), note="no step showed this number: not re-checked"))
    return _rewrite(receipts, checks, now, turn_id)


def _check(citation: Citation, values: Mapping[str, Mapping[str, list[Any]]], queried: set[str],
           ) -> tuple[ClaimCheck, Any]:
    check = ClaimCheck(text=citation.text, new_text=citation.text, status="unchanged", kind=citation.kind,
                       old=citation.value, call_id=citation.call_id, row=citation.row, column=citation.column,
                       derived=citation.derived.operation if citation.derived else None)
    if citation.derived is not None:
        return check, citation.value
    if citation.artifact_id is None or citation.row is None or citation.column is None \
            or citation.artifact_id not in queried:
        check.status, check.note = "not_rechecked", "cited from a step's printed output, which is not read back"
        return check, None
    if citation.artifact_id not in values:
        check.status, check.note = "gone", "its step kept no result on this run (see verify's error)"
        return check, None
    cells = values[citation.artifact_id].get(citation.column)
    if cells is None or citation.row >= len(cells):
        where = f"column {citation.column!r}" if cells is None else f"row {citation.row + 1}"
        check.status, check.note = "gone", f"today's result has no {where}"
        return check, None
    new = cells[citation.row]
    number = _number(new)
    new = number if number is not None else new
    check.new = new if number is not None or new is None else _text(new)
    if not _same(citation.value, new):
        check.status, check.new_text = "changed", restate(citation.text, citation.value, new)
    return check, new


def _rewrite(receipts: AnswerReceipts, checks: list[ClaimCheck], now: list[Any], turn_id: str | None,
             ) -> ReansweredAnswer:
    """The answer with the changed spans rewritten, its receipts' spans moved to match."""
    answer, marked, shift, cursor = [], [], 0, 0
    moved: list[Citation] = []
    spans = sorted(range(len(receipts.citations)), key=lambda i: receipts.citations[i].start)
    starts: dict[int, tuple[int, int]] = {}
    for i in spans:
        citation, check = receipts.citations[i], checks[i]
        if citation.start < cursor:
            continue  # overlapping spans (a forged record): the first one wins
        gap = receipts.answer[cursor:citation.start]
        answer.append(gap)
        marked.append(gap)
        answer.append(check.new_text)
        marked.append(f"{check.new_text} (was {citation.text})" if check.status == "changed" else citation.text)
        starts[i] = (citation.start + shift, citation.start + shift + len(check.new_text))
        shift += len(check.new_text) - len(citation.text)
        cursor = citation.end
    answer.append(receipts.answer[cursor:])
    marked.append(receipts.answer[cursor:])
    for i, citation in enumerate(receipts.citations):
        start, end = starts.get(i, (citation.start, citation.end))
        value = now[i] if now[i] is not None and checks[i].status == "changed" else citation.value
        moved.append(citation.model_copy(update={"start": start, "end": end, "text": checks[i].new_text,
                                                 "value": value if _number(value) is not None else _text(value)}))
    text = "".join(answer)
    unsupported = [u.model_copy(update={"start": u.start + _offset(u.start, receipts, starts),
                                        "end": u.end + _offset(u.start, receipts, starts)})
                   for u in receipts.unsupported]
    # Each claim's place in the restated text: a citation's where it was written (not one a
    # forged overlap left out), an unsupported claim's moved as the spans before it grew.
    for i, (start, end) in starts.items():
        checks[i].start, checks[i].end = start, end
    for check, claim in zip(checks[len(receipts.citations):], unsupported, strict=True):
        check.start, check.end = claim.start, claim.end
    return ReansweredAnswer(turn_id=turn_id, original=receipts.answer, answer=text, marked="".join(marked),
                            claims=checks, citations=moved, unsupported=unsupported)


def _offset(position: int, receipts: AnswerReceipts, starts: Mapping[int, tuple[int, int]]) -> int:
    """How far text at ``position`` moved: the growth of the rewritten spans before it."""
    return sum((starts[i][1] - starts[i][0]) - (c.end - c.start) for i, c in enumerate(receipts.citations)
               if i in starts and c.end <= position)
