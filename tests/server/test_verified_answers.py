"""``POST threads/{id}/verified-answers`` on a server of several users: an editor's verified
answer lands in the server's context folder (a query file and a suite task), anyone else is
403 before anything of the thread is read; the refusals are the description's."""

from __future__ import annotations

import json

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.knowledge import load_team_context
from jupyter_analyst.server.editors import ContextEditors
from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step
from jupyter_analyst.testing.identity import GROUPS_HEADER, MULTI_USER, fetch_as, json_as
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

QUESTION = "How many orders were not cancelled?"
SQL = "SELECT count(*) AS n FROM orders WHERE quantity > 0"
SCRIPT = {"turns": [{"match": "not cancelled", "steps": [sql_step(SQL, "n"), text_step("[scripted model] Counted.")]}]}


@pytest.fixture
def context(tmp_path):
    return tmp_path / "team-context"


@pytest.fixture
def jp_server_config(tmp_path, sales_db, context):
    with ScriptedModelServer(SCRIPT) as model:
        yield analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, model.base_url, server=MULTI_USER,
                                    context_dir=str(context), context_editors=["ann", "group:analysts"])


async def refused(jp_fetch, user, *path, body=None, headers=None):
    with pytest.raises(HTTPClientError) as info:
        await fetch_as(jp_fetch, user, *path, method="POST", body=body if body is not None else {}, headers=headers)
    return info.value.code, json.loads(info.value.response.body)


async def answered_thread(jp_fetch, user):
    thread = await json_as(jp_fetch, user, "threads", method="POST", body={"source": "sales"})
    await fetch_as(jp_fetch, user, "threads", thread["thread_id"], "turns", method="POST", body={"prompt": QUESTION})
    return thread["thread_id"]


async def test_an_editor_verifies_an_answer_and_no_one_else_can(jp_fetch, jp_serverapp, context, sales_db,
                                                                 monkeypatch):
    ann = await answered_thread(jp_fetch, "ann")
    bob = await answered_thread(jp_fetch, "bob")
    # Bob is no editor: 403 for his own thread and for ann's alike (nothing says hers exists).
    for thread in (bob, ann, "thr_0000000000000000"):
        code, body = await refused(jp_fetch, "bob", "threads", thread, "verified-answers")
        assert (code, body["reason"]) == (403, "not_a_context_editor"), thread
    assert not context.exists()
    # Set, the folder is offered to every user (made when the first answer is verified).
    assert (await json_as(jp_fetch, "bob", "config"))["context"] == {"configured": True}

    made = await fetch_as(jp_fetch, "ann", "threads", ann, "verified-answers", method="POST", body={})
    assert made.code == 201
    verified = json.loads(made.body)
    import duckdb

    expected = duckdb.connect(str(sales_db), read_only=True).execute(SQL).fetchone()[0]
    assert {k: verified[k] for k in ("turn", "question", "gold_sql", "answer", "source", "verified_by", "tolerance")} \
        == {"turn": 1, "question": QUESTION, "gold_sql": SQL, "answer": expected, "source": "sales",
            "verified_by": "ann", "tolerance": 0.0}
    (query,) = load_team_context(context).queries
    assert (query.file, query.questions, query.verified_by) == (verified["query_file"], [QUESTION], "ann")
    (task,) = [json.loads(line) for line in (context / "suite.jsonl").read_text().splitlines()]
    assert (task["id"], task["answer"], task["source"]) == (verified["task_id"], expected, "sales")
    # The reply is the description's.
    from jupyter_analyst.server.openapi import document as openapi
    from jupyter_analyst.server.routes import routes
    import jsonschema

    spec = openapi.build(routes(""))
    schema = {**spec["components"]["schemas"]["VerifiedAnswer"], "components": spec["components"]}
    jsonschema.validate(verified, schema)

    # A member of an editors' group may verify too, but only threads of their own.
    code, body = await refused(jp_fetch, "carol", "threads", ann, "verified-answers",
                               headers={GROUPS_HEADER: "analysts"})
    assert (code, body["reason"]) == (404, "thread_not_found")

    # The refusals of an editor's request.
    for body, status, reason in [
        ({"name": verified["task_id"]}, 409, "query_exists"),
        ({"turn": 9}, 409, "turn_not_found"),
        ({"step": "call_nope"}, 409, "step_not_found"),
        ({"turn": "1"}, 400, "invalid_turn"),
        ({"name": "../up"}, 400, "invalid_name"),
        ({"extra": 1}, 400, "unknown_field"),
    ]:
        code, answer = await refused(jp_fetch, "ann", "threads", ann, "verified-answers", body=body)
        assert (code, answer["reason"]) == (status, reason), body
    assert len((context / "suite.jsonl").read_text().splitlines()) == 1

    # Unset, the editors are the server's own user: the Hub user it was started for.
    settings = jp_serverapp.web_app.settings
    settings["jupyter_analyst_editors"] = ContextEditors.configured(None)
    code, _ = await refused(jp_fetch, "ann", "threads", ann, "verified-answers")
    assert code == 403
    monkeypatch.setenv("JUPYTERHUB_USER", "ann")
    settings["jupyter_analyst_editors"] = ContextEditors.configured(None)
    again = await fetch_as(jp_fetch, "ann", "threads", ann, "verified-answers", method="POST", body={})
    assert again.code == 201 and json.loads(again.body)["task_id"] == f"{verified['task_id']}_2"
