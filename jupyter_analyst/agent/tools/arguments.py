"""Tool-argument normalisation: models send arguments in many shapes; accept them all.

Aliases (``query`` for ``sql``, ``source``/``script``/``python`` for ``code``: each tool's
spec names its own, see contract.py), arguments
nested under ``arguments``/``args``/``input``/``parameters``, JSON encoded in a string (even
twice), a Python dict literal and code fences are all brought back to the canonical shape of
the tool contract. What cannot be understood raises :class:`InvalidArguments`, a signal the
loop turns into a guided retry, never a crash.

Every rescue is named (``alias:query``, ``nested:arguments``, ``json_in_string``...) so the
loop can count how often a model needed one.

Nothing the model sends makes this module raise anything else: arguments that are too
large, nested too deeply, hold numbers too long to read or lone surrogates (which UTF-8
cannot encode, so they could be neither stored nor sent back) are refused with their own
reason code. The work is linear in the size of the text: no pattern here backtracks.
"""

from __future__ import annotations

import ast
import json
import re
import reprlib
from collections.abc import Mapping
from typing import Any

from ..._text import find_lone_surrogate, valid_text
from ...errors import InvalidArguments
from ..spec import spec_of

#: The longest argument text accepted (characters); SQL has its own, smaller limit.
MAX_ARGUMENT_CHARS = 1_000_000
#: The deepest nesting of objects and lists accepted; real arguments need three levels.
MAX_ARGUMENT_DEPTH = 32

_NESTING_KEYS = ("arguments", "args", "input", "parameters", "params", "kwargs")
_TEXT_FIELDS = ("sql", "code", "name", "table", "type", "query", "kind", "question")
_CODE_FIELDS = ("sql", "code")
_EXPECT_LISTS = ("columns", "artifact_ids")
#: The longest value of the short fields: names, kinds, a search, a question.
_FIELD_CAPS = {"name": 256, "table": 256, "type": 64, "kind": 64, "query": 1_000, "question": 4_000}
_CANDIDATES_CAP = 20
_CELL_IDS_CAP = 20
_EXPECT_ITEMS = 200
_SHOWN = 200
# A fence's language tag: only a whole first line of these counts (followed by a newline).
_FENCE_TAG = re.compile(r"[\w+.-]*[ \t]*")
_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother, _REPR.maxlevel = _SHOWN, _SHOWN, 3


def strip_fence(text: str) -> str:
    """Remove a Markdown code fence around ``text`` (with or without a language tag).

    The language tag only counts when a newline follows it, so "```SELECT 1```" keeps SELECT.

    >>> strip_fence("```sql\\nSELECT 1\\n```")
    'SELECT 1'
    >>> strip_fence("```SELECT 1```")
    'SELECT 1'
    >>> strip_fence("print('no fence')")
    "print('no fence')"
    """
    # Plain string operations: a regular expression for this backtracks quadratically
    # on long runs of blanks, and the text comes from the model.
    inner = text.strip()
    if len(inner) < 6 or not (inner.startswith("```") and inner.endswith("```")):
        return text
    inner = inner[3:-3]
    first, newline, rest = inner.partition("\n")
    if newline and _FENCE_TAG.fullmatch(first):
        inner = rest
    # The closing fence may sit on its own (indented) line.
    body = inner.rstrip(" \t")
    return body[:-1] if body.endswith("\n") else body


def _shown(text: str) -> str:
    """``text`` cut to a readable length for an error message (and valid Unicode)."""
    text = valid_text(text)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(text)} characters)"


def _shown_value(value: Any) -> str:
    """A short representation of any value, however large or deeply nested."""
    return _shown(_REPR.repr(value))


_HINT = "send the arguments as one JSON object, as the tool's schema describes"


def _invalid(message: str, *, reason: str = "invalid_arguments", hint: str = _HINT, **context: Any) -> InvalidArguments:
    return InvalidArguments(message, reason=reason, hint=hint, **context)


def _too_deep() -> InvalidArguments:
    return _invalid(
        f"the arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep",
        reason="arguments_too_deep", hint="send a flat JSON object: the tool's fields hold strings",
    )


def _loads(text: str) -> Any:
    """``json.loads``; its ways of failing on hostile input become refusals.

    Raises:
        json.JSONDecodeError: the text is not JSON (callers may try a rescue).
        InvalidArguments: nested too deeply for the decoder, or a number too long to read.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise _too_deep() from None
    except (ValueError, MemoryError) as exc:  # e.g. an integer of more than 4,300 digits
        raise _invalid(f"the arguments could not be read: {_shown(str(exc))}") from None


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether objects and lists nest deeper than ``limit`` (walked without recursion).

    >>> nested_deeper_than({"a": [1]}, 2), nested_deeper_than({"a": [[1]]}, 2)
    (False, True)
    """
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping | list | tuple):
            if depth >= limit:
                return True
            inner = item.values() if isinstance(item, Mapping) else item
            stack.extend((v, depth + 1) for v in inner)
    return False


