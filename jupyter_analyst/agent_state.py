"""The agent's structured memory of a thread, and the only way it changes: deltas.

The state is what the agent has established, kept apart from the chat history so that it
survives the history being cut: the entities it knows (sources, tables, datasets,
artifacts) with what each was derived from, its assumptions, the expectations it stated
and whether they held, tentative hypotheses, open items (tasks, notes, ideas, questions),
the authoritative context (active source, dataset and notebook) and the rolling summary of
older turns.

It is never edited in place. Every change is a :class:`StateDelta` (additions, updates and
removals of entries, then patches of the single-valued fields), applied in one store
transaction so that the turn's own updates and a summarizer finishing in the background
never overwrite each other. Assumptions are never deleted: removing one sets its
confidence to 0, so what the agent once believed, and why it stopped, stays on record.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from .errors import InvalidArguments

EntityKind = Literal["source", "table", "dataset", "artifact"]
ItemKind = Literal["task", "note", "idea", "question"]
ItemStatus = Literal["active", "resolved", "discarded"]
ExpectationStatus = Literal["pending", "confirmed", "failed", "skipped"]
Section = Literal["entities", "assumptions", "expectations", "hypotheses", "items"]
Slot = Literal["source", "dataset", "notebook"]


class Entity(BaseModel):
    """Something the agent knows exists, e.g. ``dataset:revenue`` derived from ``table:orders``."""

    id: str
    kind: EntityKind
    name: str
    derived_from: list[str] = []
    """Ids of the entities it came from: a dataset's tables, a chart's datasets."""
    detail: dict[str, Any] = {}
    """Facts from tool results: rows, columns, the artifact id, the data-intent note."""


class Assumption(BaseModel):
    """Something taken as true, with how sure and why; retired by confidence 0, never deleted."""

    id: str
    hypothesis: str
    confidence: float = Field(ge=0.0, le=1.0)
    evidence: list[str] = []


class Expectation(BaseModel):
    """What a tool call said it would produce, and whether it did."""

    id: str
    action: str
    """The tool and call id, e.g. ``run_sql call_1``."""
    expected_outcome: str
    expected_ids: list[str] | None = None
    expected_type: str | None = None
    expected_count: int | None = None
    expected_columns: list[str] | None = None
    status: ExpectationStatus = "pending"
    last_checked: str | None = None
    detail: str | None = None


class Hypothesis(BaseModel):
    """A tentative idea about the data, not yet tested."""

    id: str
    text: str


class Item(BaseModel):
    """A task, note, idea or question the thread is carrying."""

    id: str
    kind: ItemKind
    text: str
    status: ItemStatus = "active"
    candidates: list[str] = []
    """For a question: the interpretations the user is asked to choose from."""
    resolution: str | None = None
    ref: dict[str, Any] = {}
    """What the item points at, e.g. ``{"turn": 3}`` for a pasted text."""


class ActiveValue(BaseModel):
    """One slot of the authoritative context and when it was last used."""

    value: str
    detail: str | None = None
    last_used: str


class RollingSummary(BaseModel):
    """Older turns folded into one text by the summarizer."""

    text: str = ""
    through_turn: int = 0
    """The last turn number the text covers; later turns are still sent as messages."""


_SECTION_MODELS: dict[str, type[BaseModel]] = {
    "entities": Entity,
    "assumptions": Assumption,
    "expectations": Expectation,
    "hypotheses": Hypothesis,
    "items": Item,
}


class AgentState(BaseModel):
    """Everything the agent has established about one thread."""

    version: int = 0
    entities: dict[str, Entity] = {}
    """The current understanding, keyed by entity id."""
    assumptions: dict[str, Assumption] = {}
    expectations: dict[str, Expectation] = {}
    hypotheses: dict[str, Hypothesis] = {}
    items: dict[str, Item] = {}
    active: dict[Slot, ActiveValue] = {}
    summary: RollingSummary = RollingSummary()

    def section(self, name: Section) -> dict[str, Any]:
        return getattr(self, name)

    def active_now(self, ttl_s: float, now: datetime | None = None) -> dict[Slot, ActiveValue]:
        """The authoritative context that has not expired.

        >>> s = AgentState(active={"dataset": ActiveValue(value="revenue", last_used="2026-01-01T00:00:00+00:00")})
        >>> list(s.active_now(60, now=datetime(2026, 1, 1, 0, 0, 30, tzinfo=UTC)))
        ['dataset']
        >>> s.active_now(60, now=datetime(2026, 1, 1, 0, 2, tzinfo=UTC))
        {}
        """
        if ttl_s == float("inf"):
            return dict(self.active)
        now = now or datetime.now(UTC)
        horizon = timedelta(seconds=ttl_s)
        return {
            slot: value
            for slot, value in self.active.items()
            if now - datetime.fromisoformat(value.last_used) <= horizon
        }

    def open_items(self) -> list[Item]:
        return [i for i in self.items.values() if i.status == "active"]


class Update(BaseModel):
    """Change some fields of one entry."""

    section: Section
    id: str
    patch: dict[str, Any]


class Removal(BaseModel):
    """Remove one entry (an assumption is retired to confidence 0 instead)."""

    section: Section
    id: str


class Addition(BaseModel):
    """Add (or replace) one entry; ``value`` must carry its ``id``."""

    section: Section
    value: dict[str, Any]


class StatePatch(BaseModel):
    """The single-valued fields: the authoritative context and the rolling summary."""

    active: dict[Slot, ActiveValue | None] = {}
    """A slot set to ``None`` is cleared."""
    summary: RollingSummary | None = None


class StateDelta(BaseModel):
    """One change to the agent state: entries added, updated, removed, then fields patched."""

    add: list[Addition] = []
    update: list[Update] = []
    remove: list[Removal] = []
    patch: StatePatch = StatePatch()

    def is_empty(self) -> bool:
        return not (self.add or self.update or self.remove or self.patch.active or self.patch.summary)

    def counts(self) -> dict[str, int]:
        """How many changes of each kind, for events."""
        return {
            "added": len(self.add),
            "updated": len(self.update),
            "removed": len(self.remove),
            "patched": len(self.patch.active) + (self.patch.summary is not None),
        }

    def merged(self, other: StateDelta) -> StateDelta:
        """This delta followed by ``other``, as one."""
        return StateDelta(
            add=[*self.add, *other.add],
            update=[*self.update, *other.update],
            remove=[*self.remove, *other.remove],
            patch=StatePatch(
                active={**self.patch.active, **other.patch.active},
                summary=other.patch.summary or self.patch.summary,
            ),
        )


def apply_delta(state: AgentState, delta: StateDelta) -> AgentState:
    """A new state with ``delta`` applied (``state`` is left as it was).

    Entries that fail validation, updates of unknown ids and removals of unknown ids are
    errors: a delta is applied whole or not at all.

    >>> s = apply_delta(AgentState(), StateDelta(add=[Addition(section="assumptions",
    ...     value={"id": "a1", "hypothesis": "amounts are in EUR", "confidence": 0.6})]))
    >>> s = apply_delta(s, StateDelta(remove=[Removal(section="assumptions", id="a1")]))
    >>> s.assumptions["a1"].confidence, s.version
    (0.0, 2)
    """
    # Entries are replaced, never mutated, so copying the touched sections' dicts is enough
    # (a deep copy would cost time in proportion to the whole state on every change).
    data = state.model_copy()
    for section in {c.section for c in (*delta.add, *delta.update, *delta.remove)}:
        setattr(data, section, dict(getattr(state, section)))
    data.active = dict(state.active)
    try:
        for addition in delta.add:
            model = _SECTION_MODELS[addition.section]
            entry = model.model_validate(addition.value)
            entries = data.section(addition.section)
            if isinstance(entry, Entity) and entry.id in entries:
                entry = _merge_entity(entries[entry.id], entry)
            entries[entry.id] = entry  # type: ignore[attr-defined]
        for update in delta.update:
            entries = data.section(update.section)
            if update.id not in entries:
                raise InvalidArguments(
                    f"no {update.section} entry {update.id!r} to update", reason="state_delta_invalid"
                )
            current = entries[update.id]
            patch = {k: v for k, v in update.patch.items() if k != "id"}
            entries[update.id] = type(current).model_validate({**current.model_dump(), **patch})
        for removal in delta.remove:
            entries = data.section(removal.section)
            if removal.id not in entries:
                raise InvalidArguments(
                    f"no {removal.section} entry {removal.id!r} to remove", reason="state_delta_invalid"
                )
            if removal.section == "assumptions":
                entries[removal.id] = entries[removal.id].model_copy(update={"confidence": 0.0})
            else:
                del entries[removal.id]
    except ValidationError as exc:
        raise InvalidArguments(f"the state delta is invalid: {_first_error(exc)}", reason="state_delta_invalid") from exc
    for slot, value in delta.patch.active.items():
        if value is None:
            data.active.pop(slot, None)
        else:
            data.active[slot] = value
    if delta.patch.summary is not None and delta.patch.summary.through_turn >= state.summary.through_turn:
        # A summary that answers late never replaces a newer one that covers more turns.
        data.summary = delta.patch.summary
    data.version = state.version + 1
    return data


def _merge_entity(old: Entity, new: Entity) -> Entity:
    """Adding a known entity asserts more facts about it: details merge, sources add up.

    >>> old = Entity(id="table:t", kind="table", name="t", detail={"columns": ["a"]})
    >>> _merge_entity(old, Entity(id="table:t", kind="table", name="t", detail={"rows": 3})).detail
    {'columns': ['a'], 'rows': 3}
    """
    detail = {**old.detail, **{k: v for k, v in new.detail.items() if v is not None}}
    derived = list(dict.fromkeys([*new.derived_from, *old.derived_from]))
    return new.model_copy(update={"detail": detail, "derived_from": derived})


def parse_delta(data: Any) -> StateDelta:
    """A delta from untrusted JSON (the summarizer's reply).

    >>> parse_delta({"add": [{"section": "items", "value": {"id": "i1", "kind": "task", "text": "t"}}]}).counts()
    {'added': 1, 'updated': 0, 'removed': 0, 'patched': 0}
    """
    try:
        return StateDelta.model_validate(data)
    except ValidationError as exc:
        raise InvalidArguments(f"the state delta is invalid: {_first_error(exc)}", reason="state_delta_invalid") from exc


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]

