"""The server extension through a real Jupyter server (pytest-jupyter's jp_fetch), a real
kernel and the scripted model over HTTP."""

from __future__ import annotations

import asyncio
import json
import re

import nbformat
import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.events import parse_events

SQL = ("SELECT r.region, SUM(o.revenue) AS revenue FROM orders o JOIN regions r "
       "ON o.region_id = r.region_id GROUP BY r.region ORDER BY r.region")
CHART = "import matplotlib.pyplot as plt\nrevenue.plot.bar(x='region', y='revenue')\nplt.show()\nprint(len(revenue))"
SCRIPT = {"turns": [
    {"match": "slow", "steps": [{"tool_calls": [{"name": "run_python", "arguments": {"code": "import time\ntime.sleep(30)"}}]},
                                {"content": "[scripted model] slept"}]},
    {"match": ".", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": SQL, "name": "revenue"}}]},
        {"tool_calls": [{"name": "run_python", "arguments": {"code": CHART}}]},
        {"content": "[scripted model] revenue by region is charted"},
    ]},
]}


async def call(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = json.dumps(body)
    response = await jp_fetch("analyst", "api", *path, method=method, **kw)
    return response


async def as_json(jp_fetch, *path, **kw):
    return json.loads((await call(jp_fetch, *path, **kw)).body)


async def new_thread(jp_fetch):
    return await as_json(jp_fetch, "threads", method="POST", body={"source": "sales", "title": "t"})


async def test_sources_and_threads(jp_fetch):
    sources = await as_json(jp_fetch, "sources")
    assert sources == {"sources": [{"name": "sales", "kind": "path"}]}
    thread = await new_thread(jp_fetch)
    assert thread["thread_id"].startswith("thr_") and thread["source"] == "sales"
    listed = await as_json(jp_fetch, "threads")
    assert [t["thread_id"] for t in listed["threads"]] == [thread["thread_id"]]
    one = await as_json(jp_fetch, "threads", thread["thread_id"])
    assert one["turns"] == [] and one["active"] is False and one["last_seq"] == 0


async def test_turn_streams_numbered_events_and_everything_is_served(jp_fetch):
    thread = await new_thread(jp_fetch)
    tid = thread["thread_id"]
    response = await call(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "revenue by region"})
    assert response.headers["Content-Type"].startswith("text/event-stream")
    events = parse_events(response.body.decode())
    stored = (await as_json(jp_fetch, "threads", tid, "events"))["events"]
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(set(seqs)) and seqs[-1] == stored[-1]["seq"]
    # Only text deltas may be merged on the way; every other event arrives as stored.
    assert [e for e in events if e["type"] != "text_delta"] == [e for e in stored if e["type"] != "text_delta"]
    def text(evs):
        return "".join(e["text"] for e in evs if e["type"] == "text_delta")

    assert text(events) == text(stored)
    assert events[0]["type"] == "turn_started" and events[-1]["type"] == "turn_ended"
    assert events[-1]["status"] == "completed"
    assert "id: 1\n" in response.body.decode()
    events = stored

    arts = (await as_json(jp_fetch, "threads", tid, "artifacts"))["artifacts"]
    assert {a["type"] for a in arts} == {"dataset", "image"}
    image = next(a for a in arts if a["type"] == "image")
    assert (await as_json(jp_fetch, "artifacts", image["artifact_id"]))["fingerprint"] == image["fingerprint"]
    content = await call(jp_fetch, "artifacts", image["artifact_id"], "content")
    assert content.headers["Content-Type"] == "image/png" and content.body.startswith(b"\x89PNG")
    nb = nbformat.reads((await call(jp_fetch, "threads", tid, "notebook")).body.decode(), as_version=4)
    nbformat.validate(nb)
    # The thread's audit notebook: a summary, then the steps, with the manifest verify checks.
    assert nb.cells[0].metadata["jupyter_analyst"]["role"] == "summary"
    assert {e["type"] for e in nb.metadata["jupyter_analyst"]["manifest"]} == {"dataset", "image"}

    # Resume: the events after N, as JSON and as a stream, with no gap and no duplicate.
    middle = events[len(events) // 2]["seq"]
    tail = (await as_json(jp_fetch, "threads", tid, "events", params={"after": middle}))["events"]
    assert [e["seq"] for e in tail] == [e["seq"] for e in events if e["seq"] > middle]
    streamed = await call(jp_fetch, "threads", tid, "events",
                          headers={"Accept": "text/event-stream", "Last-Event-ID": str(middle)})
    assert [e["seq"] for e in parse_events(streamed.body.decode())] == [e["seq"] for e in tail]


async def test_second_turn_is_refused_while_one_runs_and_cancel_keeps_what_was_done(jp_fetch, monkeypatch):
    from jupyter_analyst.server import sse

    monkeypatch.setattr(sse, "HEARTBEAT_S", 0.1)
    thread = await new_thread(jp_fetch)
    tid = thread["thread_id"]
    first = asyncio.ensure_future(call(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "slow please"}))
    for _ in range(600):  # until the turn is running (bounded)
        if (await as_json(jp_fetch, "threads", tid))["active"]:
            break
        await asyncio.sleep(0.05)
    with pytest.raises(HTTPClientError) as info:
        await call(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "again"})
    assert info.value.code == 409
    assert json.loads(info.value.response.body)["reason"] == "turn_in_progress"
    # Wait for the Python step to start, then press stop.
    for _ in range(600):
        events = (await as_json(jp_fetch, "threads", tid, "events"))["events"]
        if any(e["type"] == "tool_call" for e in events):
            break
        await asyncio.sleep(0.05)
    # A second client follows the same turn; while nothing happens it gets heartbeats.
    heartbeat = asyncio.Event()
    chunks: list[bytes] = []

    def on_chunk(data: bytes) -> None:
        chunks.append(data)
        if b": heartbeat" in data:
            heartbeat.set()

    follower = asyncio.ensure_future(call(jp_fetch, "threads", tid, "events", headers={"Accept": "text/event-stream"},
                                          streaming_callback=on_chunk, request_timeout=120))
    await asyncio.wait_for(heartbeat.wait(), 30)
    assert await as_json(jp_fetch, "threads", tid, "cancel", method="POST", body={}) == {"cancelled": True}
    await follower
    followed = parse_events(b"".join(chunks).decode())
    assert followed[-1]["type"] == "turn_ended" and followed[-1]["status"] == "interrupted"
    streamed = parse_events((await first).body.decode())
    assert streamed[-1]["type"] == "turn_ended" and streamed[-1]["status"] == "interrupted"
    turns = (await as_json(jp_fetch, "threads", tid))["turns"]
    assert turns[-1]["status"] == "interrupted"


