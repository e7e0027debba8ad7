"""No invented names: checks of what a step or an answer refers to.

SQL names are checked by the SQL layer (unknown tables and columns are refused with the
nearest real names). This module covers the rest:

- a Python step that reads a name nothing ever defined (not the step itself, not an earlier
  step, not a dataset, not the kernel's set-up, not a builtin) would only fail with a
  ``NameError``; it is refused before execution with the nearest dataset names instead;
- a final answer that cites an artifact id, a dataset or a table that does not exist is
  flagged, and the answer is marked so that the reader is not misled.

Both checks are conservative: code that defines names dynamically (``exec``, ``globals()``,
star imports) is not judged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..._text import nearest


@dataclass(frozen=True)
class Flag:
    """A name an answer cites that does not exist."""

    kind: str
    name: str
    suggestions: tuple[str, ...] = ()

    def describe(self) -> str:
        hint = f" (nearest: {', '.join(self.suggestions)})" if self.suggestions else ""
        return f"{self.kind} `{self.name}`{hint}"


_ARTIFACT_ID = re.compile(r"\bart_[0-9A-Za-z]+\b")
_NAMED = re.compile(
    r"\b(?P<before>dataset|dataframe|table)s?\s+`(?P<a>[A-Za-z_][\w.]*)`"
    r"|`(?P<b>[A-Za-z_][\w.]*)`\s+(?P<after>dataset|dataframe|table)\b",
    re.IGNORECASE,
)


def flag_answer(text: str, *, artifact_ids: set[str], datasets: set[str], tables: set[str]) -> list[Flag]:
    """Artifact ids, datasets and tables an answer cites that do not exist.

    Ids are recognised by their form (``art_...``); datasets and tables where the answer
    calls a quoted name one ("the dataset `x`", "`x` table").

    >>> [f.name for f in flag_answer("See art_0123456789abcdef and the dataset `revnue`.",
    ...     artifact_ids=set(), datasets={"revenue"}, tables={"orders"})]
    ['art_0123456789abcdef', 'revnue']
    """
    flags: list[Flag] = []
    for found in dict.fromkeys(_ARTIFACT_ID.findall(text)):
        if found not in artifact_ids:
            flags.append(Flag("artifact", found, tuple(nearest(found, artifact_ids, n=1))))
    for match in _NAMED.finditer(text):
        name = match.group("a") or match.group("b")
        kind = (match.group("before") or match.group("after")).lower()
        kind = "dataset" if kind == "dataframe" else kind
        known = tables if kind == "table" else datasets
        # A dataset called a table (or the reverse) is still a real name.
        if name in tables or name in datasets or name.split(".")[-1] in tables:
            continue
        if all(f.name != name for f in flags):
            flags.append(Flag(kind, name, tuple(nearest(name, known))))
    return flags


def mark_answer(text: str, flags: list[Flag]) -> str:
    """The answer with a visible note about the names it cites that do not exist."""
    if not flags:
        return text
    listed = "; ".join(f.describe() for f in flags)
    return f"{text}\n\n> **Note:** this answer cites names that do not exist in this thread: {listed}."