def _parse_text(text: str, rescues: list[str]) -> Any:
    """One JSON value from ``text``, or a Python literal as a rescue; raises when neither."""
    try:
        return _loads(text)
    except json.JSONDecodeError as exc:
        error = exc
    try:
        # Some models write a Python dict ({'sql': '...'}) instead of JSON. Only a rescue:
        # whatever stops it (too deep, too long, not a literal) leaves the JSON error.
        value = ast.literal_eval(text)
    except Exception:  # noqa: BLE001
        value = None
    if isinstance(value, dict):
        rescues.append("python_literal")
        return value
    raise _invalid(f"the arguments are not valid JSON ({error.msg} at position {error.pos}); received: {_shown(text)}")


def _decode(raw: Any, rescues: list[str]) -> Any:
    """Turn argument text into a value, unwrapping JSON that was encoded in a string again."""
    if isinstance(raw, bytes | bytearray):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str):
        return raw
    value: Any = raw
    for depth in range(4):
        text = value.strip()
        if not text:
            return {}
        if depth > 0:
            try:
                inner = _loads(text)
            except (json.JSONDecodeError, InvalidArguments):
                return value  # a JSON string that holds no readable JSON: a bare payload
            if not isinstance(inner, str | dict | list):
                return value  # "42" or "true" in a string: still a bare payload, not arguments
            rescues.append("json_in_string")
            value = inner
        else:
            value = _parse_text(text, rescues)
        if not isinstance(value, str):
            return value
    return value


def _unwrap(args: dict[str, Any], rescues: list[str]) -> dict[str, Any]:
    """Lift arguments out of ``{"arguments": {...}}`` and friends, even when nested twice."""
    for _ in range(3):
        nested = [key for key in _NESTING_KEYS if key in args]
        if len(nested) != 1:
            return args
        key = nested[0]
        inner = args[key]
        if isinstance(inner, str):
            try:
                inner = _decode(inner, rescues)
            except InvalidArguments:
                return args
            if nested_deeper_than(inner, MAX_ARGUMENT_DEPTH):
                raise _too_deep()
        if not isinstance(inner, Mapping):
            return args
        rescues.append(f"nested:{key}")
        # Keys beside the wrapper are kept; the wrapped ones win a tie.
        args = {**{k: v for k, v in args.items() if k != key}, **inner}
    return args


def _clean_expect(value: Any, rescues: list[str]) -> dict[str, Any] | None:
    """The ``expect`` object with known keys only, checked for types."""
    if value is None:
        return None
    if isinstance(value, str):
        if value.strip():
            rescues.append("json_in_string")
        value = _decode(value, rescues) if value.strip() else None
        if value is None or value == {}:
            return None
    if not isinstance(value, Mapping):
        raise _invalid(f"'expect' must be an object, not {type(value).__name__}")
    expect: dict[str, Any] = {}
    for key in ("rows", "count"):
        number = value.get(key)
        if number is None:
            continue
        if isinstance(number, str) and number.strip().isdecimal() and len(number.strip()) <= 18:
            # isdecimal, not isdigit: "²" is a digit that int() does not read.
            number = int(number.strip())
            rescues.append(f"expect_{key}_text")
        if isinstance(number, bool) or not isinstance(number, int):
            raise _invalid(f"'expect.{key}' must be an integer, not {type(number).__name__}")
        expect[key] = number
    for key in _EXPECT_LISTS:
        items = value.get(key)
        if items is None:
            continue
        if isinstance(items, str):
            items = [items]
            rescues.append(f"expect_{key}_single")
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise _invalid(f"'expect.{key}' must be a list of strings")
        if len(items) > _EXPECT_ITEMS or any(len(item) > _FIELD_CAPS["name"] for item in items):
            raise _invalid(
                f"'expect.{key}' may hold at most {_EXPECT_ITEMS} names of at most {_FIELD_CAPS['name']} characters",
                reason="argument_too_long", hint="expect fewer, shorter names",
            )
        expect[key] = items
    kind = value.get("artifact_type")
    if kind is not None:
        if not isinstance(kind, str):
            raise _invalid(f"'expect.artifact_type' must be a string, not {type(kind).__name__}")
        expect["artifact_type"] = kind.strip()
    return expect