async def test_another_users_thread_is_404(jp_fetch, jp_serverapp):
    service = jp_serverapp.web_app.settings["jupyter_analyst"]
    theirs = service.workspace.store.create_thread(user="someone-else", source="x")
    for path in [("threads", theirs.thread_id), ("threads", theirs.thread_id, "events"),
                 ("threads", theirs.thread_id, "artifacts"), ("threads", theirs.thread_id, "notebook")]:
        with pytest.raises(HTTPClientError) as info:
            await call(jp_fetch, *path)
        assert info.value.code == 404
        assert json.loads(info.value.response.body)["reason"] == "thread_not_found"
    art, _ = service.workspace.artifacts.add_bytes(b"secret", thread_id=theirs.thread_id, name="s.txt", type="text",
                                                   mime="text/plain", producer="python")
    for path in [("artifacts", art.artifact_id), ("artifacts", art.artifact_id, "content")]:
        with pytest.raises(HTTPClientError) as info:
            await call(jp_fetch, *path)
        assert info.value.code == 404
    assert theirs.thread_id not in json.dumps(await as_json(jp_fetch, "threads"))


def every_operation(thread_id: str) -> list[tuple[str, tuple[str, ...]]]:
    """Every (method, path) of the description, its ids filled in (real or not: the
    credentials are judged before the path's resource)."""
    from jupyter_analyst.server.openapi import document as openapi
    from jupyter_analyst.server.routes import routes

    ids = {"thread_id": thread_id, "artifact_id": "art_0", "call_id": "call_0", "verification_id": "ver_0",
           "proposal_id": "prop_0", "turn_id": "turn_0"}
    return [(method.upper(), tuple(path.format(**ids).strip("/").split("/")))
            for path, item in openapi.build(routes(""))["paths"].items() for method in item]


