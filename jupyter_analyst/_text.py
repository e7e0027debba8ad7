"""Text that can be stored and sent: valid Unicode only.

A Python string may hold lone surrogates (U+D800..U+DFFF): JSON decoders produce them from
escapes such as ``"\\ud800"``, and the model's replies are decoded JSON. UTF-8 cannot encode
them, so SQLite, pydantic's JSON and every HTTP client fail on them far from where they came
in. They are dealt with once, where the model's words enter the engine:

* display text (the model's prose, tool names, call ids, the user's prompt) is made valid
  with :func:`valid_text`, lone surrogates becoming U+FFFD as a UTF-8 decoder would do;
* tool arguments are refused instead (see ``agent/arguments.py``): silently changing a
  character of code or SQL would run something the model did not write.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> int | None:
    """The index of the first surrogate code point in ``text``, if any.

    >>> lone_surrogate("ok"), lone_surrogate("a\\ud800b")
    (None, 1)
    """
    match = _SURROGATE.search(text)
    return match.start() if match else None


def valid_text(text: str) -> str:
    """``text`` as valid Unicode: a surrogate pair becomes its character, a lone one U+FFFD.

    >>> valid_text("a\\ud800b") == "a\\ufffdb"
    True
    >>> valid_text("\\ud83d\\ude00") == "\\U0001F600"
    True
    >>> valid_text("plain")
    'plain'
    """
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def find_lone_surrogate(value: Any, *, max_depth: int = 64) -> str | None:
    """Where in a JSON-like value a string (or a key) holds a surrogate, as ``path`` text.

    Walks without recursion, so a deeply nested value cannot overflow the stack; past
    ``max_depth`` levels nothing more is looked at.

    >>> find_lone_surrogate({"sql": "SELECT 1", "expect": {"columns": ["ok", "b\\udc80d"]}})
    'expect.columns[1]'
    >>> find_lone_surrogate(["fine"]) is None
    True
    """
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return path or "the value"
        elif depth < max_depth and isinstance(item, Mapping):
            for key, inner in reversed(list(item.items())):
                where = f"{path}.{key}" if path else str(key)
                if isinstance(key, str) and _SURROGATE.search(key):
                    return f"a key of {path or 'the arguments'}"
                stack.append((inner, where, depth + 1))
        elif depth < max_depth and isinstance(item, list | tuple):
            for index in reversed(range(len(item))):
                stack.append((item[index], f"{path}[{index}]", depth + 1))
    return None
