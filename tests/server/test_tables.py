"""An empty thread's offer through a real Jupyter server: the tables of its source as the
model is told of them, with their row counts, and questions to start from; another user's
thread is unknown."""

from __future__ import annotations

import json
from importlib import resources

import duckdb
import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.testing import ScriptedModelServer
from jupyter_analyst.testing.identity import MULTI_USER, json_as
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

@pytest.fixture(params=["scripted", "other"])
def model_kind(request):
    return request.param


@pytest.fixture
def jp_server_config(tmp_path, sales_db, model_kind):
    with ScriptedModelServer({"turns": []}) as model:
        # A model by another name at the same endpoint is not the scripted one.
        other = {"model": "gpt-4o-mini"} if model_kind == "other" else {}
        yield analyst_server_config(
            tmp_path / "ws", {"sales": str(sales_db)}, model.base_url, **other,
            server=MULTI_USER,
        )


async def test_an_empty_thread_lists_its_tables_and_questions(jp_fetch, sales_db, model_kind):
    thread = await json_as(jp_fetch, "ann", "threads", method="POST", body={"source": "sales"})
    offer = await json_as(jp_fetch, "ann", "threads", thread["thread_id"], "tables")

    with duckdb.connect(str(sales_db), read_only=True) as db:
        names = [n for (n,) in db.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()]
        counts = {n: db.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}
    assert offer["source"] == "sales" and offer["more"] == 0
    assert {t["name"]: t["rows"] for t in offer["tables"]} == counts
    if model_kind == "scripted":
        script = json.loads((resources.files("jupyter_analyst") / "data" / "lab_script.json").read_text())
        assert offer["suggestions"] == script["suggestions"]
    else:
        first = offer["tables"][0]["name"]
        assert offer["suggestions"][0] == f"What does the {first} table hold?"
        assert len(offer["suggestions"]) == 3

    # Another user's thread is unknown, as every route of a thread.
    with pytest.raises(HTTPClientError) as info:
        await json_as(jp_fetch, "bob", "threads", thread["thread_id"], "tables")
    assert (info.value.code, json.loads(info.value.response.body)["reason"]) == (404, "thread_not_found")