def normalize_arguments_verbose(
    tool: str, raw: str | Mapping[str, Any] | None, *, max_chars: int = MAX_ARGUMENT_CHARS
) -> tuple[dict[str, Any], list[str]]:
    """Normalised arguments of a ``tool`` call, and the names of the rescues that were needed.

    >>> normalize_arguments_verbose("run_python", '{"arguments": "{\\\\"script\\\\": \\\\"print(1)\\\\"}"}')
    ({'code': 'print(1)'}, ['nested:arguments', 'alias:script'])
    >>> normalize_arguments_verbose("run_sql", {"query": "SELECT 1", "name": "x", "note": "?"})
    ({'name': 'x', 'sql': 'SELECT 1'}, ['alias:query', 'dropped:note'])

    Raises:
        InvalidArguments: the arguments cannot be understood (not JSON, not an object,
            a field of the wrong type): reason ``invalid_arguments``; or they are longer than
            ``max_chars`` (``arguments_too_large``), nested too deeply (``arguments_too_deep``),
            hold a lone surrogate (``invalid_unicode``), or a short field is too long
            (``argument_too_long``).
    """
    if isinstance(raw, str | bytes | bytearray) and len(raw) > max_chars:
        raise _invalid(
            f"the arguments are {len(raw):,} characters long; at most {max_chars:,} are accepted",
            reason="arguments_too_large", hint="send less: aggregate in SQL, or split the work into steps",
        )
    rescues: list[str] = []
    spec = spec_of(tool)
    value = {} if raw is None else _decode(raw, rescues)
    if isinstance(value, str) and spec is not None and spec.payload is not None:
        # The one argument a bare JSON string stands for, e.g. ``"SELECT 1"`` sent as the whole arguments.
        value = {spec.payload: value}
        rescues.append("bare_string")
    if not isinstance(value, Mapping):
        shown = _shown(raw) if isinstance(raw, str) else _shown_value(raw)
        raise _invalid(f"the arguments must be a JSON object, not {type(value).__name__}; received: {shown}")
    if nested_deeper_than(value, MAX_ARGUMENT_DEPTH):
        raise _too_deep()
    args = _unwrap(dict(value), rescues)
    for alias, canonical in (spec.aliases if spec is not None else {}).items():
        if alias in args and canonical not in args:
            args[canonical] = args.pop(alias)
            rescues.append(f"alias:{alias}")
    if spec is not None:
        for key in [k for k in args if k not in spec.allowed]:
            del args[key]
            rescues.append(f"dropped:{valid_text(str(key))}")
    for key in _TEXT_FIELDS:
        if key not in args:
            continue
        text = args[key]
        if text is None:
            args[key] = ""
            continue
        if not isinstance(text, str):
            raise _invalid(f"'{key}' must be a string, not {type(text).__name__}: {_shown_value(text)}")
        cleaned = text.strip()
        if key in _CODE_FIELDS:
            unfenced = strip_fence(cleaned).strip()
            if unfenced != cleaned:
                rescues.append("code_fence")
            cleaned = unfenced
        cap = _FIELD_CAPS.get(key)
        if cap is not None and len(cleaned) > cap:
            raise _invalid(
                f"'{key}' is {len(cleaned):,} characters long; at most {cap:,} are accepted: {_shown(cleaned)}",
                reason="argument_too_long", hint=f"send a shorter '{key}'",
            )
        args[key] = cleaned
    if "expect" in args:
        expect = _clean_expect(args.pop("expect"), rescues)
        if expect:
            args["expect"] = expect
    if "candidates" in args:
        args["candidates"] = _string_list(args["candidates"], "candidates", _CANDIDATES_CAP, _FIELD_CAPS["question"],
                                          rescues, what="interpretations")
    if "cell_ids" in args:
        args["cell_ids"] = _string_list(args["cell_ids"], "cell_ids", _CELL_IDS_CAP, 64, rescues, what="cell ids")
    _refuse_lone_surrogates(args)
    return args, rescues


def _refuse_lone_surrogates(args: dict[str, Any]) -> None:
    """Refuse arguments UTF-8 cannot encode, rather than run code or SQL other than was sent."""
    where = find_lone_surrogate(args)
    if where is not None:
        raise _invalid(
            f"'{where}' holds a lone surrogate (a code point between U+D800 and U+DFFF), which is not "
            "valid Unicode and cannot be stored or run",
            reason="invalid_unicode",
            hint="send valid UTF-8 text; inside a string literal write such a character as an escape "
                 "(e.g. '\\ud800'), or leave it out",
        )


def _string_list(value: Any, key: str, cap: int, item_cap: int, rescues: list[str], *, what: str) -> list[str]:
    """A field holding a list of strings (a clarifying question's interpretations, the ids of
    cells to read): one string is taken as a list of one; blanks are dropped.

    >>> _string_list("a1", "cell_ids", 20, 64, [], what="cell ids")
    ['a1']
    """
    if value is None:
        return []
    if isinstance(value, str):
        rescues.append(f"{key}_single")
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _invalid(f"'{key}' must be a list of strings")
    cleaned = [v.strip() for v in value if v.strip()]
    if len(cleaned) > cap or any(len(v) > item_cap for v in cleaned):
        raise _invalid(
            f"'{key}' may hold at most {cap} {what} of at most {item_cap:,} characters each",
            reason="argument_too_long", hint=f"send fewer, shorter {what}",
        )
    return cleaned


def normalize_arguments(tool: str, raw: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Normalised arguments of a ``tool`` call (see :func:`normalize_arguments_verbose`).

    >>> normalize_arguments("run_sql", {"query": "```sql\\nSELECT 1\\n```", "name": "x"})
    {'name': 'x', 'sql': 'SELECT 1'}
    >>> normalize_arguments("run_python", "")
    {}

    Raises:
        InvalidArguments: the arguments cannot be understood.
    """
    return normalize_arguments_verbose(tool, raw)[0]
