"""A Python step's error as the model is told it: where in its code, what, and the hint.

IPython's traceback of a pandas ``KeyError`` is 1.3k characters of pandas' own frames, twice
(the error is raised again from the first). The model needs the line of its own code that
failed, the error, and the hint the kernel added (kernel/error_hints.py: the real columns or
names); the library's frames are counted, not shown. Only the last exception of a chain is
kept: the one the code saw.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...kernel import ErrorInfo

_CHAINED = ("The above exception was the direct cause", "During handling of the above exception")
#: An installed package's frame (its name), or the standard library's.
_PACKAGE = re.compile(r"(?:site-packages|dist-packages)/([A-Za-z0-9_]+)|lib/python3\.\d+/(?!site-packages|dist-packages)([A-Za-z0-9_]+)")


def error_text(ename: str, evalue: str, traceback: list[str]) -> str:
    """The error for the model: its own frames, the library's counted, the error and its notes.

    >>> print(error_text("KeyError", "'x'", [
    ...     "-----", "KeyError    Traceback (most recent call last)", "File /v/site-packages/pandas/a.py:1, in f()",
    ...     "KeyError: 'x'", "\\nThe above exception was the direct cause of the following exception:\\n",
    ...     "KeyError    Traceback (most recent call last)", "Cell In[3], line 1\\n----> 1 df['x']\\n",
    ...     "File /v/site-packages/pandas/frame.py:9, in DataFrame.__getitem__(self, key)\\n-> 9 raise",
    ...     "KeyError: 'x'", "Hint: the DataFrame's columns (1): y"]))
    Cell In[3], line 1
    ----> 1 df['x']
    [1 frame inside pandas not shown]
    KeyError: 'x'
    Hint: the DataFrame's columns (1): y
    """
    entries = [t for t in traceback if t.strip()]
    chained = [i for i, t in enumerate(entries) if t.strip().startswith(_CHAINED)]
    last = entries[chained[-1] + 1:] if chained else entries
    kept: list[str] = []
    packages: list[str] = []
    hidden = 0
    for entry in last:
        first = entry.strip().splitlines()[0]
        if set(first) <= {"-"} or "Traceback (most recent call last)" in first:
            continue
        match = _PACKAGE.search(first) if first.startswith("File ") else None
        if match is not None:
            hidden += 1
            package = match.group(1) or match.group(2)
            if package not in packages:
                packages.append(package)
            continue
        if hidden:
            kept.append(f"[{hidden} frame{'s' if hidden > 1 else ''} inside {', '.join(packages)} not shown]")
            hidden, packages = 0, []
        kept.append(entry.rstrip("\n"))
    head = f"{ename}: {evalue}"
    if not any(k.startswith(head) for k in kept):
        kept.insert(0, head)
    return "\n".join(kept)


def model_error(error: ErrorInfo) -> str:
    """:func:`error_text` of a kernel's error."""
    return error_text(error.ename, error.evalue, error.traceback)
