"""The panel's "Re-answer on today's data", through a real Jupyter server: ``POST verify`` with
``reanswer`` re-runs the thread's notebook on its source after one row changed, and the
finished verification restates exactly the cited numbers that depend on that row, old ->
new, with the re-answered notebook written beside the export in the user's folder. A thread
whose answer cites nothing, and a bad body, are refused before anything runs."""

from __future__ import annotations

import json

import duckdb
import nbformat
import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.events import parse_events
from jupyter_analyst.notebooks.trail import META
from jupyter_analyst.server.replies import Verification
from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

SQL = "SELECT cat, count(*) AS n, sum(value) AS total FROM items GROUP BY cat ORDER BY cat"
ANSWER = "alpha totals 45.0 and beta 33.0, a gap of 12.0; gamma totals 39.0, up 37% on last year."
SCRIPT = {"turns": [
    {"match": "totals", "steps": [sql_step(SQL, "by_cat"), text_step(ANSWER)]},
    {"match": ".", "steps": [text_step("[scripted model] Hello: ask me about the items.")]},
]}


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "items.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE items AS SELECT i AS id, ['alpha', 'beta', 'gamma'][i % 3 + 1] AS cat, "
                    "i * 1.5 AS value FROM range(1, 13) t(i)")
    return path


@pytest.fixture
def jp_server_config(tmp_path, db):
    with ScriptedModelServer(SCRIPT) as server:
        yield analyst_server_config(tmp_path / "ws", {"items": str(db)}, server.base_url)


@pytest.fixture
def service(jp_serverapp):
    return jp_serverapp.web_app.settings["jupyter_analyst"]


async def api(jp_fetch, *path, method="GET", body=None):
    kw = {"body": json.dumps(body)} if body is not None else {}
    return json.loads((await jp_fetch("analyst", "api", *path, method=method, **kw)).body)


async def refused(jp_fetch, *path, body) -> tuple[int, dict]:
    with pytest.raises(HTTPClientError) as info:
        await api(jp_fetch, *path, method="POST", body=body)
    return info.value.code, json.loads(info.value.response.body)


async def thread_asking(jp_fetch, prompt: str) -> str:
    tid = (await api(jp_fetch, "threads", method="POST", body={"source": "items", "title": "Totals"}))["thread_id"]
    response = await jp_fetch("analyst", "api", "threads", tid, "turns", method="POST",
                              body=json.dumps({"prompt": prompt}))
    events = parse_events(response.body.decode())
    assert events[-1]["type"] == "turn_ended" and events[-1]["status"] == "completed", events[-1]
    return tid


async def test_one_changed_row_restates_exactly_the_numbers_that_depend_on_it(jp_fetch, jp_root_dir, db, service):
    tid = await thread_asking(jp_fetch, "totals by category?")
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE items SET value = 20 WHERE id = 12")  # alpha: 45.0 -> 47.0

    response = await jp_fetch("analyst", "api", "threads", tid, "verify", method="POST",
                              body=json.dumps({"reanswer": True}))
    started = json.loads(response.body)
    assert response.code == 202 and started["kind"] == "reanswer" and started["reanswer"] is None
    await service.verifications.wait(started["verification_id"])
    done = await api(jp_fetch, "threads", tid, "verifications", started["verification_id"])
    assert done["status"] == "done", done
    assert str(db) not in json.dumps(done)  # the source by its configured name only
    Verification.model_validate(done)  # as the API's description says it is

    restated = done["reanswer"]
    assert (restated["source"], restated["notebook"]) == ("items", None)
    (answer,) = restated["answers"]
    assert answer["original"] == ANSWER, json.dumps(done, indent=1)[:6000]
    assert answer["answer"] == ANSWER.replace("45.0", "47.0").replace("12.0", "14.0"), json.dumps(done)[:5000]
    assert "47.0 (was 45.0)" in answer["marked"] and "14.0 (was 12.0)" in answer["marked"]
    claims = {c["text"]: c for c in answer["claims"]}
    changed = sorted((c["text"], c["new_text"]) for c in answer["claims"] if c["status"] == "changed")
    assert changed == [("12.0", "14.0"), ("45.0", "47.0")]
    assert (claims["45.0"]["old"], claims["45.0"]["new"]) == (45.0, 47.0)
    assert (claims["45.0"]["row"], claims["45.0"]["column"], claims["12.0"]["derived"]) == (0, "total", "difference")
    assert [claims[t]["status"] for t in ("33.0", "39.0", "37%")] == ["unchanged", "unchanged", "not_rechecked"]
    # The names cited beside the numbers (alpha, beta, gamma) are the same today.
    assert restated["counts"] == {"changed": 2, "unchanged": 5, "gone": 0, "not_rechecked": 1}
    # Each claim says where it stands in the restated text, so a client marks it there.
    for claim in answer["claims"]:
        assert answer["answer"][claim["start"]:claim["end"]] == claim["new_text"], claim

    # The re-run's own report stands beside it: the dataset changed with the data.
    report = done["report"]
    assert report["ok"] is False and report["source"] == "items" and "causes" not in report
    (check,) = [c for c in report["checks"] if c["name"] == "by_cat"]
    assert (check["status"], check["cause"]) == ("changed", "data_changed")

    # Written beside the default export, in the user's folder, today's values in its answer.
    assert restated["output"] == f"analyst/totals-{tid[-8:]}.reanswered.ipynb" and restated["output_refused"] is None
    nb = nbformat.read(jp_root_dir / restated["output"], as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get(META, {}).get("role") == "answer"]
    assert "47.0 (was 45.0)" in cell.source and "`45.0` -> `47.0`: changed" in cell.source
    assert cell.metadata[META]["receipts"]["answer"] == answer["answer"]


async def test_a_reanswer_is_refused_without_an_answer_citing_a_number_or_with_a_bad_body(jp_fetch, jp_root_dir):
    tid = await thread_asking(jp_fetch, "hello")
    status, error = await refused(jp_fetch, "threads", tid, "verify", body={"reanswer": True})
    assert (status, error["reason"]) == (409, "no_receipts")
    assert "no answer with receipts" in error["message"] and error["hint"]
    # Verify alone still runs it: only the re-answer needs cited numbers.
    started = await api(jp_fetch, "threads", tid, "verify", method="POST", body={})
    assert started["kind"] == "verify"

    other = await thread_asking(jp_fetch, "totals by category?")
    for bad in ("yes", 1, None):
        status, error = await refused(jp_fetch, "threads", other, "verify", body={"reanswer": bad})
        assert (status, error["reason"], error["field"]) == (400, "invalid_reanswer", "reanswer"), bad
    # A notebook whose receipts were edited to cite a step it does not hold is refused too.
    path = (await api(jp_fetch, "threads", other, "export", method="POST", body={}))["path"]
    nb = nbformat.read(jp_root_dir / path, as_version=4)
    (cell,) = [c for c in nb.cells if c.metadata.get(META, {}).get("role") == "answer"]
    cell.metadata[META]["receipts"]["citations"][0]["call_id"] = "call_forged"
    nbformat.write(nb, jp_root_dir / path)
    status, error = await refused(jp_fetch, "threads", other, "verify", body={"path": path, "reanswer": True})
    assert (status, error["reason"]) == (409, "receipts_invalid"), error
    assert not (jp_root_dir / path.replace(".ipynb", ".reanswered.ipynb")).exists()
