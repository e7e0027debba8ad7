"""Threads, turns, messages and events: append-only, ordered, isolated per user."""

import json
import subprocess
import sys

import pytest

from jupyter_analyst.events import StateChanged, TextDelta, parse_event
from jupyter_analyst.errors import ConfigError
from jupyter_analyst.store import ThreadStore


@pytest.fixture
def store(store_location):
    s = ThreadStore(store_location)
    yield s
    s.close()


def test_events_numbered_in_order_per_thread(store):
    a = store.create_thread(user="ann")
    b = store.create_thread(user="bob")
    for i in range(3):
        e = store.append_event(TextDelta(thread_id=a.thread_id, turn_id="t", text=str(i)))
        assert e.seq == i + 1
    assert store.append_event(TextDelta(thread_id=b.thread_id, turn_id="t", text="x")).seq == 1
    assert [e.text for e in store.events(a.thread_id)] == ["0", "1", "2"]
    assert [e.seq for e in store.events(a.thread_id, after=1)] == [2, 3]


def test_events_survive_reopen_and_round_trip(tmp_path):
    s = ThreadStore(tmp_path / "a.sqlite3")
    t = s.create_thread()
    s.append_event(StateChanged(thread_id=t.thread_id, turn_id="x", from_state=None, to_state="planning"))
    s.close()
    again = ThreadStore(tmp_path / "a.sqlite3")
    (event,) = again.events(t.thread_id)
    assert isinstance(event, StateChanged) and event.to_state == "planning" and event.seq == 1
    assert parse_event(event.model_dump_json()) == event


def test_sequence_numbers_unique_across_processes(tmp_path):
    db = tmp_path / "a.sqlite3"
    s = ThreadStore(db)
    t = s.create_thread()
    code = (
        "import sys; from jupyter_analyst.store import ThreadStore;"
        "from jupyter_analyst.events import TextDelta;"
        "s = ThreadStore(sys.argv[1]);"
        "[s.append_event(TextDelta(thread_id=sys.argv[2], turn_id='p', text='x')) for _ in range(40)]"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(db), t.thread_id]) for _ in range(3)]
    assert all(p.wait(timeout=60) == 0 for p in procs)
    seqs = [e.seq for e in s.events(t.thread_id)]
    assert seqs == list(range(1, 121))


def test_messages_append_only_and_windowed(store):
    t = store.create_thread()
    turn = store.start_turn(t.thread_id, "hi")
    for i in range(5):
        store.append_message(t.thread_id, turn.turn_id, {"role": "user", "content": f"m{i}"})
    assert [m["content"] for m in store.messages(t.thread_id)] == [f"m{i}" for i in range(5)]
    assert [m["content"] for m in store.messages(t.thread_id, last=2)] == ["m3", "m4"]


def test_threads_isolated_per_user(store):
    a = store.create_thread(user="ann")
    store.create_thread(user="bob")
    assert [t.thread_id for t in store.list_threads(user="ann")] == [a.thread_id]
    assert store.get_thread(a.thread_id, user="ann").user == "ann"
    with pytest.raises(ConfigError) as info:
        store.get_thread(a.thread_id, user="bob")
    assert info.value.reason == "thread_not_found"


def test_unknown_thread_has_a_hint(store):
    with pytest.raises(ConfigError) as info:
        store.get_thread("thr_nope")
    assert "unknown thread" in info.value.message and info.value.hint


def test_a_turn_left_running_is_marked_interrupted(store):
    t = store.create_thread()
    cut = store.start_turn(t.thread_id, "first")  # its process "died": never ended
    nxt = store.start_turn(t.thread_id, "continue")
    turns = {x.turn_id: x for x in store.turns(t.thread_id)}
    assert turns[cut.turn_id].status == "interrupted"
    assert turns[nxt.turn_id].status == "running" and nxt.number == 2
    store.end_turn(nxt.turn_id, "completed", answer="done")
    assert store.turns(t.thread_id)[1].answer == "done"


def test_a_turn_opened_beside_a_running_one_leaves_it_running(store):
    t = store.create_thread()
    step = store.start_turn(t.thread_id, "run_sql ...")  # live: a host's step, still running
    lookup = store.start_turn(t.thread_id, "describe_table ...", beside=True)
    assert [(x.turn_id, x.status) for x in store.turns(t.thread_id)] == [(step.turn_id, "running"),
                                                                         (lookup.turn_id, "running")]
    store.end_turn(lookup.turn_id, "completed")
    store.end_turn(step.turn_id, "completed")
    assert [x.status for x in store.turns(t.thread_id)] == ["completed", "completed"]


