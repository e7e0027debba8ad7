"""Deterministic agent-state updates from tool results.

Every tool result says, in structured form, what now exists and where it came from: a
query's dataset came from its tables, a chart from the datasets its code used. These facts
become entities with dependencies and move the authoritative context (the active source
and dataset), without any model call, as each result arrives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..._clock import utc_now
from ...agent_state import (
    ActiveValue,
    Addition,
    AgentState,
    Entity,
    Item,
    Slot,
    StateDelta,
    StatePatch,
    Update,
)
from ...artifacts import Artifact
from ..spec import StepSeen, entity, spec_of

#: A prompt longer than this is treated as pasted text, kept verbatim while it is discussed.
PASTE_CHARS = 1_500
#: A question the user has not taken up this many turns after the turn that raised it is closed.
QUESTION_TURNS = 2


def observe_step(
    state: AgentState,
    *,
    tool: str,
    arguments: dict[str, Any],
    status: str,
    result: dict[str, Any],
    artifacts: Sequence[Artifact],
    source_label: str,
    datasets: Callable[[], Iterable[str]] = tuple,
) -> StateDelta:
    """The state change one tool result implies (empty for errors and refusals): the source
    it ran on, and what its tool's ``remembers`` says it added and moved.

    ``datasets``: the thread's dataset names, read only when the tool asks.
    """
    if status != "ok":
        return StateDelta()
    seen = StepSeen(state=state, arguments=arguments, result=result, artifacts=artifacts,
                    source_label=source_label, now=utc_now(), datasets=datasets)
    add: list[Addition] = [entity("source", source_label)]
    active: dict[str, ActiveValue | None] = {}
    spec = spec_of(tool)
    if spec is not None and spec.remembers is not None:
        more, moved = spec.remembers(seen)
        add += more
        active.update(moved)
    return StateDelta(add=add, patch=StatePatch(active=active))  # type: ignore[arg-type]


def turn_opened(
    state: AgentState, *, turn_number: int, prompt: str, source_label: str, asked: Item | None = None,
    names: Iterable[str] = (),
) -> StateDelta:
    """What the start of a turn changes: the active source, a pasted text, answered and
    ignored questions, the active dataset on a change of topic.

    ``asked``: the question the previous turn ended with; the prompt is its answer (the
    candidate it names, else its own words). Another question with candidates is resolved
    when the prompt names exactly one of them; a question still open :data:`QUESTION_TURNS`
    turns after the turn that raised it is closed as not taken up. The active dataset is
    cleared when the prompt changes the topic (see :func:`continues_topic`): ``names`` are
    the source's tables and columns, which a prompt on another topic names.
    """
    now = utc_now()
    active: dict[Slot, ActiveValue | None] = {"source": ActiveValue(value=source_label, last_used=now)}
    current = state.active.get("dataset")
    others = [*names, *(e.name for e in state.entities.values() if e.kind == "dataset")]
    if current is not None and not continues_topic(prompt, current.value, state.entities.get(f"dataset:{current.value}"),
                                                   others=others):
        active["dataset"] = None
    delta = StateDelta(patch=StatePatch(active=active))
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
        if item.kind != "question":
            continue
        chosen = [c for c in item.candidates if c.lower() in lowered]
        if asked is not None and item.id == asked.id and not chosen:
            chosen = chosen_by_position(prompt, item.candidates)
        if asked is not None and item.id == asked.id:
            answer = chosen[0] if len(chosen) == 1 else _clip(" ".join(prompt.split()), 300)
            delta.update.append(Update(section="items", id=item.id, patch={"status": "resolved", "resolution": answer}))
        elif len(chosen) == 1:
            delta.update.append(
                Update(section="items", id=item.id, patch={"status": "resolved", "resolution": chosen[0]})
            )
        elif isinstance(item.ref.get("turn"), int) and turn_number - item.ref["turn"] > QUESTION_TURNS:
            delta.update.append(Update(section="items", id=item.id, patch={
                "status": "discarded", "resolution": f"not taken up by the user in {QUESTION_TURNS} turns"}))
    return delta


_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "last": -1}
_BY_POSITION = re.compile(
    r"^\W*(?:(?:the|option|number|no\.?|#)\s*)*(?:(?P<word>first|second|third|fourth|fifth|sixth|last)|(?P<digit>[1-9]))"
    r"(?:\s*(?:one|option|choice|please))*\W*$",
    re.IGNORECASE,
)


def chosen_by_position(prompt: str, candidates: Sequence[str]) -> list[str]:
    """The candidate an answer names by its place in the list ("the first one", "2"), as a
    one-item list, or ``[]``: what was chosen is then recorded in its own words.

    >>> chosen_by_position("The first one", ["gross", "net"]), chosen_by_position("2.", ["gross", "net"])
    (['gross'], ['net'])
    >>> chosen_by_position("the last one please", ["a", "b", "c"]), chosen_by_position("first, by month", ["a"])
    (['c'], [])
    >>> chosen_by_position("3", ["gross", "net"])
    []
    """
    match = _BY_POSITION.match(prompt.strip())
    if match is None or not candidates:
        return []
    place = _ORDINALS[match["word"].lower()] if match["word"] else int(match["digit"])
    if place == -1:
        return [candidates[-1]]
    return [candidates[place - 1]] if place <= len(candidates) else []


def _clip(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 1] + "…"


#: Words that refer back to what the conversation was about.
_BACK = frozenset(
    "it its this that these those them they same again continue also further above previous earlier "
    "chart plot graph result results figure".split()
)
_WORD = re.compile(r"[a-z0-9]+")
#: A prompt that opens like an elliptic follow-up ("And by region?", "What about 2024?", "Now
#: per month") goes on with what was just shown, whatever else it names.
_FOLLOW_UP = re.compile(r"^\W*(?:and|but|now|then|what about|how about|by|per|split|broken)\b", re.IGNORECASE)


def _words(text: str) -> set[str]:
    return {w.removesuffix("s") for w in _WORD.findall(text.lower().replace("_", " ")) if len(w) >= 4}


def continues_topic(prompt: str, dataset: str, entity: Entity | None, *, others: Iterable[str] = ()) -> bool:
    """Whether a new prompt stays on the active dataset's topic. It does when it refers back
    (a word like "it", "that", "continue", "the chart") or shares a word of four letters or
    more with the dataset's name, its columns or its tables; it leaves it only when it names
    something else the thread knows (``others``: another table, column or dataset) and
    nothing of this one. A prompt that names nothing known ("what have we done so far?")
    keeps it: no evidence of a new topic is not a new topic.

    >>> e = Entity(id="dataset:jfk_visibility", kind="dataset", name="jfk_visibility",
    ...            derived_from=["table:weather"], detail={"columns": ["visib", "dep_delay"]})
    >>> continues_topic("plot it by month", "jfk_visibility", e), continues_topic("and the weather?", "jfk_visibility", e)
    (True, True)
    >>> continues_topic("How are we doing overall?", "jfk_visibility", e, others=["planes", "carrier"])
    True
    >>> continues_topic("How old are the planes?", "jfk_visibility", e, others=["planes", "carrier"])
    False
    >>> continues_topic("And by carrier?", "jfk_visibility", e, others=["planes", "carrier"])
    True
    """
    said = set(_WORD.findall(prompt.lower()))
    if said & _BACK or _FOLLOW_UP.match(prompt):
        return True
    known = _words(dataset)
    if entity is not None:
        known |= _words(" ".join(str(c) for c in entity.detail.get("columns") or ()))
        known |= _words(" ".join(d.removeprefix("table:") for d in entity.derived_from))
    asked = _words(prompt)
    if asked & known:
        return True
    elsewhere = _words(" ".join(others)) - known
    return not asked & elsewhere


def turn_answered(state: AgentState, answer: str) -> StateDelta:
    """The dataset the answer cites (the first one it names, by name or artifact id)
    becomes the active dataset: what the answer was about, not merely the last step's output.
    Among datasets cited equally often, one of several rows outranks a single row (a date
    range or a total looked up on the way, which a follow-up such as "by region" or "chart it"
    cannot mean), then the one cited first.
    >>> e = Entity(id="dataset:by_carrier", kind="dataset", name="by_carrier", detail={"artifact_id": "art_1"})
    >>> s = AgentState(entities={e.id: e})
    >>> turn_answered(s, "United leads (`by_carrier`).").patch.active["dataset"].value
    'by_carrier'
    >>> turn_answered(s, "Nothing cited.").is_empty()
    True
    >>> m = Entity(id="dataset:by_month", kind="dataset", name="by_month", detail={"artifact_id": "art_2"})
    >>> both = AgentState(entities={e.id: e, m.id: m})
    >>> turn_answered(both, "We have `by_carrier` and `by_month`. The monthly one is `by_month` (art_2).").patch.active["dataset"].value
    'by_month'
    """
    cited: list[tuple[int, int, int, Entity]] = []
    for known in state.entities.values():
        if known.kind != "dataset":
            continue
        names = [re.escape(known.name)] + ([re.escape(str(known.detail["artifact_id"]))] if known.detail.get("artifact_id") else [])
        found = list(re.finditer(r"(?<![\w.])(?:" + "|".join(names) + r")(?!\w)", answer))
        if found:
            cited.append((-len(found), 1 if known.detail.get("rows") == 1 else 0, found[0].start(), known))
    if not cited:
        return StateDelta()
    # An answer that lists several is about the one it keeps coming back to.
    *_, chosen = min(cited, key=lambda c: c[:3])
    detail = f"{chosen.detail.get('artifact_id') or ''}: {chosen.detail.get('intent') or ''}".strip(": ")
    return StateDelta(patch=StatePatch(active={"dataset": ActiveValue(value=chosen.name, detail=detail, last_used=utc_now())}))


def stamped(delta: StateDelta, turn_number: int) -> StateDelta:
    """The delta with each item it adds saying the turn it was raised in, where it does not
    already: a question asked with clarify, like one the summarizer notes, is closed some
    turns later if the user does not take it up, and a later request says which turn asked it.

    >>> d = StateDelta(add=[Addition(section="items", value={"id": "question:c1", "kind": "question", "text": "Which?"})])
    >>> stamped(d, 3).add[0].value["ref"]
    {'turn': 3}
    """
    added = []
    for addition in delta.add:
        ref = addition.value.get("ref") or {}
        if addition.section == "items" and not isinstance(ref.get("turn"), int):
            addition = addition.model_copy(update={"value": {**addition.value, "ref": {**ref, "turn": turn_number}}})
        added.append(addition)
    return delta.model_copy(update={"add": added})


def turn_closed(*, notebook: str) -> StateDelta:
    """The thread's notebook becomes the active notebook."""
    return StateDelta(patch=StatePatch(active={"notebook": ActiveValue(value=notebook, last_used=utc_now())}))
