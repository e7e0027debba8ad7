"""An answer's receipts: each claim it makes tied to the result value that supports it,
derived from two cited numbers, or said to be unsupported.

A numeric claim is supported by a cell whose value its written precision accepts
(``claims.py``), looked up in every reading the writing allows:

* as written (``1,620`` by 1620, ``1.6k`` by 1620, ``$1.2M`` by 1,234,567);
* a percentage also as a share (``45%`` by 0.45 as well as by 45);
* a number written without a sign also by its negative ("fell by 3.5" by -3.5), ranked
  after the readings with the sign it has;

and of the cells found, the one nearest the value written wins (exact over rounded), then
the reading's rank, then the cell index's preference (the latest step first, a table's
cells before named values, then row and column). Among cells of that one value, a row
whose text cell (a carrier's name) stands on the claim's line is taken first, and that text
is cited too, as ``kind="name"``.

A date is supported by a cell holding that day; a month by a cell within it, its first day
or ``YYYY-MM`` text first. A year in prose is cited when a result holds it and is otherwise
left out (``claims.py`` says why). A number nothing supports may be derived
(``derivations.py``: from two cited numbers, one in its sentence; else
``result_derivations.py``: from the cells of one result, a column's total or a pair);
otherwise it is unsupported.

The work is bounded whatever the answer: at most :data:`MAX_CLAIMS` claims are matched
(``Receipts.truncated`` says when there were more), each by a few bisections of the cell index.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice

from .answer_prose import prose
from .cell_index import CellIndex, CellRef
from .citations import Citation, Derivation, Receipts, UnsupportedClaim
from .claims import MAX_ANSWER_CHARS, Claim, read_claims
from .derivations import Derived, Operand, derive
from .evidence import Evidence
from .result_derivations import FromResult, derive_from_results

#: The claims of one answer matched at most.
MAX_CLAIMS = 500
#: How far either side of a claim its line is read for names (a long line is not read whole).
LINE_WINDOW = 300
#: How far either side of a derived number its operands may stand.
OPERAND_WINDOW = 1000
#: What ends a sentence or a line (a period in ``21.9`` is followed by a digit, not a space).
_ENDS = ("\n", ". ", "! ", "? ", "; ")


def receipts(answer: str, evidence: Sequence[Evidence]) -> Receipts:
    """The receipts of ``answer`` against the results in ``evidence`` (the module's rules).

    >>> table = Evidence(call_id="call_1", tool="run_sql", artifact_id="ds_1", columns=["carrier", "delay"],
    ...                  rows=[["AA", 21.93], ["UA", 17.71]])
    >>> found = receipts("AA averages 21.9 min, UA 17.7: 4.2 more. DL: 30.", [table])
    >>> [(c.text, c.kind, c.row, c.column) for c in found.citations]
    [('AA', 'name', 0, 'carrier'), ('21.9', 'number', 0, 'delay'), ('UA', 'name', 1, 'carrier'), ('17.7', 'number', 1, 'delay'), ('4.2', 'number', None, None)]
    >>> found.citations[4].derived
    Derivation(operation='difference', of=(1, 3), cells=[])
    >>> [(u.text, u.start) for u in found.unsupported]
    [('30', 45)]
    """
    claims = list(islice(read_claims(answer), MAX_CLAIMS + 1))
    truncated = len(claims) > MAX_CLAIMS or len(answer) > MAX_ANSWER_CHARS
    claims = claims[:MAX_CLAIMS]
    index = CellIndex(evidence)
    body = prose(answer[:MAX_ANSWER_CHARS])
    direct: dict[int, tuple[CellRef, float]] = {}
    for number, claim in enumerate(claims):
        if (cited := _cite(claim, index, body)) is not None:
            direct[number] = cited
    operands = [Operand(i, claims[i].start, claims[i].kind == "percent", held, float(claims[i].value),
                        claims[i].precision)
                for i, (_, held) in sorted(direct.items()) if claims[i].numeric and claims[i].kind != "year"]
    derived: dict[int, Derived | FromResult] = {}
    for number, claim in enumerate(claims):
        if number in direct or not claim.numeric:
            continue
        line_start, line = _line(body, claim.start, claim.end)
        near = (max(0, claim.start - OPERAND_WINDOW), claim.end + OPERAND_WINDOW)
        if (found := derive(claim, operands, near, (line_start, line_start + len(line)))) is not None:
            derived[number] = found
        elif (held := derive_from_results(claim, evidence)) is not None:
            derived[number] = held
    names = _names(body, claims, direct, index)
    return _assemble(answer, claims, direct, derived, names, index, truncated or index.truncated)


def _cite(claim: Claim, index: CellIndex, body: str) -> tuple[CellRef, float] | None:
    """The cell supporting ``claim`` and its value in the claim's units, if one does."""
    if not claim.numeric:
        assert not isinstance(claim.value, float)
        day = claim.value
        refs = index.on_day(day) if claim.kind == "date" else index.in_month(day.year, day.month)
        return (_named_first(refs, claim, body, index), 0.0) if refs else None
    low, high = claim.bounds()
    target = float(claim.value)
    factors = [1.0] + ([100.0] if claim.kind == "percent" else [])
    if not claim.signed and claim.kind != "year":
        factors += [-f for f in factors]
    best: tuple[tuple[float, int], list[CellRef], float] | None = None
    for rank, factor in enumerate(factors):
        edges = sorted((low / factor, high / factor))
        if (found := index.nearest(edges[0], edges[1], target / factor)) is None:
            continue
        distance, refs = found
        key = (distance * abs(factor) / (claim.precision / 2), rank)
        if best is None or key < best[0]:
            best = key, refs, factor
    if best is None:
        return None
    _, refs, factor = best
    ref = _named_first(refs, claim, body, index)
    assert ref.number is not None
    return ref, ref.number * factor


def _named_first(refs: list[CellRef], claim: Claim, body: str, index: CellIndex) -> CellRef:
    """Of cells holding one value, the first whose row has a text cell on the claim's line."""
    for ref in refs:
        if _row_names(ref, claim, body, index):
            return ref
    return refs[0]


def _row_names(ref: CellRef, claim: Claim, body: str, index: CellIndex) -> list[tuple[int, int, int]]:
    """The text cells of ``ref``'s row standing, as whole words, on ``claim``'s line: their
    spans in the answer and columns (an index), the occurrence nearest the claim."""
    if ref.row is None:
        return []
    item = index.evidence[ref.evidence]
    line_start, line = _line(body, claim.start, claim.end)
    found = []
    for column, value in enumerate(item.rows[ref.row]):
        if isinstance(value, str) and 2 <= len(value) <= 80 and item.columns[column] != ref.column \
                and (at := _word_nearest(line, value, claim.start - line_start)) is not None:
            found.append((line_start + at, line_start + at + len(value), column))
    return found


def _line(body: str, start: int, end: int) -> tuple[int, str]:
    """The claim's sentence (in its line; a table's row is a line), at most
    :data:`LINE_WINDOW` characters either side, and where it starts.

    >>> _line("Intro. AA flew 1,620 flights. UA 410.\\n| DL | 12 |", 15, 20)
    (7, 'AA flew 1,620 flights.')
    """
    low, high = max(0, start - LINE_WINDOW), min(len(body), end + LINE_WINDOW)
    low = max([low] + [body.rfind(mark, low, start) + len(mark) for mark in _ENDS if body.rfind(mark, low, start) >= 0])
    ends = [at for at in (body.find(mark, end, high) for mark in _ENDS) if at >= 0]
    high = min(ends) + 1 if ends else high
    return low, body[low:high]


def _word_nearest(line: str, word: str, position: int) -> int | None:
    """Where ``word`` stands whole in ``line`` nearest ``position``, if it does.

    >>> _word_nearest("AA and AAL: AA", "AA", 13)
    12
    >>> _word_nearest("AAL", "AA", 0) is None
    True
    """
    best, at = None, line.find(word)
    while at >= 0:
        before, after = line[at - 1:at] if at else "", line[at + len(word):at + len(word) + 1]
        if not (before.isalnum() or before == "_" or after.isalnum() or after == "_") \
                and (best is None or abs(at - position) < abs(best - position)):
            best = at
        at = line.find(word, at + 1)
    return best


def _names(body: str, claims: list[Claim], direct: dict[int, tuple[CellRef, float]],
           index: CellIndex) -> list[tuple[int, int, CellRef, int]]:
    """The text cells cited beside the numbers cited from their rows: span, the number's
    cell, the text's column; a span once, none over a claim."""
    taken = [(c.start, c.end) for c in claims]
    names = []
    for number, (ref, _) in sorted(direct.items()):
        for start, end, column in _row_names(ref, claims[number], body, index):
            if not any(s < end and start < e for s, e in taken):
                taken.append((start, end))
                names.append((start, end, ref, column))
    return names


def _assemble(answer: str, claims: list[Claim], direct: dict[int, tuple[CellRef, float]],
              derived: dict[int, Derived | FromResult], names: list[tuple[int, int, CellRef, int]], index: CellIndex,
              truncated: bool) -> Receipts:
    """The citations in the answer's order (a derivation naming its operands by position
    there), and the claims left unsupported."""
    order = sorted([(claims[i].start, claims[i].end, "claim", i) for i in [*direct, *derived]]
                   + [(start, end, "name", n) for n, (start, end, _, _) in enumerate(names)])
    place = {i: position for position, (_, _, tag, i) in enumerate(order) if tag == "claim"}
    citations = []
    for start, end, tag, i in order:
        text = answer[start:end]
        if tag == "name":
            _, _, ref, column = names[i]
            item = index.evidence[ref.evidence]
            assert ref.row is not None
            citations.append(Citation(start=start, end=end, text=text, kind="name", value=item.rows[ref.row][column],
                                      call_id=item.call_id, artifact_id=item.artifact_id, row=ref.row,
                                      column=item.columns[column]))
        elif i in direct:
            ref = direct[i][0]
            item = index.evidence[ref.evidence]
            citations.append(Citation(start=start, end=end, text=text, kind=claims[i].kind, value=ref.value,
                                      call_id=item.call_id, artifact_id=item.artifact_id, row=ref.row,
                                      column=ref.column))
        else:
            how = derived[i]
            derivation = Derivation(operation=how.operation, cells=how.cells) if isinstance(how, FromResult) \
                else Derivation(operation=how.operation, of=(place[how.a], place[how.b]))
            citations.append(Citation(start=start, end=end, text=text, kind=claims[i].kind, value=how.value,
                                      call_id=None, derived=derivation))
    unsupported = [UnsupportedClaim(start=c.start, end=c.end, text=c.text, kind=c.kind, value=c.value)
                   for i, c in enumerate(claims) if i not in direct and i not in derived and c.kind != "year"]
    return Receipts(citations=citations, unsupported=unsupported, truncated=truncated)
