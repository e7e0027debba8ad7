"""The sidebar's event types (src/model/events.ts) and words (src/model/reasons.ts) match the
server's event models, so neither side can change an event without the other noticing.

The TypeScript is read as text: each event model has an interface of the same name with
the same fields and its ``type`` literal; the frame guard's field table (``FIELDS``) lists
the same fields per type, with a fallback exactly where Python has a default; the
``TURN_STATES`` and ``REASON_CODES`` lists equal the Python unions; and every reason code
and state has its plain words.
"""

from __future__ import annotations

import re
import typing
from pathlib import Path

import pytest
from pydantic.fields import FieldInfo

from jupyter_analyst import events

ROOT = Path(__file__).resolve().parents[2]
EVENTS_TS = (ROOT / "src" / "model" / "events.ts").read_text(encoding="utf-8")
REASONS_TS = (ROOT / "src" / "model" / "reasons.ts").read_text(encoding="utf-8")

#: Every event model of the server, from the ``Event`` union itself.
MODELS: list[type[events._Event]] = list(typing.get_args(typing.get_args(events.Event)[0]))
BASE_FIELDS = set(events._Event.model_fields)


def _without_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _value(text: str, name: str) -> str:
    """The object literal a ``const name: Type = {...}`` holds (its type may have braces too)."""
    start = text.index(f"const {name}")
    return _braced(text, text.index("= {", start))


def _braced(text: str, start: int) -> str:
    """The text between the brace at or after ``start`` and its matching close."""
    open_at = text.index("{", start)
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[open_at + 1 : i]
    raise AssertionError("unbalanced braces")


def _interface(name: str) -> str:
    source = _without_comments(EVENTS_TS)
    match = re.search(rf"export interface {name}\b[^{{]*", source)
    assert match, f"events.ts has no interface {name}"
    return _braced(source, match.start())


def _members(block: str) -> set[str]:
    """The member names at the top level of an interface or object literal."""
    names, depth = set(), 0
    for line in block.splitlines():
        if depth == 0:
            m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)\??\s*:", line)
            if m:
                names.add(m.group(1))
        depth += line.count("{") - line.count("}")
    return names


def _entries(block: str) -> list[tuple[str, str]]:
    """``name: rule`` pairs of an object literal, split at its top-level commas."""
    parts, depth, current = [], 0, ""
    for ch in block:
        depth += {"{": 1, "[": 1, "(": 1, "}": -1, "]": -1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    pairs = []
    for part in parts:
        name, _, rule = part.strip().partition(":")
        if rule:
            pairs.append((name.strip(), rule.strip()))
    return pairs


def _string_list(source: str, const: str) -> list[str]:
    match = re.search(rf"export const {const} = \[(.*?)\] as const", source, flags=re.S)
    assert match, f"events.ts has no {const} list"
    return re.findall(r"'([^']+)'", match.group(1))


def _literals(annotation: object) -> set[str]:
    """The string literals anywhere in a type annotation."""
    if typing.get_origin(annotation) is typing.Literal:
        return {a for a in typing.get_args(annotation) if isinstance(a, str)}
    return set().union(*(_literals(a) for a in typing.get_args(annotation))) if typing.get_args(annotation) else set()


def _fields_table() -> dict[str, str]:
    """The guard's table: event type -> the text of its field rules."""
    source = _without_comments(EVENTS_TS)
    table = _value(source, "FIELDS")
    out: dict[str, str] = {}
    for m in re.finditer(r"^\s{2}([a-z_]+): \{", table, flags=re.M):
        out[m.group(1)] = _braced(table, m.start())
    return out


def _type_literal(model: type[events._Event]) -> str:
    return typing.get_args(model.model_fields["type"].annotation)[0]


def test_every_event_model_is_in_the_union_the_test_reads():
    assert len(MODELS) == len(events._Event.__subclasses__()) == 17


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_each_event_has_an_interface_with_its_type_and_fields(model):
    block = _interface(model.__name__)
    assert re.search(rf"\btype: '{_type_literal(model)}';", block), f"{model.__name__} lacks its type literal"
    own = set(model.model_fields) - BASE_FIELDS
    assert _members(block) == own, f"{model.__name__}: TS fields differ from Python's"


def test_the_common_fields_are_in_the_base_interface():
    assert _members(_interface("EventBase")) == BASE_FIELDS


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_the_frame_guard_checks_each_field_and_defaults_what_python_defaults(model):
    rules = _fields_table()
    assert set(rules) == {_type_literal(m) for m in MODELS}
    block = rules[_type_literal(model)]
    entries = dict(_entries(block))
    own = set(model.model_fields) - BASE_FIELDS - {"type"}
    assert set(entries) == own, f"the guard's fields for {_type_literal(model)} differ from Python's"
    for name in own:
        field: FieldInfo = model.model_fields[name]
        has_default = not field.is_required()
        rule = entries[name]
        falls_back = "fallback" in rule or rule.startswith("optNull")
        assert falls_back == has_default, f"{model.__name__}.{name}: default in Python {has_default}, in the guard {falls_back}"


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_every_literal_value_of_a_field_is_known_to_the_ui(model):
    for name, field in model.model_fields.items():
        for value in _literals(field.annotation):
            assert f"'{value}'" in EVENTS_TS, f"{model.__name__}.{name} may be {value!r}, which events.ts does not know"


def test_states_and_reason_codes_are_the_same_lists():
    assert _string_list(EVENTS_TS, "TURN_STATES") == list(typing.get_args(events.State))
    assert _string_list(EVENTS_TS, "REASON_CODES") == list(typing.get_args(events.ReasonCode))
    assert _string_list(EVENTS_TS, "TURN_END_STATUSES") == list(typing.get_args(events.TurnEndStatus))


def test_every_reason_code_and_state_has_plain_words():
    source = _without_comments(REASONS_TS)
    reasons = _value(source, "REASON_TEXT")
    states = _value(source, "STATE_LABEL")
    worded = dict(re.findall(r"^\s*([a-z_]+):\s*'([^']+)'", reasons, flags=re.M))
    labelled = dict(re.findall(r"^\s*([a-z_]+):\s*'([^']+)'", states, flags=re.M))
    assert set(worded) == set(typing.get_args(events.ReasonCode))
    assert all(len(words.split()) >= 2 for words in worded.values()), "a reason needs words, not a code"
    assert set(labelled) == set(typing.get_args(events.State))


@pytest.mark.parametrize("fixture", sorted((ROOT / "src" / "__tests__" / "fixtures").glob("*-turn.json")),
                         ids=lambda p: p.name)
def test_the_ui_fixtures_are_events_the_server_would_send(fixture):
    """The jest specs render recorded turns: each event must still be one the server sends."""
    import json

    for raw in json.loads(fixture.read_text(encoding="utf-8")):
        read = json.loads(events.parse_event(raw).model_dump_json())
        assert {key: read.get(key) for key in raw} == raw  # fields added since take their defaults
