"""Proposed cells through a real Jupyter server: the model proposes, the sandbox runs them, the
notebook changes only when accepted (through the contents manager, checkpointed first), and a
turn's accepted changes revert byte for byte."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import nbformat
import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.events import parse_events

pytestmark = pytest.mark.process

#: A file on the host, outside every folder the sandbox mounts (its /tmp is a fresh tmpfs).
HOST_SECRET = Path(tempfile.gettempdir()) / "analyst-proposals-host-secret.txt"

NEW_CODE = "total = 40 + 2\nprint('total is', total)"
NEW_NOTE = "## The total\nComputed in the sandbox first."
REPLACED = "y = 3\nprint('y is', y)"


def propose(*changes):
    return {"tool_calls": [{"name": "propose_cells", "arguments": {"changes": list(changes)}}]}


SCRIPT = {"turns": [
    {"match": "three changes", "steps": [
        propose({"op": "insert", "after": "c1", "source": NEW_CODE, "reason": "compute the total"},
                {"op": "insert", "after": "c1", "cell_type": "markdown", "source": NEW_NOTE, "reason": "say what it is"},
                {"op": "replace", "cell_id": "c2", "source": REPLACED, "reason": "print y"}),
        {"content": "[scripted model] proposed three changes"},
    ]},
    {"match": "failing", "steps": [
        propose({"op": "insert", "after": "c1", "source": "raise ValueError('boom')", "reason": "fails"},
                {"op": "insert", "after": "c2", "source": "print('fine')", "reason": "works"}),
        {"content": "[scripted model] proposed"},
    ]},
    {"match": "host file", "steps": [
        propose({"op": "insert", "after": "c2", "reason": "read a host file",
                 "source": f"open('marker.txt', 'w').write('ran here')\nprint(open({str(HOST_SECRET)!r}).read())"},
                {"op": "insert", "after": "c2", "reason": "write the system's folders",
                 "source": "open('/etc/analyst-probe', 'w').write('x')"}),
        {"content": "[scripted model] proposed"},
    ]},
    {"match": "anything else", "steps": [{"content": "[scripted model] nothing else"}]},
    {"match": "malformed", "steps": [
        propose({"op": "replace", "cell_id": "ghost", "source": "x = 2", "reason": "r"}),
        {"tool_calls": [{"name": "propose_cells", "arguments": {"changes": []}}]},
        propose({"op": "rename", "cell_id": "c1", "reason": "r"}),
        {"content": "[scripted model] tried"},
    ]},
]}


async def call(jp_fetch, *path, method="GET", body=None):
    kw = {"body": json.dumps(body)} if body is not None else {}
    return await jp_fetch("analyst", "api", *path, method=method, **kw)


async def as_json(jp_fetch, *path, **kw):
    return json.loads((await call(jp_fetch, *path, **kw)).body)


async def refused(jp_fetch, *path, **kw):
    with pytest.raises(HTTPClientError) as info:
        await call(jp_fetch, *path, **kw)
    return info.value.code, json.loads(info.value.response.body)


@pytest.fixture
def notebook(jp_root_dir):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Sales", id="h1"),
                nbformat.v4.new_code_cell("x = 1\nprint(x)", id="c1"),
                nbformat.v4.new_code_cell("y = 2", id="c2")]
    path = jp_root_dir / "nb.ipynb"
    nbformat.write(nb, path)
    return path


async def proposed(jp_fetch, prompt):
    thread = await as_json(jp_fetch, "threads", method="POST", body={"source": "sales"})
    tid = thread["thread_id"]
    response = await call(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": prompt, "notebook": "nb.ipynb"})
    events = parse_events(response.body.decode())
    assert events[-1]["type"] == "turn_ended" and events[-1]["status"] == "completed", events[-1]
    listed = (await as_json(jp_fetch, "threads", tid, "proposals"))["proposals"]
    return tid, listed, events


def cells(path):
    return {c["id"]: c for c in json.loads(path.read_text())["cells"]}


async def next_turn_is_told(jp_fetch, scripted, tid, said):
    """The thread's next turn: the model's context says ``said``."""
    await call(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "anything else?", "notebook": "nb.ipynb"})
    system = scripted.requests[-1]["messages"][0]["content"]
    assert said in system, system


async def test_nothing_changes_until_accepted_then_one_cell_and_revert_restores_the_bytes(jp_fetch, notebook, scripted):
    before = notebook.read_bytes()
    tid, listed, events = await proposed(jp_fetch, "three changes please")
    assert notebook.read_bytes() == before  # proposed and run in the sandbox: the file is untouched
    [proposal] = listed
    changes = proposal["changes"]
    assert [c["op"] for c in changes] == ["insert", "insert", "replace"] and not proposal["failed"]
    code, note, replace = changes
    assert code["run"]["status"] == "ok" and "total is 42" in json.dumps(code["run"]["outputs"])
    assert note["run"] is None and replace["run"]["step_key"]
    # nbdime's diff model per change: the replaced cell's source patched, a new cell added.
    assert replace["diff"][0]["key"] == "cells" and "source" in json.dumps(replace["diff"])
    assert code["diff"][0]["diff"][0]["op"] == "addrange"
    result = next(e for e in events if e["type"] == "tool_result" and e["tool"] == "propose_cells")
    assert result["result"]["proposal_id"] == proposal["proposal_id"]

    # Accept one cell: exactly that cell changes, with its sandbox outputs and provenance.
    pid = proposal["proposal_id"]
    view = await as_json(jp_fetch, "threads", tid, "proposals", pid, "accept", method="POST",
                         body={"cell_ids": ["c2"]})
    assert [c["status"] for c in view["changes"]] == ["pending", "pending", "accepted"]
    old, new = cells_of(before), cells(notebook)
    assert list(new) == list(old) and new["h1"] == old["h1"] and new["c1"] == old["c1"]
    assert "".join(new["c2"]["source"]) == REPLACED
    meta = new["c2"]["metadata"]["jupyter_analyst"]
    assert meta["proposal"] == pid and meta["turn"] == proposal["turn_id"] and meta["step_key"] == replace["run"]["step_key"]
    assert "y is 3" in json.dumps(new["c2"]["outputs"]) and new["c2"]["execution_count"] is None

    # Accept the rest, then revert the turn: the file as it was, byte for byte.
    view = await as_json(jp_fetch, "threads", tid, "proposals", pid, "accept", method="POST", body={"cell_ids": "all"})
    assert {c["status"] for c in view["changes"]} == {"accepted"}
    ids = list(cells(notebook))
    assert ids == ["h1", "c1", code["change_id"], note["change_id"], "c2"]
    assert {c["decided_by"] for c in view["changes"]} == {"local"}
    await next_turn_is_told(jp_fetch, scripted, tid, f"The user accepted the proposed new code cell {code['change_id']}")
    # The audit notebook, written again by that turn, records the proposal and who decided what.
    audit = nbformat.reads((await call(jp_fetch, "threads", tid, "notebook")).body.decode(), as_version=4)
    [table] = [c.source for c in audit.cells if c.metadata.get("jupyter_analyst", {}).get("role") == "proposals"]
    assert table.count("accepted by local") == 3 and "compute the total" in table and "replace c2" in table
    reverted = await as_json(jp_fetch, "threads", tid, "turns", proposal["turn_id"], "revert", method="POST", body={})
    assert sorted(reverted["reverted"]) == sorted(c["change_id"] for c in changes)
    assert notebook.read_bytes() == before
    again = (await as_json(jp_fetch, "threads", tid, "proposals"))["proposals"][0]
    assert {c["status"] for c in again["changes"]} == {"reverted"}
    code_, body = await refused(jp_fetch, "threads", tid, "turns", proposal["turn_id"], "revert", method="POST", body={})
    assert code_ == 409 and body["reason"] == "nothing_to_revert"

    # Recorded: the agent state notes each decision and who took it, for the next turn.
    state = await as_json(jp_fetch, "threads", tid, "state")
    notes = [i for i in state["items"].values() if i["ref"].get("proposal") == pid]
    assert {n["ref"]["decision"] for n in notes} == {"reverted"} and len(notes) == 3


def cells_of(raw: bytes):
    return {c["id"]: c for c in json.loads(raw)["cells"]}


async def test_a_cell_edited_meanwhile_is_refused_and_nothing_is_written(jp_fetch, notebook, scripted):
    tid, [proposal], _ = await proposed(jp_fetch, "three changes please")
    nb = nbformat.read(notebook, as_version=4)
    nb.cells[2].source = "y = 'the user changed this'"
    nbformat.write(nb, notebook)
    edited = notebook.read_bytes()
    listed = (await as_json(jp_fetch, "threads", tid, "proposals"))["proposals"][0]
    replace = listed["changes"][2]
    assert replace["diff"] is None and "edited since the model read it" in replace["conflict"]
    status, body = await refused(jp_fetch, "threads", tid, "proposals", proposal["proposal_id"], "accept",
                                 method="POST", body={"cell_ids": ["c2"]})
    assert status == 409 and body["reason"] == "notebook_changed" and "'c2' was edited" in body["message"]
    assert notebook.read_bytes() == edited
    # Rejected instead: the notebook is untouched, and the model is told not to offer it again.
    view = await as_json(jp_fetch, "threads", tid, "proposals", proposal["proposal_id"], "reject", method="POST",
                         body={"cell_ids": ["c2"]})
    assert view["changes"][2]["status"] == "rejected" and notebook.read_bytes() == edited
    await next_turn_is_told(jp_fetch, scripted, tid, "The user rejected the proposed replace of cell c2 for nb.ipynb "
                                                     "(print y): do not propose it again.")


async def test_a_failing_cell_keeps_the_proposal_from_accept_all(jp_fetch, notebook):
    before = notebook.read_bytes()
    tid, [proposal], _ = await proposed(jp_fetch, "a failing proposal")
    assert proposal["failed"] and proposal["changes"][0]["run"]["status"] == "error"
    assert "boom" in json.dumps(proposal["changes"][0]["run"]["outputs"])
    status, body = await refused(jp_fetch, "threads", tid, "proposals", proposal["proposal_id"], "accept",
                                 method="POST", body={"cell_ids": "all"})
    assert status == 409 and body["reason"] == "proposal_failed"
    assert notebook.read_bytes() == before
    # One by one, a person may still take the cell that works.
    ok = proposal["changes"][1]["change_id"]
    await call(jp_fetch, "threads", tid, "proposals", proposal["proposal_id"], "accept", method="POST",
               body={"cell_ids": [ok]})
    assert ok in cells(notebook) and proposal["changes"][0]["change_id"] not in cells(notebook)


async def test_a_proposed_cell_runs_in_the_sandbox_not_on_the_host(jp_fetch, notebook, jp_root_dir):
    HOST_SECRET.write_text("host secret 7f3a")
    try:
        tid, [proposal], _ = await proposed(jp_fetch, "read a host file")
    finally:
        HOST_SECRET.unlink()
    reader, writer = proposal["changes"]
    outputs = json.dumps(reader["run"]["outputs"])
    assert reader["run"]["status"] == "error" and "FileNotFoundError" in outputs and "7f3a" not in outputs
    assert writer["run"]["status"] == "error" and ("Read-only" in json.dumps(writer["run"]["outputs"])
                                                  or "Permission" in json.dumps(writer["run"]["outputs"]))
    # It ran in the thread's sandbox folder, not the user's (where their kernel would run it).
    assert not (jp_root_dir / "marker.txt").exists()


async def test_malformed_proposals_get_clear_errors(jp_fetch, notebook):
    before = notebook.read_bytes()
    tid, listed, events = await proposed(jp_fetch, "malformed proposal")
    assert listed == [] and notebook.read_bytes() == before
    errors = [e["result"]["error"] for e in events if e["type"] == "tool_result" and e["tool"] == "propose_cells"]
    assert [e["reason"] for e in errors] == ["unknown_cell", "empty_proposal", "invalid_change_op"]
    assert "unknown cell id 'ghost'" in errors[0]["message"]
    assert "unknown op 'rename'" in errors[2]["message"]
    status, body = await refused(jp_fetch, "threads", tid, "proposals", "prop_nothing", "accept", method="POST",
                                 body={"cell_ids": "all"})
    assert status == 404 and body["reason"] == "proposal_not_found"
    for bad in ({}, {"cell_ids": []}, {"cell_ids": "some"}, {"cell_ids": ["../x"]}):
        status, body = await refused(jp_fetch, "threads", tid, "proposals", "prop_nothing", "accept", method="POST",
                                     body=bad)
        assert status == 400 and body["reason"] == "invalid_cell_ids", bad
