"""JupyterHub users on one PostgreSQL store: a real Hub on 127.0.0.1 runs one single-user
server per user (alice's and bob's, each with the extension), both on one store. The user
the extension sees is the one the Hub's identity provider names from the user's own token.

Each user sees only their own threads; every path naming the other's thread or artifact is
404, answered exactly as for an id that never existed; a turn alice streams on her server
shows nothing on bob's while it runs.
"""

from __future__ import annotations

import json
import threading
import urllib.error
from dataclasses import dataclass

import pytest

from jupyter_analyst.testing import ScriptedModelServer, python_step, sql_step, text_step
from jupyter_analyst.testing.servers.hub import HubProcess, HubUnavailable
from jupyter_analyst.testing.streams import Frame, StreamRefused, read_stream

SQL = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r "
       "ON o.region_id = r.region_id GROUP BY r.region ORDER BY r.region")
SCRIPT = {"turns": [{"steps": [sql_step(SQL, "revenue"), python_step("print('total', round(revenue.revenue.sum(), 2))"),
                               text_step()]}]}
API = "/analyst/api"
#: An id of the right shape that no thread has: what "does not exist" looks like.
NEVER = "thr_0000000000000000"

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def model():
    with ScriptedModelServer(SCRIPT) as server:
        yield server


@pytest.fixture(scope="module")
def hub(postgres, sales_db, model, tmp_path_factory):
    """The Hub with alice's and bob's servers running, on a fresh PostgreSQL database."""
    analyst = {"store_url": postgres.new_database(), "sources": {"sales": str(sales_db)},
               "model_base_url": model.base_url, "pool_size": 0, "summarizer": False,
               "budgets": {"user/day": "5M tokens"}, "budget_admins": ["alice"]}
    try:
        team = HubProcess(tmp_path_factory.mktemp("hub"), users=["alice", "bob"], analyst=analyst)
    except HubUnavailable as exc:
        pytest.skip(f"a real JupyterHub is needed: {exc}")
    with team:
        team.spawn("alice", "bob")
        yield team


def status_of(hub: HubProcess, server: str, path: str, *, user: str, method: str = "GET", body=None):
    """``(status, JSON body)`` of a request to ``server``'s API as ``user``."""
    try:
        data = hub.request(server, API + path, as_user=user, method=method, body=body, raw=True)
        status = 200
    except urllib.error.HTTPError as exc:
        data, status = exc.read(), exc.code
    try:
        return status, json.loads(data or b"null")
    except (UnicodeDecodeError, json.JSONDecodeError):
        return status, data  # an artifact's bytes, a notebook's text


@dataclass
class AliceTurn:
    thread: str
    bob_thread: str
    frames: list[Frame]
    polls: dict[str, tuple[int, object]]
    """What bob's server answered while alice's turn was held mid-way."""
    active_meanwhile: bool


@pytest.fixture(scope="module")
def alice_turn(hub, model) -> AliceTurn:
    """Alice's turn (SQL, then Python) streamed on her server, held after its SQL step while
    bob's server is asked about everything it might show of it."""
    alice = hub.request("alice", API + "/threads", method="POST", body={"source": "sales"})["thread_id"]
    bob = hub.request("bob", API + "/threads", method="POST", body={"source": "sales"})["thread_id"]
    held, release = model.hold_requests(after=len(model.requests) + 1)
    frames: list[Frame] = []
    failure: list[BaseException] = []

    def stream() -> None:
        try:
            frames.extend(read_stream(f"{hub.server_url('alice')}{API}/threads/{alice}/turns", method="POST",
                                      headers=hub.headers("alice"), body={"prompt": "total revenue"}))
        except BaseException as exc:  # reported by the fixture, not lost in the thread
            failure.append(exc)

    reader = threading.Thread(target=stream)
    reader.start()
    try:
        assert held.wait(120), "alice's turn never reached its second model call"
        polls = {
            "bob's threads": status_of(hub, "bob", "/threads", user="bob"),
            "bob's thread": status_of(hub, "bob", f"/threads/{bob}", user="bob"),
            "bob's events": status_of(hub, "bob", f"/threads/{bob}/events", user="bob"),
            "alice's thread": status_of(hub, "bob", f"/threads/{alice}", user="bob"),
            "alice's events": status_of(hub, "bob", f"/threads/{alice}/events", user="bob"),
        }
        try:
            # Were it let through, it would follow alice's held turn: given up on, not waited for.
            read_stream(f"{hub.server_url('bob')}{API}/threads/{alice}/events", headers=hub.headers("bob"),
                        give_up_after=20)
            polls["alice's event stream"] = (200, None)
        except StreamRefused as exc:
            polls["alice's event stream"] = (exc.status, json.loads(exc.body))
        active = hub.request("alice", f"{API}/threads/{alice}")["active"]
    finally:
        release.set()
        reader.join(300)
    assert not failure, failure
    return AliceTurn(alice, bob, frames, polls, active)