async def test_without_credentials_every_operation_is_401_whatever_its_method(jp_fetch):
    """A POST without credentials is not refused for its missing XSRF token (403): like a GET,
    it is 401 with how to authenticate, as the description says of every operation."""
    tid = (await new_thread(jp_fetch))["thread_id"]
    operations = every_operation(tid)
    assert {m for m, _ in operations} == {"GET", "POST", "PATCH", "DELETE"}
    for method, path in operations:
        with pytest.raises(HTTPClientError) as info:
            await call(jp_fetch, *path, method=method, body={} if method in ("POST", "PATCH") else None,
                       headers={"Authorization": ""})
        assert info.value.code == 401, (method, path)
        assert info.value.response.headers["WWW-Authenticate"].startswith("token"), (method, path)
        assert json.loads(info.value.response.body)["message"] == "Unauthorized"
    # A wrong token is no credential either.
    with pytest.raises(HTTPClientError) as info:
        await call(jp_fetch, "threads", method="POST", body={}, headers={"Authorization": "token wrong"})
    assert info.value.code == 401


async def test_a_session_cookie_without_its_xsrf_token_is_403_on_every_change(jp_fetch):
    tid = (await new_thread(jp_fetch))["thread_id"]
    first = await call(jp_fetch, "sources")  # token-authenticated: the server sets its login cookie
    login = first.headers.get_list("Set-Cookie")[0].split(";")[0]
    assert (await call(jp_fetch, "sources", headers={"Authorization": "", "Cookie": login})).code == 200
    changes = [(method, path) for method, path in every_operation(tid) if method != "GET"]
    assert sorted({m for m, _ in changes}) == ["DELETE", "PATCH", "POST"] and len(changes) == 13
    for method, path in changes:
        body = None if method == "DELETE" else {}
        with pytest.raises(HTTPClientError) as info:
            await call(jp_fetch, *path, method=method, body=body, headers={"Authorization": "", "Cookie": login})
        assert info.value.code == 403, path
        assert "_xsrf" in json.loads(info.value.response.body)["message"]
        # A wrong token beside the cookie: the cookie authenticates, the XSRF check still applies.
        with pytest.raises(HTTPClientError) as info:
            await call(jp_fetch, *path, method=method, body=body,
                       headers={"Authorization": "token wrong", "Cookie": login})
        assert info.value.code == 403, path
    assert (await as_json(jp_fetch, "threads", tid))["thread_id"] == tid, "the thread was not deleted"
    ok = await call(jp_fetch, "threads", method="POST", body={},
                    headers={"Authorization": "", "Cookie": f"{login}; _xsrf=abc123", "X-XSRFToken": "abc123"})
    assert ok.code == 201
    # The token needs no XSRF token.
    assert (await call(jp_fetch, "threads", method="POST", body={})).code == 201


async def test_a_refusal_that_is_not_about_credentials_stays_403(jp_fetch):
    """A request for a host the server does not answer for (DNS rebinding) is 403 with or
    without credentials: only missing credentials are 401."""
    for auth in ("", None):
        headers = {"Host": "rebound.example"} | ({"Authorization": auth} if auth is not None else {})
        for method in ("GET", "POST"):
            with pytest.raises(HTTPClientError) as info:
                await call(jp_fetch, "threads", method=method, body={} if method == "POST" else None, headers=headers)
            assert info.value.code == 403, (auth, method)


