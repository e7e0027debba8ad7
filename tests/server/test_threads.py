"""Threads through a real Jupyter server: titled from their first question, renamed, deleted
with what they made (and nothing else), refused while a turn runs."""

from __future__ import annotations

import asyncio
import json

import pytest
from tornado.httpclient import HTTPClientError


SQL = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id ORDER BY region_id"
CHART = "import matplotlib.pyplot as plt\nrevenue.plot.bar(x='region_id', y='revenue')\nplt.show()"
SCRIPT = {"turns": [
    {"match": "slow", "steps": [{"tool_calls": [{"name": "run_python", "arguments": {"code": "import time\ntime.sleep(60)"}}]},
                                {"content": "[scripted model] slept"}]},
    {"match": ".", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": SQL, "name": "revenue"}}]},
        {"tool_calls": [{"name": "run_python", "arguments": {"code": CHART}}]},
        {"content": "[scripted model] revenue by region is charted (`revenue`)"},
    ]},
]}


async def call(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = json.dumps(body)
    return await jp_fetch("analyst", "api", *path, method=method, **kw)


async def as_json(jp_fetch, *path, **kw):
    return json.loads((await call(jp_fetch, *path, **kw)).body)


async def refused(jp_fetch, *path, **kw) -> tuple[int, dict]:
    with pytest.raises(HTTPClientError) as info:
        await call(jp_fetch, *path, **kw)
    return info.value.code, json.loads(info.value.response.body)


async def answered_thread(jp_fetch, prompt: str = "Revenue by region, as a chart please") -> str:
    tid = (await as_json(jp_fetch, "threads", method="POST", body={"source": "sales"}))["thread_id"]
    await call(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": prompt}, request_timeout=120)
    return tid


async def test_a_thread_is_titled_by_its_first_question_until_the_user_renames_it(jp_fetch):
    tid = await answered_thread(jp_fetch, "\nWhich region brings the most revenue?\nAs a chart, please.")
    await call(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "and again"}, request_timeout=120)
    assert (await as_json(jp_fetch, "threads", tid))["title"] == "Which region brings the most revenue?"
    renamed = await as_json(jp_fetch, "threads", tid, method="PATCH", body={"title": "Revenue by region"})
    assert renamed["title"] == "Revenue by region" and renamed["source"] == "sales"
    listed = (await as_json(jp_fetch, "threads"))["threads"]
    assert [(t["thread_id"], t["title"]) for t in listed] == [(tid, "Revenue by region")]
    # A blank title, or one that is not text, is refused before anything changes.
    for body in ({"title": "   "}, {"title": 3}, {}):
        code, error = await refused(jp_fetch, "threads", tid, method="PATCH", body=body)
        assert code == 400, (body, error)
    assert (await as_json(jp_fetch, "threads", tid))["title"] == "Revenue by region"


async def test_deleting_a_thread_removes_what_it_made_and_leaves_another_threads_copy(jp_fetch, jp_serverapp):
    service = jp_serverapp.web_app.settings["jupyter_analyst"]
    workspace = service.workspace
    doomed, kept = await answered_thread(jp_fetch), await answered_thread(jp_fetch)
    doomed_artifacts = (await as_json(jp_fetch, "threads", doomed, "artifacts"))["artifacts"]
    kept_artifacts = (await as_json(jp_fetch, "threads", kept, "artifacts"))["artifacts"]
    assert len(doomed_artifacts) == 2
    # The same query in both threads: the same bytes, one blob.
    shared = {a["fingerprint"] for a in doomed_artifacts} & {a["fingerprint"] for a in kept_artifacts}
    assert shared
    assert service.kernel_of(doomed) is not None, "the thread's kernel is kept between turns"
    folders = [workspace.root / "threads" / doomed, workspace.root / "kernels" / doomed]
    assert all(f.is_dir() for f in folders)

    # A chat of another host (Jupyter AI) answered on this thread: the binding goes with it.
    workspace.store.bind_thread("jupyter-ai", "chat-1", workspace.store.get_thread(doomed))

    deleted = await as_json(jp_fetch, "threads", doomed, method="DELETE")
    assert deleted == {"thread_id": doomed, "artifacts": 2}

    for path in [("threads", doomed), ("threads", doomed, "events"), ("threads", doomed, "artifacts"),
                 ("threads", doomed, "notebook")]:
        code, error = await refused(jp_fetch, *path)
        assert (code, error["reason"]) == (404, "thread_not_found"), path
    for artifact in doomed_artifacts:
        code, _ = await refused(jp_fetch, "artifacts", artifact["artifact_id"], "content")
        assert code == 404
    assert [t["thread_id"] for t in (await as_json(jp_fetch, "threads"))["threads"]] == [kept]
    assert not any(f.exists() for f in folders)
    assert service.kernel_of(doomed) is None
    assert workspace.artifacts.count(doomed) == 0 and workspace.artifacts.steps(doomed) == []
    assert workspace.store.turns(doomed) == [] and workspace.store.last_seq(doomed) == 0
    owner = (await as_json(jp_fetch, "threads", kept))["user"]
    assert workspace.store.bound_thread("jupyter-ai", "chat-1", user=owner) is None
    # The other thread's copy of the same bytes is whole and readable.
    for artifact in kept_artifacts:
        body = (await call(jp_fetch, "artifacts", artifact["artifact_id"], "content")).body
        assert len(body) == artifact["size"]
    # Deleting it again: it is unknown.
    code, error = await refused(jp_fetch, "threads", doomed, method="DELETE")
    assert (code, error["reason"]) == (404, "thread_not_found")


async def test_a_thread_is_not_deleted_while_a_turn_runs_on_it(jp_fetch):
    tid = (await as_json(jp_fetch, "threads", method="POST", body={"source": "sales"}))["thread_id"]
    running = asyncio.ensure_future(
        call(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "slow please"}, request_timeout=120))
    for _ in range(600):  # until the turn is running (bounded)
        if (await as_json(jp_fetch, "threads", tid))["active"]:
            break
        await asyncio.sleep(0.05)
    code, error = await refused(jp_fetch, "threads", tid, method="DELETE")
    assert (code, error["reason"]) == (409, "turn_in_progress") and "cancel" in error["hint"]
    assert await as_json(jp_fetch, "threads", tid, "cancel", method="POST", body={}) == {"cancelled": True}
    await running
    assert (await as_json(jp_fetch, "threads", tid, method="DELETE"))["thread_id"] == tid