def test_each_user_lists_only_their_own_threads(hub, alice_turn):
    for user, mine in (("alice", alice_turn.thread), ("bob", alice_turn.bob_thread)):
        threads = hub.request(user, API + "/threads")["threads"]
        assert [(t["thread_id"], t["user"]) for t in threads] == [(mine, user)]


def test_alice_streams_her_turn_whole(hub, alice_turn):
    events = [f.event for f in alice_turn.frames]
    assert events[0]["type"] == "turn_started" and events[-1]["type"] == "turn_ended"
    assert events[-1]["status"] == "completed"
    assert [f.id for f in alice_turn.frames] == [str(e["seq"]) for e in events]
    stored = hub.request("alice", f"{API}/threads/{alice_turn.thread}/events")["events"]
    assert [e["seq"] for e in stored] == list(range(1, len(stored) + 1))
    results = {e["tool"]: e["status"] for e in stored if e["type"] == "tool_result"}
    assert results == {"run_sql": "ok", "run_python": "ok"}


def test_bobs_server_shows_nothing_of_alices_running_turn(alice_turn):
    polls = alice_turn.polls
    assert alice_turn.active_meanwhile, "the polls were meant to happen while alice's turn ran"
    status, listed = polls["bob's threads"]
    assert status == 200 and [t["thread_id"] for t in listed["threads"]] == [alice_turn.bob_thread]
    assert polls["bob's thread"][0] == 200
    assert polls["bob's thread"][1]["last_seq"] == 0 and polls["bob's thread"][1]["active"] is False
    assert polls["bob's events"] == (200, {"events": []})
    for name in ("alice's thread", "alice's events", "alice's event stream"):
        status, body = polls[name]
        assert (status, body["reason"]) == (404, "thread_not_found"), name


def _same_as_never(hub, path: str, real: str, never: str, *, method: str = "GET", body=None) -> None:
    """Bob's request naming alice's ``real`` id is answered as one naming ``never`` is: 404,
    the same reason, the same words but for the id (nothing tells him the id exists)."""
    got = status_of(hub, "bob", path.format(real), user="bob", method=method, body=body)
    unknown = status_of(hub, "bob", path.format(never), user="bob", method=method, body=body)
    assert got[0] == 404, (path, got)
    assert json.dumps(got[1]).replace(real, "ID") == json.dumps(unknown[1]).replace(never, "ID"), path


THREAD_GETS = ["/threads/{}", "/threads/{}/events", "/threads/{}/events?after=2", "/threads/{}/artifacts",
               "/threads/{}/state", "/threads/{}/notebook"]
THREAD_POSTS = [("/threads/{}/turns", {"prompt": "what did alice find?"}), ("/threads/{}/cancel", {}),
                ("/threads/{}/export", {}), ("/threads/{}/verify", {})]
ARTIFACT_GETS = ["/artifacts/{}", "/artifacts/{}/content", "/artifacts/{}/content?format=csv", "/artifacts/{}/preview"]


