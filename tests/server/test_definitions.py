"""``POST threads/{id}/definitions[/preview]``: a turn's suggested metric, shown and then saved
to the server's context folder by an editor; anyone else is 403 before anything is read; the
next turn computing it cites the definition. Nothing is written by a turn or by a preview."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.knowledge import load_team_context
from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step
from jupyter_analyst.testing.identity import MULTI_USER, fetch_as, json_as
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

pytest.importorskip("dbt_semantic_interfaces")

EXAMPLE = Path(__file__).parents[1] / "fixtures" / "context"
SQL = "SELECT SUM(quantity) AS units_shipped FROM orders WHERE quantity > 0 AND region_id = 2"
SCRIPT = {"turns": [{"match": "units", "steps": [sql_step(SQL, "units"), text_step("[scripted model] Counted.")]}]}


@pytest.fixture
def context(tmp_path):
    folder = tmp_path / "team-context"
    shutil.copytree(EXAMPLE, folder)
    return folder


@pytest.fixture
def jp_server_config(tmp_path, sales_db, context):
    with ScriptedModelServer(SCRIPT) as model:
        yield analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, model.base_url, server=MULTI_USER,
                                    context_dir=str(context), context_editors=["ann"])


async def refused(jp_fetch, user, *path, body=None):
    with pytest.raises(HTTPClientError) as info:
        await fetch_as(jp_fetch, user, *path, method="POST", body=body if body is not None else {})
    return info.value.code, json.loads(info.value.response.body)


async def turn_ended(jp_fetch, user, thread):
    await fetch_as(jp_fetch, user, "threads", thread, "turns", method="POST", body={"prompt": "units shipped"})
    events = (await json_as(jp_fetch, user, "threads", thread, "events"))["events"]
    return [e for e in events if e["type"] == "turn_ended"][-1]


async def test_an_editor_sees_then_saves_a_suggested_metric_and_no_one_else_can(jp_fetch, context):
    before = sorted(p.relative_to(context) for p in context.rglob("*"))
    ann = (await json_as(jp_fetch, "ann", "threads", method="POST", body={"source": "sales"}))["thread_id"]
    bob = (await json_as(jp_fetch, "bob", "threads", method="POST", body={"source": "sales"}))["thread_id"]
    ended = await turn_ended(jp_fetch, "ann", ann)
    (suggestion,) = ended["suggestions"]
    assert {k: suggestion[k] for k in ("name", "table", "agg", "expr", "filters")} == {
        "name": "units_shipped", "table": "orders", "agg": "sum", "expr": "quantity",
        "filters": ["quantity > 0", "region_id = 2"]}
    await turn_ended(jp_fetch, "bob", bob)
    for path in ("definitions", "definitions/preview"):
        for thread in (bob, ann):
            code, body = await refused(jp_fetch, "bob", "threads", thread, *path.split("/"))
            assert (code, body["reason"]) == (403, "not_a_context_editor"), (path, thread)
    assert sorted(p.relative_to(context) for p in context.rglob("*")) == before, "nothing written yet"

    preview = await json_as(jp_fetch, "ann", "threads", ann, "definitions", "preview", method="POST", body={})
    assert preview["written"] is False and preview["file"] == "models/units_shipped.yml"
    assert "{{ Dimension('order__region_id') }} = 2" in preview["yaml"]
    assert sorted(p.relative_to(context) for p in context.rglob("*")) == before, "a preview writes nothing"

    made = await fetch_as(jp_fetch, "ann", "threads", ann, "definitions", method="POST", body={})
    saved = json.loads(made.body)
    assert made.code == 201 and saved == {**preview, "written": True}
    assert (context / saved["file"]).read_text() == preview["yaml"]
    metric = load_team_context(context).metric("units_shipped")
    assert metric.formula() == saved["definition"] == "SUM(quantity) FROM orders WHERE quantity > 0 AND region_id = 2"

    from jupyter_analyst.server.openapi import document as openapi
    from jupyter_analyst.server.routes import routes
    import jsonschema

    spec = openapi.build(routes(""))
    jsonschema.validate(saved, {**spec["components"]["schemas"]["SavedMetric"], "components": spec["components"]})

    for body, status, reason in [
        ({}, 409, "definition_exists"),
        ({"index": 3}, 409, "suggestion_not_found"),
        ({"turn": 7}, 409, "turn_not_found"),
        ({"name": "Units!"}, 400, "invalid_name"),
        ({"sql": "SELECT 1"}, 400, "unknown_field"),
    ]:
        code, answer = await refused(jp_fetch, "ann", "threads", ann, "definitions", body=body)
        assert (code, answer["reason"]) == (status, reason), body

    # The next turn computing it follows the definition: cited, no longer suggested.
    again = await turn_ended(jp_fetch, "ann", ann)
    assert again["suggestions"] == []
    assert [(d["kind"], d["name"], d["definition"], d["file"]) for d in again["definitions"]] == [
        ("definition", "units_shipped", "metric", f"team-context/{metric.origin}")]
    turns = (await json_as(jp_fetch, "ann", "threads", ann))["turns"]
    assert [d["name"] for d in turns[-1]["definitions"]] == ["units_shipped"]
