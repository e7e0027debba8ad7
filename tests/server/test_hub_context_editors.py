"""Who may add to the team's context folder, on a real JupyterHub: each user's own server
(with the extension) names its user, and the Hub's groups, from the user's own Hub token;
``c.AnalystApp.context_editors`` names alice and the group ``analysts`` (carol's).

Bob, neither named nor in the group, is refused 403 on his own server and his own thread,
and nothing is written; alice (by name) and carol (by her Hub group) each land a verified
answer in the one context folder every server reads.
"""

from __future__ import annotations

import json
import urllib.error

import pytest

from jupyter_analyst.knowledge import load_team_context
from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step
from jupyter_analyst.testing.servers.hub import HubProcess, HubUnavailable

QUESTION = "How many orders were not cancelled?"
SQL = "SELECT count(*) AS n FROM orders WHERE quantity > 0"
SCRIPT = {"turns": [{"match": "not cancelled", "steps": [sql_step(SQL, "n"), text_step("[scripted model] Counted.")]}]}
API = "/analyst/api"

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def context(tmp_path_factory):
    return tmp_path_factory.mktemp("team") / "context"


@pytest.fixture(scope="module")
def hub(sales_db, context, tmp_path_factory):
    with ScriptedModelServer(SCRIPT) as model:
        analyst = {"sources": {"sales": str(sales_db)}, "model_base_url": model.base_url, "pool_size": 0,
                   "summarizer": False, "context_dir": str(context),
                   "context_editors": ["alice", "group:analysts"]}
        try:
            team = HubProcess(tmp_path_factory.mktemp("hub"), users=["alice", "bob", "carol"], analyst=analyst,
                              groups={"analysts": ["carol"]})
        except HubUnavailable as exc:
            pytest.skip(f"a real JupyterHub is needed: {exc}")
        with team:
            team.spawn("alice", "bob", "carol")
            yield team


def answered_thread(hub: HubProcess, user: str) -> str:
    """A thread of ``user``'s on their own server, its one turn completed."""
    thread = hub.request(user, API + "/threads", method="POST", body={"source": "sales"})["thread_id"]
    ended = hub.request(user, f"{API}/threads/{thread}/turns", method="POST", body={"prompt": QUESTION}, raw=True)
    assert b'"completed"' in ended
    return thread


def verify(hub: HubProcess, user: str, thread: str) -> tuple[int, dict]:
    try:
        data = hub.request(user, f"{API}/threads/{thread}/verified-answers", method="POST", body={}, raw=True)
        return 201, json.loads(data)
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_a_non_editor_is_refused_and_editors_by_name_and_by_group_land(hub, context):
    bob = answered_thread(hub, "bob")
    status, body = verify(hub, "bob", bob)
    assert (status, body["reason"]) == (403, "not_a_context_editor")
    assert not (context / "suite.jsonl").exists(), "a refused verification writes nothing"

    status, alice = verify(hub, "alice", answered_thread(hub, "alice"))
    assert status == 201, alice
    assert alice["verified_by"] == "alice"

    # Carol is named nowhere: only her Hub group makes her an editor.
    status, carol = verify(hub, "carol", answered_thread(hub, "carol"))
    assert status == 201, carol
    assert carol["verified_by"] == "carol" and carol["task_id"] == f"{alice['task_id']}_2"

    queries = sorted(load_team_context(context).queries, key=lambda q: q.file)
    assert [(q.file, q.verified_by) for q in queries] == [(alice["query_file"], "alice"),
                                                          (carol["query_file"], "carol")]
    tasks = [json.loads(line)["id"] for line in (context / "suite.jsonl").read_text().splitlines()]
    assert tasks == [alice["task_id"], carol["task_id"]]
    # Bob is still refused after the folder exists: what the others did gives him nothing.
    assert verify(hub, "bob", bob)[0] == 403
