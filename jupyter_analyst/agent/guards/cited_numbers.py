"""An answer's numbers checked against the results its thread holds, and what the model is
told of those no result supports.

The evidence is every ``ok`` result of the thread's steps, oldest first (reused ones
too), each read by its tool's ``evidence`` hook: what it showed the model. A number is then
cited to the step, artifact, row and column that hold it, derived from two cited numbers (or cells of one result),
or unsupported (``jupyter_analyst.receipts``). The model is told of unsupported numbers
once, in one user message (:func:`answer_check`); its next answer is final, and what is still
unsupported in it stays marked in the turn's receipts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...events import Event, ToolResult
from ...receipts import Evidence, Receipts, UnsupportedClaim, read_claims, receipts
from ..spec import spec_of

#: What the one message telling the model of unsupported numbers starts with (a scripted
#: model and a reader of the requests know it by this).
ANSWER_CHECK_MARKER = "[answer check]"
#: The thread's latest results read as evidence at most (each is bounded by what the model
#: was shown; the cell index has its own cap).
MAX_RESULTS = 200
#: Unsupported spans named in the message at most; the rest are counted.
NAMED_SPANS = 12
#: Characters of the answer shown either side of a span, to tell one ``30`` from another.
SPAN_CONTEXT = 24


def evidence_of(events: Iterable[Event]) -> list[Evidence]:
    """What the ``ok`` tool results among ``events`` (oldest first) showed, each read by its
    tool's ``evidence`` hook; a tool without one shows nothing citable."""
    found: list[Evidence] = []
    for result in [e for e in events if isinstance(e, ToolResult) and e.status == "ok"][-MAX_RESULTS:]:
        spec = spec_of(result.tool)
        if spec is not None and spec.evidence is not None:
            found.extend(spec.evidence(result.call_id, result.result))
    return found


def answer_receipts(answer: str, results: Iterable[Event], *, asked: str = "", given: str = "") -> Receipts:
    """The receipts of ``answer`` against the thread's tool ``results``; a number the question
    ``asked`` states itself ("the top 5", "over the last 30 days") is the user's, and one the
    system message ``given`` to the model states (a table's row count in the schema, a team's
    rule) is the prompt's: neither is a claim to support, so neither is reported unsupported.

    >>> answer_receipts("The 5 busiest carriers: none above 30 flights.", [], asked="Top 5 carriers?").unsupported
    [UnsupportedClaim(start=35, end=37, text='30', kind='number', value=30.0)]
    >>> answer_receipts("flights has 2,400 rows.", [], given="- flights (2,400 rows): carrier VARCHAR").unsupported
    []
    """
    found = receipts(answer, evidence_of(results))
    if not found.unsupported or not (asked or given):
        return found
    said = {claim.value for claim in read_claims(f"{asked}\n{given}")}
    return found.model_copy(update={"unsupported": [c for c in found.unsupported if c.value not in said]})


def answer_check(answer: str, unsupported: Sequence[UnsupportedClaim]) -> dict[str, str]:
    """The one user message telling the model which numbers of its ``answer`` no result
    supports, and what it may do.

    >>> from ...receipts import UnsupportedClaim
    >>> claim = UnsupportedClaim(start=12, end=14, text="30", kind="number", value=30.0)
    >>> print(answer_check("AA 21.9, DL 30.", [claim])["content"])
    [answer check] This number of your answer is in no result you were shown, nor one operation away from numbers that are: "30" (in "AA 21.9, DL 30."). Correct it, compute it with a step, or keep it (it is then marked unsupported to the reader). Reply with your whole final answer; this check is not repeated.
    """
    spans = [f'"{c.text}" (in "{_around(answer, c.start, c.end)}")' for c in unsupported[:NAMED_SPANS]]
    more = len(unsupported) - len(spans)
    named = ", ".join(spans) + (f" and {more} more" if more > 0 else "")
    one = len(unsupported) == 1
    these, it, it_is = ("This number", "it", "it is") if one else ("These numbers", "them", "they are")
    return {"role": "user", "content": (
        f"{ANSWER_CHECK_MARKER} {these} of your answer {'is' if one else 'are'} in no result you were shown, nor one "
        f"operation away from numbers that are: {named}. Correct {it}, compute {it} with a step, or keep {it} "
        f"({it_is} then marked unsupported to the reader). Reply with your whole final answer; this check is not "
        "repeated.")}


def _around(answer: str, start: int, end: int) -> str:
    """The span with a few words either side, within its line.

    >>> _around("first line\\nthe delay was 30 minutes in March, the worst of the year", 25, 27)
    'the delay was 30 minutes in March, the'
    """
    low = max(answer.rfind("\n", 0, start) + 1, start - SPAN_CONTEXT)
    high = answer.find("\n", end)
    high = min(high if high >= 0 else len(answer), end + SPAN_CONTEXT)
    # Whole words at the edges (a cut word reads as another one).
    if low > 0 and answer[low - 1] not in " \n":
        low = answer.find(" ", low, start) + 1 or low
    if high < len(answer) and answer[high] not in " \n":
        high = answer.rfind(" ", end, high) if answer.rfind(" ", end, high) >= 0 else high
    return " ".join(answer[low:high].split())
