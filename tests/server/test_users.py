"""Two real user identities on one server: each sees only their own threads and artifacts.
The server runs with allow_unauthenticated_access=False, and our handlers raise no warning."""

from __future__ import annotations

import json

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.testing.identity import HEADER, MULTI_USER, json_as
from jupyter_analyst.testing.servers.jupyter import analyst_server_config
from jupyter_analyst.testing import ScriptedModelServer


@pytest.fixture
def jp_server_config(tmp_path, sales_db):
    with ScriptedModelServer({"turns": []}) as model:
        yield analyst_server_config(
            tmp_path / "ws", {"sales": str(sales_db)}, model.base_url, summarizer=True,
            server=MULTI_USER,
        )


async def test_each_user_sees_only_their_own(jp_fetch, jp_serverapp):
    ann = await json_as(jp_fetch, "ann", "threads", method="POST", body={"source": "sales"})
    bob = await json_as(jp_fetch, "bob", "threads", method="POST", body={"source": "sales"})
    assert ann["user"] == "ann" and bob["user"] == "bob"
    assert [t["thread_id"] for t in (await json_as(jp_fetch, "ann", "threads"))["threads"]] == [ann["thread_id"]]
    service = jp_serverapp.web_app.settings["jupyter_analyst"]
    art, _ = service.workspace.artifacts.add_bytes(b"ann's", thread_id=ann["thread_id"], name="a.txt", type="text",
                                                   mime="text/plain", producer="python")
    for path in [("threads", ann["thread_id"]), ("threads", ann["thread_id"], "events"),
                 ("threads", ann["thread_id"], "artifacts"), ("artifacts", art.artifact_id),
                 ("artifacts", art.artifact_id, "content"), ("artifacts", art.artifact_id, "preview")]:
        with pytest.raises(HTTPClientError) as info:
            await json_as(jp_fetch, "bob", *path)
        assert info.value.code == 404, path
        assert (await jp_fetch("analyst", "api", *path, headers={HEADER: "ann", "Authorization": ""})).code == 200
    # The audit notebook's calls: another user's thread is unknown before anything is read.
    for path in [("threads", ann["thread_id"], "export"), ("threads", ann["thread_id"], "verify")]:
        with pytest.raises(HTTPClientError) as info:
            await json_as(jp_fetch, "bob", *path, method="POST", body={})
        assert info.value.code == 404, path
    with pytest.raises(HTTPClientError) as info:
        await json_as(jp_fetch, "bob", "threads", ann["thread_id"], "steps", "call_1", "cell")
    assert (info.value.code, json.loads(info.value.response.body)["reason"]) == (404, "thread_not_found")
    with pytest.raises(HTTPClientError) as info:
        await json_as(jp_fetch, "bob", "threads", ann["thread_id"], "cancel", method="POST", body={})
    assert info.value.code == 404
    # Ann's proposed cells: bob can neither list nor decide on them, nor revert her turns.
    service.workspace.store.record_proposal(ann["thread_id"], "turn_1", "prop_1", "nb.ipynb",
                                            {"proposal_id": "prop_1", "changes": []})
    for path, body in [(("proposals",), None), (("proposals", "prop_1", "accept"), {"cell_ids": "all"}),
                       (("proposals", "prop_1", "reject"), {"cell_ids": "all"}), (("turns", "turn_1", "revert"), {})]:
        with pytest.raises(HTTPClientError) as info:
            await json_as(jp_fetch, "bob", "threads", ann["thread_id"], *path,
                          **({"method": "POST", "body": body} if body is not None else {}))
        assert (info.value.code, json.loads(info.value.response.body)["reason"]) == (404, "thread_not_found"), path


async def test_nobody_gets_401(jp_fetch):
    with pytest.raises(HTTPClientError) as info:
        await jp_fetch("analyst", "api", "threads", headers={"Authorization": ""})
    assert info.value.code == 401


async def test_every_handler_is_authenticated(jp_fetch, jp_serverapp):
    from jupyter_analyst.server.routes import routes

    assert jp_serverapp.allow_unauthenticated_access is False
    for pattern, handler in routes("/"):
        assert jp_serverapp.web_app._check_handler_auth(pattern, handler) == [], pattern
    assert (await json_as(jp_fetch, "ann", "sources"))["sources"][0]["name"] == "sales"
