"""The prose of an answer: its text with code and links blanked out, positions kept.

A number inside code (a fenced block, an inline code span) is the model quoting SQL or
Python, not stating a result; a number in a URL is part of an address. Both are blanked
(each character but a newline becomes a space) so the claim reader sees only prose while
every span it reports still indexes the answer as written.

The answer is the model's, so an attacker's: every pattern here is linear (no nested
quantifiers; the backtick runs are paired by a lookup, not by a regex that backtracks), and
the work is one pass over the text.
"""

from __future__ import annotations

import re
from bisect import bisect_right

#: A fence line: up to three spaces, then three or more backticks or tildes.
_FENCE = re.compile(r" {0,3}(`{3,}+|~{3,}+)")
_BACKTICKS = re.compile(r"`++")
#: A bare or autolinked URL, up to the first space or closing bracket.
_URL = re.compile(r"(?:https?|ftp)://[^\s<>()\[\]`]*+", re.IGNORECASE)
#: A markdown link's or image's destination, whatever its scheme (``](files/a-2.csv)``,
#: ``](javascript:alert(1))``): one level of parentheses inside, as CommonMark balances them.
_DESTINATION = re.compile(r"\]\((?:[^()\s]++|\([^()\s]*+\))*+")
#: An HTML tag (its attributes are addresses and styles, not prose).
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*+(?:\s[^<>]*+)?>")
_NOT_NEWLINE = re.compile(r"[^\n]")


def prose(text: str) -> str:
    """``text`` with its fenced code, inline code spans, URLs, link destinations and HTML
    tags blanked (same length).

    >>> prose("Total 12 (`SELECT 34`).")
    'Total 12 (           ).'
    >>> prose("See https://x.org/2024/5 for 7.")
    'See                      for 7.'
    >>> prose("A\\n```sql\\nSELECT 1\\n```\\nB 2").splitlines()
    ['A', '      ', '        ', '   ', 'B 2']
    >>> prose("[a script](javascript:alert(1)) <img alt=3 src=x> 5")
    '[a script                     )                   5'
    """
    spans = _fenced(text)
    spans += _inline_code(text, spans)
    spans += [(m.start(), m.end()) for pattern in (_URL, _DESTINATION, _TAG) for m in pattern.finditer(text)]
    if not spans:
        return text
    pieces, done = [], 0
    for start, end in sorted(spans):
        start = max(start, done)  # spans may overlap: a URL inside a code span
        if end > start:
            pieces += [text[done:start], _NOT_NEWLINE.sub(" ", text[start:end])]
            done = end
    return "".join(pieces) + text[done:]


def _fenced(text: str) -> list[tuple[int, int]]:
    """The fenced code blocks (CommonMark): from an opening fence line to the closing fence
    of the same character and at least its length, or to the end of the text."""
    spans: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None  # (start, fence)
    position = 0
    for line in text.splitlines(keepends=True):
        fence = _FENCE.match(line)
        if opened is None and fence:
            opened = (position, fence[1])
        elif opened is not None and fence and fence[1][0] == opened[1][0] and len(fence[1]) >= len(opened[1]) \
                and not line[fence.end():].strip():
            spans.append((opened[0], position + len(line)))
            opened = None
        position += len(line)
    if opened is not None:
        spans.append((opened[0], len(text)))
    return spans


def _inline_code(text: str, fenced: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The inline code spans outside ``fenced``: a run of backticks closed by the next run of
    the same length; a run never closed is literal text (CommonMark).

    The next run of each length is found by a lookup of the runs by length, so text made of
    many unmatched runs costs one pass, not one scan per run.

    >>> _inline_code("a `b` c ``d`e`` f `g", [])
    [(2, 5), (8, 15)]
    """
    starts = [s for s, _ in fenced]
    runs = []
    for m in _BACKTICKS.finditer(text):
        i = bisect_right(starts, m.start()) - 1
        if i < 0 or m.start() >= fenced[i][1]:
            runs.append((m.start(), m.end()))
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    spans: list[tuple[int, int]] = []
    taken = -1  # the last run used as a closer; runs up to it are inside a span
    for index, (start, end) in enumerate(runs):
        if index <= taken:
            continue
        same = by_length[end - start]
        after = bisect_right(same, index)
        if after < len(same):
            taken = same[after]
            spans.append((start, runs[taken][1]))
    return spans
