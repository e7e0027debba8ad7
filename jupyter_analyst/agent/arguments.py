"""Tool-argument normalisation: models send arguments in many shapes; accept them all.

Aliases (``query`` for ``sql``, ``source``/``script`` for ``code``), arguments nested under
``arguments``/``args``/``input``/``parameters``, JSON encoded in a string (even twice) and
code fences are all brought back to the canonical shape, never a crash.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidArguments

_NESTING_KEYS = ("arguments", "args", "input", "parameters", "params", "kwargs")
_ALIASES: dict[str, dict[str, str]] = {
    "run_sql": {"query": "sql", "statement": "sql", "sql_query": "sql", "dataset": "name", "variable": "name",
                "df_name": "name", "dataset_name": "name"},
    "run_python": {"source": "code", "script": "code", "python": "code", "python_code": "code", "program": "code"},
    "describe_table": {"table_name": "table", "name": "table"},
    "list_artifacts": {"kind": "type", "artifact_type": "type"},
}
_ALLOWED: dict[str, set[str]] = {
    "run_sql": {"sql", "name", "expect"},
    "run_python": {"code", "expect"},
    "describe_table": {"table"},
    "list_tables": set(),
    "list_artifacts": {"type", "name"},
}
_TEXT_FIELDS = {"sql", "code", "name", "table", "type"}
_FENCE = re.compile(r"^\s*```[\w+-]*[ \t]*\n?(.*?)\n?```\s*$", re.DOTALL)


def strip_fence(text: str) -> str:
    """Remove a Markdown code fence around ``text``.

    >>> strip_fence("```sql\\nSELECT 1\\n```")
    'SELECT 1'
    """
    match = _FENCE.match(text)
    return match.group(1) if match else text


def _decode(raw: Any, rescues: list[str], depth: int = 0) -> Any:
    """Turn JSON text (possibly JSON-encoded more than once) into a value."""
    if isinstance(raw, bytes | bytearray):
        raw = raw.decode("utf-8", "replace")
    if isinstance(raw, str) and depth < 3:
        text = raw.strip()
        if not text:
            return {}
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            shown = text if len(text) <= 200 else text[:200] + "..."
            raise InvalidArguments(
                f"the arguments are not valid JSON ({exc.msg} at position {exc.pos}): {shown}",
                hint="send the arguments as one JSON object",
            ) from exc
        if depth > 0 or isinstance(value, str):
            rescues.append("json_in_string")
        return _decode(value, rescues, depth + 1) if isinstance(value, str) else value
    return raw


def normalize_arguments_verbose(tool: str, raw: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """Normalised arguments and the list of rescues that were needed.

    >>> normalize_arguments_verbose("run_python", '{"arguments": "{\\\\"script\\\\": \\\\"print(1)\\\\"}"}')
    ({'code': 'print(1)'}, ['json_in_string', 'nested:arguments', 'alias:script'])
    """
    rescues: list[str] = []
    value = {} if raw is None else _decode(raw, rescues)
    if not isinstance(value, Mapping):
        raise InvalidArguments(
            f"the arguments must be a JSON object, not {type(value).__name__}",
            hint="send the arguments as one JSON object",
        )
    args = dict(value)
    for _ in range(3):  # unwrap {"arguments": {...}} and friends, even when nested twice
        nested = [k for k in _NESTING_KEYS if k in args]
        allowed = _ALLOWED.get(tool, set())
        if len(nested) != 1 or (set(args) - {nested[0]}) & allowed:
            break
        inner = _decode(args[nested[0]], rescues, 1) if isinstance(args[nested[0]], str) else args[nested[0]]
        if not isinstance(inner, Mapping):
            break
        rescues.append(f"nested:{nested[0]}")
        args = {**{k: v for k, v in args.items() if k != nested[0]}, **inner}
    for alias, canonical in _ALIASES.get(tool, {}).items():
        if alias in args and canonical not in args:
            args[canonical] = args.pop(alias)
            rescues.append(f"alias:{alias}")
    allowed = _ALLOWED.get(tool)
    if allowed is not None:
        args = {k: v for k, v in args.items() if k in allowed}
    for key in _TEXT_FIELDS & set(args):
        value = args[key]
        if value is None:
            args[key] = ""
            continue
        if not isinstance(value, str):
            raise InvalidArguments(
                f"'{key}' must be a string, not {type(value).__name__}",
                hint=f"send '{key}' as one JSON string",
            )
        cleaned = strip_fence(value).strip() if key in ("sql", "code") else value.strip()
        if key in ("sql", "code") and cleaned != value.strip():
            rescues.append("code_fence")
        args[key] = cleaned
    if "expect" in args and not isinstance(args["expect"], Mapping):
        args.pop("expect")
        rescues.append("dropped_expect")
    return args, rescues


def normalize_arguments(tool: str, raw: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Normalised arguments of a tool call.

    >>> normalize_arguments("run_sql", {"query": "```sql\\nSELECT 1\\n```", "name": "x"})
    {'name': 'x', 'sql': 'SELECT 1'}

    Raises:
        InvalidArguments: when the arguments cannot be understood.
    """
    return normalize_arguments_verbose(tool, raw)[0]
