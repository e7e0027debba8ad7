"""Deterministic agent-state updates from tool results.

Every tool result says, in structured form, what now exists and where it came from: a
query's dataset came from its tables, a chart from the datasets its code used. These facts
become entities with dependencies and move the authoritative context (the active source
and dataset), without any model call, as each result arrives.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..._clock import utc_now
from ...agent_state import (
    ActiveValue,
    Addition,
    AgentState,
    Entity,
    Item,
    StateDelta,
    StatePatch,
    Update,
)
from ...artifacts import Artifact

#: A prompt longer than this is treated as pasted text, kept verbatim while it is discussed.
PASTE_CHARS = 1_500


def _entity(kind: str, name: str, *, derived_from: Iterable[str] = (), **detail: Any) -> Addition:
    value = Entity(id=f"{kind}:{name}", kind=kind, name=name, derived_from=list(derived_from), detail=detail)  # type: ignore[arg-type]
    return Addition(section="entities", value=value.model_dump())


def observe_step(
    state: AgentState,
    *,
    tool: str,
    arguments: dict[str, Any],
    status: str,
    result: dict[str, Any],
    artifacts: Sequence[Artifact],
    source_label: str,
    datasets_used: Sequence[str] = (),
) -> StateDelta:
    """The state change one tool result implies (empty for errors and refusals)."""
    if status != "ok":
        return StateDelta()
    now = utc_now()
    source_id = f"source:{source_label}"
    add: list[Addition] = []
    active: dict[str, ActiveValue | None] = {}
    add.append(_entity("source", source_label))
    if tool == "list_tables":
        for table in result.get("tables", []):
            name = table.get("name")
            if name:
                add.append(_entity("table", name, derived_from=[source_id], rows=table.get("rows")))
    elif tool == "describe_table":
        name = result.get("name") or arguments.get("table")
        if name:
            columns = [c.get("name") for c in result.get("columns", []) if isinstance(c, dict)]
            add.append(_entity("table", name, derived_from=[source_id], rows=result.get("rows"), columns=columns))
    elif tool == "run_sql":
        name = str(result.get("dataset") or arguments.get("name"))
        intent = result.get("intent") or {}
        tables = intent.get("tables", [])
        for table in tables:
            add.append(_entity("table", table, derived_from=[source_id]))
        add.append(
            _entity(
                "dataset", name, derived_from=[f"table:{t}" for t in tables],
                artifact_id=result.get("artifact_id"), rows=result.get("rows"),
                columns=[c["name"] for c in result.get("columns", [])], intent=result.get("intent_note"),
            )
        )
        active["dataset"] = ActiveValue(
            value=name, detail=f"{result.get('artifact_id')}: {result.get('intent_note') or ''}".strip(": "),
            last_used=now,
        )
        active["source"] = ActiveValue(value=source_label, last_used=now)
    elif tool == "run_python":
        inputs = [f"dataset:{d}" for d in datasets_used]
        for artifact in artifacts:
            add.append(
                _entity(
                    "artifact", artifact.artifact_id, derived_from=inputs,
                    file=artifact.name, type=artifact.type, fingerprint=artifact.fingerprint,
                )
            )
        if datasets_used:
            last = datasets_used[-1]
            known = state.entities.get(f"dataset:{last}")
            detail = known.detail.get("intent") if known else None
            active["dataset"] = ActiveValue(value=last, detail=detail, last_used=now)
    return StateDelta(add=add, patch=StatePatch(active=active))  # type: ignore[arg-type]


def turn_opened(state: AgentState, *, turn_number: int, prompt: str, source_label: str) -> StateDelta:
    """What the start of a turn changes: the active source, a pasted text, an answered question.

    A question the agent asked with candidates is resolved when the new prompt names one of
    the candidates; the resolution is the candidate chosen.
    """
    now = utc_now()
    delta = StateDelta(patch=StatePatch(active={"source": ActiveValue(value=source_label, last_used=now)}))
    if len(prompt) > PASTE_CHARS:
        delta.add.append(
            Addition(
                section="items",
                value=Item(
                    id=f"paste:{turn_number}", kind="note",
                    text=f"the user pasted a text of {len(prompt):,} characters in turn {turn_number}",
                    ref={"turn": turn_number, "text": prompt},
                ).model_dump(),
            )
        )
    lowered = prompt.lower()
    for item in state.open_items():
        if item.kind != "question" or not item.candidates:
            continue
        chosen = [c for c in item.candidates if c.lower() in lowered]
        if len(chosen) == 1:
            delta.update.append(
                Update(section="items", id=item.id, patch={"status": "resolved", "resolution": chosen[0]})
            )
    return delta


def turn_closed(*, notebook: str) -> StateDelta:
    """The thread's notebook becomes the active notebook."""
    return StateDelta(patch=StatePatch(active={"notebook": ActiveValue(value=notebook, last_used=utc_now())}))