async def test_another_users_thread_cannot_be_renamed_or_deleted(jp_fetch, jp_serverapp):
    service = jp_serverapp.web_app.settings["jupyter_analyst"]
    theirs = service.workspace.store.create_thread(user="someone-else", source="x", title="theirs")
    for method, body in (("PATCH", {"title": "mine now"}), ("DELETE", None)):
        code, error = await refused(jp_fetch, "threads", theirs.thread_id, method=method, body=body)
        assert (code, error["reason"]) == (404, "thread_not_found")
    assert service.workspace.store.get_thread(theirs.thread_id).title == "theirs"


async def test_a_link_planted_in_the_kernels_folder_does_not_steer_the_deletion(jp_fetch, jp_serverapp, tmp_path):
    """The model's code can write links into its kernel's folder; deleting the thread
    removes the links, never what they point at."""
    service = jp_serverapp.web_app.settings["jupyter_analyst"]
    victim = tmp_path / "host-files"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me")
    tid = await answered_thread(jp_fetch)
    outputs = service.workspace.root / "kernels" / tid / "outputs"
    outputs.mkdir(exist_ok=True)
    (outputs / "to-host").symlink_to(victim, target_is_directory=True)
    (outputs / "to-file").symlink_to(victim / "precious.txt")
    await as_json(jp_fetch, "threads", tid, method="DELETE")
    assert not (service.workspace.root / "kernels" / tid).exists()
    assert (victim / "precious.txt").read_text() == "keep me"