def test_a_leased_turn_is_not_cut_by_another_until_its_lease_runs_out(store):
    from jupyter_analyst.events import TurnEnded, TurnStarted
    from jupyter_analyst.store import ThreadBusy

    t = store.create_thread()

    def started(turn):
        return TurnStarted(thread_id=turn.thread_id, turn_id=turn.turn_id, prompt=turn.prompt, model="m")

    def ended(turn):
        return TurnEnded(thread_id=turn.thread_id, turn_id=turn.turn_id, status="interrupted", message="cut")

    live, _ = store.announce_turn(t.thread_id, "first", started, lease_s=60)
    with pytest.raises(ThreadBusy):  # another process's turn, still renewed: not marked interrupted
        store.announce_turn(t.thread_id, "second", started, lease_s=60)
    with pytest.raises(ThreadBusy):  # nor by a turn that takes no lease itself
        store.start_turn(t.thread_id, "one step")
    assert store.expire_leases(ended) == []
    assert [x.status for x in store.turns(t.thread_id)] == ["running"]

    store.renew_leases([live.turn_id], -1)  # its process stopped renewing: the lease is over
    (cut,) = store.expire_leases(ended)
    assert cut.turn_id == live.turn_id and cut.seq == 2  # stored after the turn's start, numbered
    assert store.expire_leases(ended) == []  # closed once, by whoever sweeps first
    assert [x.status for x in store.turns(t.thread_id)] == ["interrupted"]
    store.renew_leases([live.turn_id], 60)  # a renewal after the cut changes nothing
    assert [x.status for x in store.turns(t.thread_id)] == ["interrupted"]
    nxt, _ = store.announce_turn(t.thread_id, "second", started, lease_s=60)
    assert nxt.number == 2 and [e.type for e in store.events(t.thread_id)] == ["turn_started", "turn_ended", "turn_started"]


def test_message_bodies_are_json(store, tmp_path):
    t = store.create_thread()
    turn = store.start_turn(t.thread_id, "q")
    msg = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
           "function": {"name": "run_sql", "arguments": json.dumps({"sql": "SELECT 1"})}}]}
    store.append_message(t.thread_id, turn.turn_id, msg)
    assert store.messages(t.thread_id) == [msg]


def test_a_store_used_after_close_raises_a_storage_error(tmp_path):
    from jupyter_analyst.errors import StorageError

    s = ThreadStore(tmp_path / "closed.sqlite3")
    thread = s.create_thread(user="ann")
    s.close()
    with pytest.raises(StorageError, match="cannot write to the workspace database"):
        s.append_event(TextDelta(thread_id=thread.thread_id, turn_id="t", text="x"))
    with pytest.raises(StorageError, match="cannot read the workspace database"):
        s.events(thread.thread_id)


def test_threads_are_listed_by_last_activity(store):
    old = store.create_thread(user="ann", title="old")
    new = store.create_thread(user="ann", title="new")
    # Made a day apart (timestamps have milliseconds: what runs next may share one).
    with store._tx() as cur:
        cur.execute("UPDATE threads SET created_at = '2026-01-01T00:00:00.000Z' WHERE thread_id = ?", (old.thread_id,))
        cur.execute("UPDATE threads SET created_at = '2026-01-02T00:00:00.000Z' WHERE thread_id = ?", (new.thread_id,))
    listed = store.list_threads(user="ann")
    assert [t.title for t in listed] == ["new", "old"]
    assert listed[0].last_activity == "2026-01-02T00:00:00.000Z"
    turn = store.start_turn(old.thread_id, "again")
    listed = store.list_threads(user="ann")
    assert [t.title for t in listed] == ["old", "new"] and listed[0].last_activity == turn.started_at
    assert store.get_thread(old.thread_id, user="ann").last_activity is None  # only listings compute it


def test_a_conversation_of_another_host_keeps_its_thread_per_user(store):
    assert store.bound_thread("jupyter-ai", "chat-1", user="ann") is None
    first = store.create_thread(user="ann")
    assert store.bind_thread("jupyter-ai", "chat-1", first).thread_id == first.thread_id
    # A second binding of the same conversation (another process's, say) gets the first's thread.
    other = store.create_thread(user="ann")
    assert store.bind_thread("jupyter-ai", "chat-1", other).thread_id == first.thread_id
    assert store.bound_thread("jupyter-ai", "chat-1", user="ann").thread_id == first.thread_id
    # Another user of the same chat, or the same id on another host, has a thread of its own.
    bobs = store.create_thread(user="bob")
    assert store.bind_thread("jupyter-ai", "chat-1", bobs).thread_id == bobs.thread_id
    assert store.bound_thread("jupyter-ai", "chat-1", user="ann").thread_id == first.thread_id
    assert store.bound_thread("mcp", "chat-1", user="ann") is None


def test_a_turn_keeps_its_answers_receipts_and_a_turn_without_them_has_none(store):
    from datetime import date

    from jupyter_analyst.receipts import Citation, UnsupportedClaim

    t = store.create_thread()
    cited = [Citation(start=0, end=5, text="1,620", kind="number", value=1620, call_id="call_1", artifact_id="art_1",
                      row=0, column="flights"),
             Citation(start=10, end=20, text="2024-03-01", kind="date", value=date(2024, 3, 1), call_id="call_1",
                      row=2, column="day")]
    kept = [UnsupportedClaim(start=25, end=28, text="37%", kind="percent", value=37.0)]
    first = store.start_turn(t.thread_id, "flights?")
    store.end_turn(first.turn_id, "completed", answer="...", citations=cited, unsupported=kept)
    second = store.start_turn(t.thread_id, "thanks")
    store.end_turn(second.turn_id, "completed", answer="You're welcome.")
    one, two = store.turns(t.thread_id)
    # A date travels as its ISO text (Citation.value says so), the rest as they were.
    assert [c.model_dump(mode="json") for c in one.citations] == [c.model_dump(mode="json") for c in cited]
    assert one.unsupported == kept
    assert (two.citations, two.unsupported) == ([], [])
