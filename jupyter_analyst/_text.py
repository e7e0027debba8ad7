"""Text that can be stored and sent: valid Unicode, JSON-safe values, masked secrets, near names,
long text cut to its head and tail, counts said as the model reads them.

A Python string may hold lone surrogates (U+D800..U+DFFF): JSON decoders produce them from
escapes such as ``"\\ud800"``, and the model's replies are decoded JSON. UTF-8 cannot encode
them, so SQLite, pydantic's JSON and every HTTP client fail on them far from where they came
in. They are dealt with once, where the model's words enter the engine:

* display text (the model's prose, tool names, call ids, the user's prompt) is made valid
  with :func:`valid_text`, lone surrogates becoming U+FFFD as a UTF-8 decoder would do;
* tool arguments are refused instead (see ``agent/tools/arguments.py``): silently changing a
  character of code or SQL would run something the model did not write.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import difflib
import json
import re
from collections.abc import Iterable, Mapping
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


def json_safe(value: Any) -> Any:
    """A value JSON can carry, nested or not: dates as ISO text, decimals as floats, NaN and
    infinities as text, bytes as a note of their size, anything else as its text.

    >>> json_safe({"d": _dt.date(2025, 1, 2), "p": decimal.Decimal("1.50"), "n": float("nan"), "b": b"ab"})
    {'d': '2025-01-02', 'p': 1.5, 'n': 'nan', 'b': '<2 bytes>'}
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else str(value)
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes>"
    return str(value)


def model_json(value: Any) -> str:
    """``value`` as JSON for a message the model reads: its characters themselves, not
    ``\\u2192`` escapes (which a model reads as odd text, at more tokens), and always valid
    UTF-8 (a lone surrogate becomes U+FFFD, as :func:`valid_text` makes it).

    >>> model_json({"does": "query \u2192 rev", "note": "a\\ud800b"}) == '{"does": "query → rev", "note": "a\\ufffdb"}'
    True
    """
    return valid_text(json.dumps(value, ensure_ascii=False, default=str))


#: The names a URL's options give a secret under: a Spark Connect ``;token=``, a warehouse
#: driver's ``?password=``, ``&private_key_passphrase=``, ``&access_token=``...
_SECRET_OPTION = re.compile(
    r"([;?&]\s*(?:token|access_token|password|passwd|pwd|secret|client_secret|api_key|apikey"
    r"|private_key_passphrase|credentials_base64|credentials)\s*=)[^;&#]*",
    re.IGNORECASE,
)


def masked(spec: str) -> str:
    """A spec with its secrets hidden (for anything people read or share, and anything a
    sandboxed kernel is given): a URL's password, and an option that carries one.

    >>> masked("postgresql://ann:s3cret@db:5432/sales")
    'postgresql://ann:***@db:5432/sales'
    >>> masked("sc://localhost:15002/;token=s3cret;use_ssl=true")
    'sc://localhost:15002/;token=***;use_ssl=true'
    >>> masked("trino://ann@host:443/hive?password=s3cret&source=x")
    'trino://ann@host:443/hive?password=***&source=x'
    >>> masked("snowflake://ann@acct/db?private_key_passphrase=s3cret")
    'snowflake://ann@acct/db?private_key_passphrase=***'
    >>> masked("/data/sales.duckdb")
    '/data/sales.duckdb'
    """
    spec = _SECRET_OPTION.sub(r"\1***", spec)
    return re.sub(r"(://[^/@:]*:)[^@/]*@", r"\1***@", spec)


def nearest(name: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """The real names closest to ``name``.

    >>> nearest("revnue", ["revenue", "region", "month"])
    ['revenue', 'region']
    """
    pool = list(dict.fromkeys(candidates))
    lowered = {c.lower(): c for c in pool}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.5)
    return [lowered[h] for h in hits]


def head_and_tail(text: str, cap: int, *, how: str = "") -> str:
    """``text`` within ``cap`` characters: its head and its tail, the middle elided with its
    size and ``how`` to see it; cut at line ends where there are some, else between words (a
    cut word reads as another one: "S" and "pute it" say nothing).

    >>> print(head_and_tail("models/events.yml:41): Sessions end after 30 idle minutes; compute it", 40))
    models/events.yml:41): [... 36 characters not shown ...]
    compute it

    >>> head_and_tail("abcdef", 10)
    'abcdef'

    Text barely over ``cap`` stays whole: a marker longer than what it hides saves nothing.

    >>> head_and_tail("x" * 60, 50) == "x" * 60
    True
    >>> print(head_and_tail("\\n".join(str(i) for i in range(100)), 40))
    0
    1
    2
    3
    4
    5
    6
    7
    8
    9
    10
    [... 252 characters (lines 12-95) not shown ...]
    95
    96
    97
    98
    99
    """
    if len(text) <= cap:
        return text
    head_room = cap * 3 // 5
    tail_room = cap - head_room
    head = text[:head_room]
    if "\n" in head:
        head = head[: head.rindex("\n") + 1]
    elif not text[head_room].isspace() and (space := _last_space(head)) > len(head) // 2:
        head = head[:space + 1]
    tail = text[len(text) - tail_room:]
    if "\n" in tail[:-1]:
        tail = tail[tail.index("\n") + 1:]
    elif not text[len(text) - tail_room - 1].isspace() and 0 <= (space := _first_space(tail)) < len(tail) // 2:
        tail = tail[space + 1:]
    hidden = text[len(head): len(text) - len(tail)]
    first = text.count("\n", 0, len(head)) + 1
    last = first + hidden.count("\n") - (0 if hidden.endswith("\n") else -1) - 1
    lines = f" (lines {first}-{last})" if "\n" in hidden else ""
    more = f"; {how}" if how else ""
    marker = f"[... {len(hidden):,} characters{lines} not shown{more} ...]\n"
    if len(marker) >= len(hidden):  # the marker would cost more than what it hides
        return text
    return f"{head}{marker}{tail}"


def _last_space(text: str) -> int:
    """Where the last whitespace of ``text`` is (-1: none)."""
    return max(text.rfind(" "), text.rfind("\t"))


def _first_space(text: str) -> int:
    """Where the first whitespace of ``text`` is (-1: none)."""
    found = [at for at in (text.find(" "), text.find("\t")) if at >= 0]
    return min(found) if found else -1


def row_count(rows: int, estimated: bool = False) -> str:
    """A table's row count as people read it: grouped, and an engine's estimate said to be one.

    >>> row_count(12_000_000, estimated=True), row_count(2400), row_count(1)
    ('about 12,000,000 rows (estimate)', '2,400 rows', '1 row')
    """
    counted = how_many(rows, "row")
    return f"about {counted} (estimate)" if estimated else counted


def how_many(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` of ``noun``, as every surface tells the model a count: thousands grouped,
    the noun singular for one.

    >>> how_many(1, "row"), how_many(2400, "row"), how_many(0, "thread"), how_many(3, "match", "matches")
    ('1 row', '2,400 rows', '0 threads', '3 matches')
    """
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