def test_every_path_to_alices_thread_is_404_for_bob(hub, alice_turn):
    tid = alice_turn.thread
    call = next(f.event["call_id"] for f in alice_turn.frames if f.event["type"] == "tool_call")
    for path in [*THREAD_GETS, f"/threads/{{}}/steps/{call}/cell"]:
        _same_as_never(hub, path, tid, NEVER)
        assert status_of(hub, "alice", path.format(tid), user="alice")[0] == 200, path
    for path, body in THREAD_POSTS:
        _same_as_never(hub, path, tid, NEVER, method="POST", body=body)
    # Her own stop and export work on her server: the 404s above are about who asks.
    assert status_of(hub, "alice", f"/threads/{tid}/cancel", user="alice", method="POST", body={}) == \
        (200, {"cancelled": False})
    assert status_of(hub, "alice", f"/threads/{tid}/export", user="alice", method="POST", body={})[0] == 200
    # Bob's refused turn started nothing: alice's thread still has her one turn.
    assert len(hub.request("alice", f"{API}/threads/{tid}")["turns"]) == 1


def test_resuming_alices_stream_is_404_for_bob_and_resumes_for_her(hub, alice_turn):
    tid = alice_turn.thread
    resume = {"Last-Event-ID": "2"}
    with pytest.raises(StreamRefused) as info:
        read_stream(f"{hub.server_url('bob')}{API}/threads/{tid}/events", headers={**hub.headers("bob"), **resume})
    assert (info.value.status, json.loads(info.value.body)["reason"]) == (404, "thread_not_found")
    frames = read_stream(f"{hub.server_url('alice')}{API}/threads/{tid}/events",
                         headers={**hub.headers("alice"), **resume})
    last = alice_turn.frames[-1].event["seq"]
    assert [f.event["seq"] for f in frames] == list(range(3, last + 1))


def test_every_path_to_alices_artifacts_is_404_for_bob(hub, alice_turn):
    artifacts = hub.request("alice", f"{API}/threads/{alice_turn.thread}/artifacts")["artifacts"]
    assert artifacts, "alice's SQL step made a dataset"
    for artifact in artifacts:
        aid = artifact["artifact_id"]
        for path in ARTIFACT_GETS:
            _same_as_never(hub, path, aid, "art_" + "0" * (len(aid) - 4))
            assert status_of(hub, "alice", path.format(aid), user="alice")[0] == 200, path


def test_bob_cannot_reach_alices_server_at_all(hub, alice_turn):
    """The Hub's identity provider keeps each user to their own server: bob's token is not
    let into alice's (before any of the extension's own checks)."""
    status, _ = status_of(hub, "alice", "/threads", user="bob")
    assert status in (401, 403)
    assert status_of(hub, "alice", "/threads", user="alice")[0] == 200


@pytest.fixture(scope="module")
def bob_turn(hub, alice_turn) -> list[Frame]:
    """Bob's turn on his own server, once alice's has run on hers."""
    return read_stream(f"{hub.server_url('bob')}{API}/threads/{alice_turn.bob_thread}/turns", method="POST",
                       headers=hub.headers("bob"), body={"prompt": "total revenue"})


def test_one_model_configured_for_the_servers_answers_every_user_with_its_own_key(model, alice_turn, bob_turn):
    assert alice_turn.frames[-1].event["status"] == bob_turn[-1].event["status"] == "completed"
    # Neither user gave a key: every call, from either server, carried the one configured for them.
    assert len(model.keys) >= 6 and set(model.keys) == {"Bearer scripted"}


def test_both_servers_count_spending_in_the_store_and_only_an_administrator_sees_every_user(hub, alice_turn, bob_turn):
    status, spending = status_of(hub, "alice", "/budget/users", user="alice")
    assert status == 200, spending
    assert [(u["user"], u["calls"]) for u in spending["users"]] == [("alice", 3), ("bob", 3)]
    status, mine = status_of(hub, "bob", "/budget", user="bob")
    assert status == 200 and mine["budgets"][0]["spent_tokens"] == spending["users"][1]["tokens"] > 0
    # Bob owns his server, but its store is everyone's: what it would list is not his to see.
    status, refused = status_of(hub, "bob", "/budget/users", user="bob")
    assert (status, refused["reason"]) == (403, "not_budget_admin")
