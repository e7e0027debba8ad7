"""Printed text as evidence: the values a step's output showed, line by line.

A Python step shows the model text (what it printed, the repr of its last expression), not
a table. Each line becomes a row of its tokens: numbers and ISO dates as the text wrote them
(the cell index reads ``1,620.5`` and ``2024-03-01`` from text), words as text, so a
printed table's line (``AA  21.93``) lets a claim cite its number and the name beside it. The
row is the line's number in the text (from 0), which is how a reader finds it; a cell's
column is the text's name and the token's place in its line (``stdout:2``).

Bounded: at most :data:`MAX_LINES` lines and :data:`MAX_TOKENS` tokens a line are read.
"""

from __future__ import annotations

import re

from .evidence import Cell

#: Lines of one text read at most (a step's output shown to the model is already clipped).
MAX_LINES = 2_000
#: Tokens of one line read at most.
MAX_TOKENS = 64
#: An ISO day or month, a number (signs, a currency, thousands separators, decimals, an
#: exponent, a percent sign), or a word (a name such as ``AA`` or ``O'Hare``).
_TOKEN = re.compile(
    r"(?<![\w.])\d{4}-\d{2}(?:-\d{2})?(?![\w-])"
    r"|(?<![\w.])[-+]?[$€£¥]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d{1,3})?%?(?![\w.]\w)"
    r"|[A-Za-z][\w'&-]{0,79}"
)


def printed_rows(name: str, text: str) -> tuple[list[str], list[list[Cell]]]:
    """The columns and rows of the text called ``name``: a row per line, its tokens as cells
    (padded with ``None`` to the widest line), each column named for the text and the place
    of its tokens in their lines.

    >>> columns, rows = printed_rows("stdout", "carrier  delay\\nAA  21.93\\nmean: 1,620.5 (2024-03-01)")
    >>> columns
    ['stdout:1', 'stdout:2', 'stdout:3']
    >>> rows
    [['carrier', 'delay', None], ['AA', '21.93', None], ['mean', '1,620.5', '2024-03-01']]

    Numbers glued to words are not values the text states on their own:

    >>> printed_rows("stdout", "call_1 Q3 v2.1 -4.5e3 12%")[1]
    [['call_1', 'Q3', 'v2', '-4.5e3', '12%']]
    """
    lines = text.splitlines()[:MAX_LINES]
    rows: list[list[Cell]] = [[m.group(0) for m in _TOKEN.finditer(line)][:MAX_TOKENS] for line in lines]
    width = max((len(r) for r in rows), default=0)
    rows = [r + [None] * (width - len(r)) for r in rows]
    return [f"{name}:{n}" for n in range(1, width + 1)], rows