async def test_bad_input(jp_fetch):
    thread = await new_thread(jp_fetch)
    for body, reason in [({"prompt": ""}, "empty_prompt"), ({"prompt": 5}, "empty_prompt")]:
        with pytest.raises(HTTPClientError) as info:
            await call(jp_fetch, "threads", thread["thread_id"], "turns", method="POST", body=body)
        assert info.value.code == 400 and json.loads(info.value.response.body)["reason"] == reason
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("analyst", "api", "threads", method="POST", body="{not json")
    assert info.value.code == 400
    with pytest.raises(HTTPClientError) as info:
        await call(jp_fetch, "threads", thread["thread_id"], "events", params={"after": "x"})
    assert info.value.code == 400
    with pytest.raises(HTTPClientError) as info:
        await call(jp_fetch, "threads", thread["thread_id"], "notebook")
    assert info.value.code == 409 and json.loads(info.value.response.body)["reason"] == "notebook_not_found"


async def test_openapi_description_ships(jp_fetch):
    import yaml

    spec = yaml.safe_load((await call(jp_fetch, "openapi.yaml")).body)
    from jupyter_analyst.server.methods import declared_methods
    from jupyter_analyst.server.routes import routes

    served = {re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", pattern).removeprefix("/analyst/api")
              for pattern, handler in routes("/") if declared_methods(handler)}
    assert served == set(spec["paths"])


def test_text_deltas_coalesce_under_backpressure_and_nothing_else_does():
    from jupyter_analyst.events import StateChanged, TextDelta
    from jupyter_analyst.server.sse import coalesce

    queue: asyncio.Queue = asyncio.Queue()
    for seq, text in [(2, "b"), (3, "c")]:
        queue.put_nowait(TextDelta(seq=seq, turn_id="t", text=text))
    queue.put_nowait(StateChanged(seq=4, turn_id="t", from_state="planning", to_state="presenting"))
    queue.put_nowait(TextDelta(seq=5, turn_id="t", text="d"))
    merged, held = coalesce(TextDelta(seq=1, turn_id="t", text="a"), queue)
    assert (merged.seq, merged.text) == (3, "abc")
    assert [(e.type, e.seq) for e in held] == [("state", 4)]
    assert queue.qsize() == 1


def test_coalescing_keeps_the_end_of_a_stream_and_merges_a_repeated_delta_once():
    """The end (``None``: the turn's task failed) taken while merging still ends the stream,
    and a delta handed on twice is written once."""
    from jupyter_analyst.events import TextDelta
    from jupyter_analyst.server.sse import coalesce

    queue: asyncio.Queue = asyncio.Queue()
    for event in (TextDelta(seq=2, turn_id="t", text="b"), TextDelta(seq=2, turn_id="t", text="b"), None):
        queue.put_nowait(event)
    merged, held = coalesce(TextDelta(seq=1, turn_id="t", text="a"), queue)
    assert (merged.seq, merged.text, held) == (2, "ab", [None])


async def test_agent_state_is_served_when_asked(jp_fetch):
    thread = await new_thread(jp_fetch)
    tid = thread["thread_id"]
    await call(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "revenue by region"})
    state = await as_json(jp_fetch, "threads", tid, "state")
    datasets = [e for e in state["entities"].values() if e["kind"] == "dataset"]
    assert datasets and datasets[0]["detail"]["artifact_id"].startswith("art_")
    assert state["active"]["dataset"]["value"] == datasets[-1]["name"]
    # Never part of the chat: no event carries it.
    events = (await as_json(jp_fetch, "threads", tid, "events"))["events"]
    assert not any("entities" in json.dumps(e) for e in events)
