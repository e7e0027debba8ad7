"""Tool-argument normalisation: models send arguments in many shapes; accept them all.

Aliases (``query`` for ``sql``, ``source``/``script``/``python`` for ``code``), arguments
nested under ``arguments``/``args``/``input``/``parameters``, JSON encoded in a string (even
twice), a Python dict literal and code fences are all brought back to the canonical shape of
the tool contract. What cannot be understood raises :class:`InvalidArguments`, a signal the
loop turns into a guided retry, never a crash.

Every rescue is named (``alias:query``, ``nested:arguments``, ``json_in_string``...) so the
loop can count how often a model needed one.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidArguments

_NESTING_KEYS = ("arguments", "args", "input", "parameters", "params", "kwargs")
_ALIASES: dict[str, dict[str, str]] = {
    "run_sql": {"query": "sql", "statement": "sql", "sql_query": "sql",
                "dataset": "name", "dataset_name": "name", "variable": "name", "df_name": "name"},
    "run_python": {"source": "code", "script": "code", "python": "code", "python_code": "code", "program": "code"},
    "describe_table": {"table_name": "table", "name": "table"},
    "list_artifacts": {"kind": "type", "artifact_type": "type"},
    "find": {"q": "query", "name": "query", "text": "query", "search": "query", "type": "kind"},
    "clarify": {"options": "candidates", "choices": "candidates", "interpretations": "candidates"},
}
_ALLOWED: dict[str, frozenset[str]] = {
    "run_sql": frozenset({"sql", "name", "expect"}),
    "run_python": frozenset({"code", "expect"}),
    "describe_table": frozenset({"table"}),
    "list_tables": frozenset(),
    "list_artifacts": frozenset({"type", "name"}),
    "find": frozenset({"query", "kind"}),
    "clarify": frozenset({"question", "candidates"}),
}
# The one argument a bare JSON string stands for, e.g. ``"SELECT 1"`` sent as the whole arguments.
_PAYLOAD = {"run_sql": "sql", "run_python": "code", "describe_table": "table", "find": "query", "clarify": "question"}
_TEXT_FIELDS = ("sql", "code", "name", "table", "type", "query", "kind", "question")
_CODE_FIELDS = ("sql", "code")
_EXPECT_LISTS = ("columns", "artifact_ids")
_SHOWN = 200
# The language tag only counts when a newline follows it, so "```SELECT 1```" keeps SELECT.
_FENCE = re.compile(r"^\s*```(?:[\w+.-]*[ \t]*\n)?(.*?)\n?[ \t]*```\s*$", re.DOTALL)


def strip_fence(text: str) -> str:
    """Remove a Markdown code fence around ``text`` (with or without a language tag).

    >>> strip_fence("```sql\\nSELECT 1\\n```")
    'SELECT 1'
    >>> strip_fence("```SELECT 1```")
    'SELECT 1'
    >>> strip_fence("print('no fence')")
    "print('no fence')"
    """
    match = _FENCE.match(text)
    return match.group(1) if match else text


def _shown(text: str) -> str:
    """``text`` cut to a readable length for an error message."""
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(text)} characters)"


def _invalid(message: str, **context: Any) -> InvalidArguments:
    return InvalidArguments(message, reason="invalid_arguments",
                            hint="send the arguments as one JSON object, as the tool's schema describes", **context)


def _parse_text(text: str, rescues: list[str]) -> Any:
    """One JSON value from ``text``, or a Python literal as a rescue; raises when neither."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        error = exc
    try:
        # Some models write a Python dict ({'sql': '...'}) instead of JSON.
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
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
                inner = json.loads(text)
            except json.JSONDecodeError:
                return value  # a JSON string that holds no JSON: a bare payload
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
        if isinstance(number, str) and number.strip().isdigit():
            number = int(number)
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
        expect[key] = items
    kind = value.get("artifact_type")
    if kind is not None:
        if not isinstance(kind, str):
            raise _invalid(f"'expect.artifact_type' must be a string, not {type(kind).__name__}")
        expect["artifact_type"] = kind.strip()
    return expect


def normalize_arguments_verbose(tool: str, raw: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """Normalised arguments of a ``tool`` call, and the names of the rescues that were needed.

    >>> normalize_arguments_verbose("run_python", '{"arguments": "{\\\\"script\\\\": \\\\"print(1)\\\\"}"}')
    ({'code': 'print(1)'}, ['nested:arguments', 'alias:script'])
    >>> normalize_arguments_verbose("run_sql", {"query": "SELECT 1", "name": "x", "note": "?"})
    ({'name': 'x', 'sql': 'SELECT 1'}, ['alias:query', 'dropped:note'])

    Raises:
        InvalidArguments: the arguments cannot be understood (not JSON, not an object,
            a field of the wrong type).
    """
    rescues: list[str] = []
    value = {} if raw is None else _decode(raw, rescues)
    if isinstance(value, str) and tool in _PAYLOAD:
        value = {_PAYLOAD[tool]: value}
        rescues.append("bare_string")
    if not isinstance(value, Mapping):
        shown = _shown(raw if isinstance(raw, str) else repr(raw))
        raise _invalid(f"the arguments must be a JSON object, not {type(value).__name__}; received: {shown}")
    args = _unwrap(dict(value), rescues)
    for alias, canonical in _ALIASES.get(tool, {}).items():
        if alias in args and canonical not in args:
            args[canonical] = args.pop(alias)
            rescues.append(f"alias:{alias}")
    allowed = _ALLOWED.get(tool)
    if allowed is not None:
        for key in [k for k in args if k not in allowed]:
            del args[key]
            rescues.append(f"dropped:{key}")
    for key in _TEXT_FIELDS:
        if key not in args:
            continue
        text = args[key]
        if text is None:
            args[key] = ""
            continue
        if not isinstance(text, str):
            raise _invalid(f"'{key}' must be a string, not {type(text).__name__}: {_shown(repr(text))}")
        cleaned = text.strip()
        if key in _CODE_FIELDS:
            unfenced = strip_fence(cleaned).strip()
            if unfenced != cleaned:
                rescues.append("code_fence")
            cleaned = unfenced
        args[key] = cleaned
    if "expect" in args:
        expect = _clean_expect(args.pop("expect"), rescues)
        if expect:
            args["expect"] = expect
    if "candidates" in args:
        args["candidates"] = _clean_candidates(args["candidates"], rescues)
    return args, rescues


def _clean_candidates(value: Any, rescues: list[str]) -> list[str]:
    """The interpretations a clarifying question offers, as a list of strings."""
    if value is None:
        return []
    if isinstance(value, str):
        rescues.append("candidates_single")
        return [value.strip()] if value.strip() else []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _invalid("'candidates' must be a list of strings")
    return [v.strip() for v in value if v.strip()]


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
