"""The deterministic expectation matcher.

A tool call may say what it expects (``expect``: artifact ids, an artifact type, a count,
columns). After the step, the expectation is checked against the structured result, never
against text, one rule at a time in a fixed order: **ids, then type, then count, then
columns**. The first rule that fails decides; a rule with nothing to compare is passed
over; when no rule could be compared (an error, a step that made nothing structured) the
expectation is *skipped*, not confirmed. The verdict is a fact about its step: it is told
with that step's result (and kept in the agent state's expectations), visible as long as the
step's result is; it never becomes an assumption of the thread, which would outlive the step
and name a call the model no longer sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...agent_state import (
    Addition,
    Expectation,
    ExpectationStatus,
    StateDelta,
)
from ...artifacts import Artifact
from ..spec import Observed, spec_of


@dataclass(frozen=True)
class Verdict:
    status: ExpectationStatus
    rule: str | None
    detail: str


def observe(tool: str, status: str, result: dict[str, Any], artifacts: Sequence[Artifact]) -> Observed:
    """What a step produced, as the matcher compares it (its tool's ``observed``)."""
    spec = spec_of(tool)
    if status != "ok" or spec is None or spec.observed is None:
        return Observed()
    return spec.observed(result, artifacts)


def match(expect: dict[str, Any], seen: Observed) -> Verdict:
    """Check one ``expect`` object against what a step produced.

    >>> seen = Observed(("art_1",), ("dataset",), 4, ("region", "revenue"))
    >>> match({"artifact_ids": ["art_9"], "rows": 4}, seen).rule
    'ids'
    >>> match({"artifact_type": "image"}, seen).detail
    'expected an image artifact, got: dataset'
    >>> match({"rows": 5}, seen).detail
    'expected 5 rows, got 4'
    >>> match({"rows": 4, "columns": ["Region"]}, seen).status
    'confirmed'
    >>> match({"rows": 4}, Observed()).status
    'skipped'

    A Python step that made no figure or file counts none: a chart expected and not drawn fails.

    >>> match({"artifact_type": "image"}, Observed((), (), 0, None)).detail
    'expected an image artifact, got: none (the step made no figure or file)'
    >>> match({"count": 0}, Observed((), (), 0, None)).detail
    '0 artifacts, as expected'

    A confirmation says what held, under the field's own name (``rows`` for a query's
    result, ``count`` for a Python step's figures and files):

    >>> match({"rows": 4, "columns": ["region"]}, seen).detail
    '4 rows, as expected; columns region present'
    >>> match({"rows": 4}, seen).rule
    'rows'

    Every rule that held is named, and a count of one is said in the singular:

    >>> v = match({"artifact_type": "image", "count": 1}, Observed(("art_2",), ("image",), 1, None))
    >>> v.rule, v.detail
    ('type and count', '1 image artifact, as expected')
    """
    if not seen.structured:
        return Verdict("skipped", None, "the step produced nothing structured to check")
    compared: list[str] = []
    held: list[str] = []
    expected_ids = expect.get("artifact_ids")
    if expected_ids and seen.artifact_ids:
        compared.append("ids")
        held.append(f"artifact ids {', '.join(map(str, expected_ids))} made or reused")
        missing = [i for i in expected_ids if i not in seen.artifact_ids]
        if missing:
            return Verdict("failed", "ids", f"expected artifact ids {missing} were not produced or reused; got {list(seen.artifact_ids)}")
    expected_type = expect.get("artifact_type")
    typed = ""
    if expected_type and (seen.artifact_types or seen.count == 0 and seen.columns is None):
        compared.append("type")
        article = "an" if expected_type[0] in "aeiou" else "a"
        if expected_type not in seen.artifact_types:
            got = ", ".join(seen.artifact_types) or "none (the step made no figure or file)"
            return Verdict("failed", "type", f"expected {article} {expected_type} artifact, got: {got}")
        held.append(f"{article} {expected_type} artifact, as expected")
        typed = expected_type
    expected_count = expect.get("rows") if expect.get("rows") is not None else expect.get("count")
    if expected_count is not None and seen.count is not None:
        # A query's result is counted in rows, a Python step's in figures and files.
        rule, unit = ("rows", "rows") if seen.columns is not None else ("count", "artifacts")
        compared.append(rule)
        if expected_count != seen.count:
            return Verdict("failed", rule, f"expected {expected_count} {unit}, got {seen.count}")
        if unit == "artifacts" and typed:  # one clause for both: "1 image artifact, as expected"
            held.pop()
            unit = f"{typed} {unit}"
        held.append(f"{seen.count} {unit[:-1] if seen.count == 1 else unit}, as expected")
    expected_columns = expect.get("columns")
    if expected_columns and seen.columns is not None:
        compared.append("columns")
        have = {c.lower() for c in seen.columns}
        missing = [c for c in expected_columns if c.lower() not in have]
        if missing:
            return Verdict("failed", "columns", f"expected columns {missing} are missing; got {list(seen.columns)}")
        held.append(f"columns {', '.join(map(str, expected_columns))} present")
    if not compared:
        return Verdict("skipped", None, "nothing the expectation names can be compared with this result")
    return Verdict("confirmed", _listed(compared), "; ".join(held))


def _listed(rules: list[str]) -> str:
    """The rules that held, every one named (``rows and columns``).

    >>> _listed(["rows"]), _listed(["rows", "columns"]), _listed(["ids", "type", "count"])
    ('rows', 'rows and columns', 'ids, type and count')
    """
    return rules[0] if len(rules) == 1 else f"{', '.join(rules[:-1])} and {rules[-1]}"


def expectation_delta(
    *, tool: str, call_id: str, expect: dict[str, Any], verdict: Verdict, checked_at: str
) -> StateDelta:
    """The agent-state change for one checked expectation."""
    described = ", ".join(f"{k}={v}" for k, v in sorted(expect.items()))
    entry = Expectation(
        id=f"exp:{call_id}",
        action=f"{tool} {call_id}",
        expected_outcome=described,
        expected_ids=expect.get("artifact_ids"),
        expected_type=expect.get("artifact_type"),
        expected_count=expect.get("rows", expect.get("count")),
        expected_columns=expect.get("columns"),
        status=verdict.status,
        last_checked=checked_at,
        detail=verdict.detail,
    )
    return StateDelta(add=[Addition(section="expectations", value=entry.model_dump())])
