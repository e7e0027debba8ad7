"""The agent state: deltas only, assumptions never deleted, one transaction per change."""

from __future__ import annotations

import threading

import pytest

from jupyter_analyst.agent_state import (
    ActiveValue,
    Addition,
    AgentState,
    Removal,
    StateDelta,
    StatePatch,
    Update,
    apply_delta,
    parse_delta,
)
from jupyter_analyst.errors import InvalidArguments
from jupyter_analyst.store import ThreadStore


def add(section, **value):
    return Addition(section=section, value=value)


def test_add_update_remove_then_patch():
    state = apply_delta(AgentState(), StateDelta(
        add=[add("items", id="i1", kind="task", text="chart revenue"),
             add("hypotheses", id="h1", text="EMEA drives growth")],
    ))
    state = apply_delta(state, StateDelta(
        update=[Update(section="items", id="i1", patch={"status": "resolved"})],
        remove=[Removal(section="hypotheses", id="h1")],
        patch=StatePatch(active={"dataset": ActiveValue(value="revenue", last_used="2026-01-01T00:00:00Z")}),
    ))
    assert state.items["i1"].status == "resolved"
    assert state.hypotheses == {}
    assert state.active["dataset"].value == "revenue"
    assert state.version == 2


def test_assumptions_are_retired_not_deleted():
    state = apply_delta(AgentState(), StateDelta(add=[add("assumptions", id="a", hypothesis="in EUR", confidence=0.7)]))
    state = apply_delta(state, StateDelta(remove=[Removal(section="assumptions", id="a")]))
    assert state.assumptions["a"].hypothesis == "in EUR"
    assert state.assumptions["a"].confidence == 0.0


@pytest.mark.parametrize("delta", [
    {"update": [{"section": "items", "id": "nope", "patch": {"status": "resolved"}}]},
    {"remove": [{"section": "items", "id": "nope"}]},
    {"add": [{"section": "items", "value": {"id": "x", "kind": "wish", "text": "t"}}]},
    {"add": [{"section": "assumptions", "value": {"id": "a", "hypothesis": "h", "confidence": 2}}]},
    {"add": [{"section": "moods", "value": {"id": "m"}}]},
])
def test_invalid_deltas_change_nothing(delta, tmp_path):
    store = ThreadStore(tmp_path / "s.sqlite3")
    thread = store.create_thread(user="u", source="x", title="t")
    with pytest.raises(InvalidArguments) as info:
        store.apply_state_delta(thread.thread_id, parse_delta(delta), origin="test")
    assert info.value.reason == "state_delta_invalid"
    assert store.agent_state(thread.thread_id).version == 0
    assert store.state_deltas(thread.thread_id) == []


def test_concurrent_deltas_all_land_in_order(tmp_path):
    """A turn and a summarizer writing at once: every delta applies on top of the other."""
    path = tmp_path / "s.sqlite3"
    thread = ThreadStore(path).create_thread(user="u", source="x", title="t")

    def writer(prefix: str) -> None:
        store = ThreadStore(path)  # its own connection, as the background summarizer has
        for n in range(20):
            store.apply_state_delta(thread.thread_id, StateDelta(add=[add("items", id=f"{prefix}{n}", kind="note", text="x")]),
                                    origin=prefix)
        store.close()

    workers = [threading.Thread(target=writer, args=(p,)) for p in ("turn", "summarizer")]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    store = ThreadStore(path)
    state = store.agent_state(thread.thread_id)
    assert len(state.items) == 40 and state.version == 40
    assert [d["version"] for d in store.state_deltas(thread.thread_id)] == list(range(1, 41))
