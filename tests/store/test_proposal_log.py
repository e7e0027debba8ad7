"""Proposals, the decisions on them and their checkpoints, on SQLite and PostgreSQL: kept per
thread, decisions append-only and in order, removed with their thread."""

import pytest

from jupyter_analyst.store import ThreadStore


@pytest.fixture
def store(store_location):
    s = ThreadStore(store_location)
    yield s
    s.close()


def test_proposals_and_decisions_are_kept_in_order_per_thread(store):
    a, b = store.create_thread(user="ann"), store.create_thread(user="bob")
    store.record_proposal(a.thread_id, "turn_1", "prop_1", "nb.ipynb", {"proposal_id": "prop_1", "changes": []})
    store.record_proposal(a.thread_id, "turn_2", "prop_2", "nb.ipynb", {"proposal_id": "prop_2", "changes": []})
    assert [p["proposal_id"] for p in store.proposals(a.thread_id)] == ["prop_1", "prop_2"]
    assert [p["proposal_id"] for p in store.proposals(a.thread_id, turn_id="turn_2")] == ["prop_2"]
    assert store.proposals(b.thread_id) == [] and store.proposal(b.thread_id, "prop_1") is None
    store.decide(a.thread_id, "prop_1", ["c1", "c2"], "accepted", "ann")
    store.decide(a.thread_id, "prop_1", ["c1"], "reverted", "ann")
    assert [(d["change_id"], d["decision"], d["user"]) for d in store.decisions(a.thread_id, "prop_1")] == [
        ("c1", "accepted", "ann"), ("c2", "accepted", "ann"), ("c1", "reverted", "ann")]
    store.record_checkpoint(a.thread_id, "turn_1", "prop_1", "nb.ipynb", "checkpoint", "d1", "{}")
    store.record_checkpoint(a.thread_id, "turn_1", "prop_1", "nb.ipynb", "later", "d2", "{ }")  # the first is kept
    [point] = store.checkpoints(a.thread_id, "turn_1")
    assert (point["checkpoint_id"], point["digest"], point["body"]) == ("checkpoint", "d1", "{}")
    store.delete_thread(a.thread_id)
    assert store.proposals(a.thread_id) == [] and store.decisions(a.thread_id) == []
    assert store.checkpoints(a.thread_id, "turn_1") == []
