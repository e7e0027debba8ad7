"""The propose_cells tool against a real notebook file and a real workspace: a change is kept
only against cells that hold what the model read, a malformed call gets one clear error, and
the notebook itself is never written."""

from __future__ import annotations

import asyncio

import nbformat
import pytest

from jupyter_analyst.agent.environment import ThreadEnvironment
from jupyter_analyst.agent.spec import CallContext, StepPlan
from jupyter_analyst.agent.tools import ToolBox
from jupyter_analyst.notebooks import load_attached
from jupyter_analyst.sql import open_source
from jupyter_analyst.workspace import Workspace


@pytest.fixture
def proposing(tmp_path, sales_db):
    """A thread's environment with a notebook attached (read from its file) and its proposals kept."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Study", id="h1"), nbformat.v4.new_code_cell("y = 2", id="c2")]
    path = tmp_path / "study.ipynb"
    nbformat.write(nb, path)
    workspace = Workspace(tmp_path / "ws")
    thread = workspace.store.create_thread(source=str(sales_db))
    source = open_source(str(sales_db))
    env = ThreadEnvironment(thread_id=thread.thread_id, source=source, artifacts=workspace.artifacts,
                            workdir=workspace.kernel_dir(thread.thread_id))
    env.attached = load_attached(path)
    env.proposals = workspace.store
    yield env, path, workspace.store
    asyncio.run(env.close())
    source.close()
    workspace.close()


def call(env, changes):
    ctx = CallContext(thread_id=env.thread_id, turn_id="turn_1", call_id="call_1")
    return asyncio.run(ToolBox(env).call("propose_cells", {"changes": changes}, ctx, StepPlan()))


NOTE = {"op": "insert", "after": "h1", "cell_type": "markdown", "source": "Why y matters", "reason": "explain"}
DROP = {"op": "delete", "cell_id": "c2", "reason": "unused"}


def test_a_cell_edited_while_the_turn_ran_refuses_the_proposal_until_it_is_read_again(proposing):
    env, path, store = proposing
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].source = "y = 'edited by the user'"
    nbformat.write(nb, path)
    edited = path.read_bytes()
    refused = call(env, [NOTE, DROP])
    error = refused.result["error"]
    assert refused.status == "error" and error["reason"] == "notebook_changed"
    assert "cell(s) 'c2' no longer hold what you read" in error["message"] and "read_cells" in error["hint"]
    assert store.proposals(env.thread_id) == [] and path.read_bytes() == edited
    # The model now reads the notebook as it is, and a proposal against it is kept.
    kept = call(env, [NOTE, DROP])
    assert kept.status == "ok" and kept.result["status"] == "proposed"
    [body] = store.proposals(env.thread_id)
    assert [c["op"] for c in body["changes"]] == ["insert", "delete"] and path.read_bytes() == edited


@pytest.mark.parametrize("changes, reason, said", [
    ([{"op": "replace", "cell_id": "ghost", "source": "x", "reason": "r"}], "unknown_cell", "unknown cell id 'ghost'"),
    ([{"op": "insert", "after": "nope", "source": "x", "reason": "r"}], "unknown_cell", "unknown cell id 'nope'"),
    ([], "empty_proposal", "a non-empty list"),
    ("delete c2", "empty_proposal", "a non-empty list"),
    ([{"op": "rename", "cell_id": "c2", "reason": "r"}], "invalid_change_op", "unknown op 'rename'"),
    ([{"op": "delete", "cell_id": "c2"}], "invalid_change", "needs a one-line 'reason'"),
    ([{"op": "replace", "cell_id": "c2", "reason": "r"}], "invalid_change", "needs the cell's new 'source'"),
    ([DROP, DROP], "invalid_change", "changed twice"),
    ([{"op": "insert", "after": "h1", "cell_type": "raw", "source": "x", "reason": "r"}], "invalid_change",
     "cell_type is code or markdown"),
])
def test_a_malformed_proposal_gets_one_clear_error_and_nothing_is_kept(proposing, changes, reason, said):
    env, path, store = proposing
    before = path.read_bytes()
    outcome = call(env, changes)
    assert outcome.status == "error" and outcome.result["error"]["reason"] == reason
    assert said in outcome.result["error"]["message"]
    assert store.proposals(env.thread_id) == [] and path.read_bytes() == before


def test_a_notebook_without_cell_ids_is_said_to_need_them(proposing, tmp_path):
    env, _, _ = proposing
    old = tmp_path / "old.ipynb"
    old.write_text('{"cells": [{"cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": []}], '
                   '"metadata": {}, "nbformat": 4, "nbformat_minor": 4}')
    env.attached = load_attached(old)
    outcome = call(env, [{"op": "delete", "cell_id": "cell-0", "reason": "r"}])
    assert outcome.result["error"]["reason"] == "notebook_without_ids"
    assert "save the notebook in JupyterLab" in outcome.result["error"]["hint"]


# ---------------------------------------------------------------------- told to the model, across turns

STUDY = {"cells": [{"id": "h1", "cell_type": "markdown", "source": "# Revenue", "metadata": {}},
                   {"id": "c1", "cell_type": "code", "source": "import pandas as pd", "metadata": {},
                    "outputs": [], "execution_count": None}],
         "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
USES_REV = "print('rows', len(rev))\nrev.head(2)"
LOADS_REV = "rev = pd.DataFrame({'region': ['north', 'south'], 'revenue': [3, 4]})\nprint('rows', len(rev))"


def system_of(request: dict) -> str:
    return request["messages"][0]["content"]


def results_of(runner, tool="propose_cells"):
    return [e for e in runner.events if e.type == "tool_result" and e.tool == tool]


def test_a_cell_using_a_sandbox_dataset_is_flagged_listed_next_turn_and_withdrawn_for_a_self_contained_one(
        analyst, tmp_path):
    from jupyter_analyst.notebooks.outline import AttachedNotebook
    from jupyter_analyst.testing import python_step, sql_step, text_step

    attached = AttachedNotebook(path="study.ipynb", content=STUDY)
    first = analyst({"turns": [{"steps": [
        sql_step("SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id", "rev"),
        call_step_propose({"op": "insert", "after": "c1", "source": USES_REV, "reason": "show revenue"}),
        text_step("[scripted] proposed"),
    ]}]})
    summary = first.run("chart revenue in my notebook", attached=attached)
    assert summary.status == "completed", summary.error
    (told,) = results_of(first)
    # The cell ran in the sandbox, where `rev` exists: its output is previewed ...
    (change,) = told.result["changes"]
    assert change["run"] == "ok" and change["stdout"].startswith("rows ") and "revenue" in change["result"]
    # ... and the names the user's notebook does not define before it are named, with what to do.
    assert change["not_in_notebook"] == ["rev"]
    assert "raise NameError" in told.result["note"] and f"withdraw={told.result['proposal_id']!r}" in told.result["note"]
    old = told.result["proposal_id"]
    store = Workspace(tmp_path / "ws").store
    assert store.proposal(summary.thread_id, old)["changes"][0]["undefined"] == ["rev"]

    # The next turn is told the proposal is pending, and replaces it; a bad withdraw is refused.
    second = analyst({"turns": [
        {"match": "^self", "steps": [
            call_step_propose({"op": "insert", "after": "c1", "source": LOADS_REV, "reason": "load it here"},
                              withdraw=old),
            {"tool_calls": [{"name": "propose_cells", "arguments": {"withdraw": "prop_nope"}}]},
            {"tool_calls": [{"name": "propose_cells", "arguments": {"withdraw": old}}]},
            text_step("[scripted] replaced"),
        ]},
        {"match": "^and", "steps": [text_step("[scripted] ok")]},
    ]})
    assert second.run("self-contained please", thread=summary.thread_id, attached=attached).status == "completed"
    listed = system_of(second.server.requests[0])
    assert f"- {old}: 1 pending (new code cell {change['change_id']} after c1)" in listed
    assert "A proposed code cell runs in both (yours first)" in listed
    replaced, unknown, again = results_of(second)
    assert replaced.status == "ok" and replaced.result["withdrawn"] == old
    assert "not_in_notebook" not in replaced.result["changes"][0] and replaced.result["changes"][0]["run"] == "ok"
    assert unknown.status == "error" and unknown.result["error"]["reason"] == "proposal_not_found"
    assert "no proposal 'prop_nope' in this conversation" in unknown.result["error"]["message"]
    assert again.status == "error" and again.result["error"]["reason"] == "already_decided"
    [row] = [d for d in store.decisions(summary.thread_id) if d["proposal_id"] == old]
    assert (row["decision"], row["user"]) == ("withdrawn", "model")

    second.run("and now?", thread=summary.thread_id, attached=attached)
    listed = system_of(second.server.requests[-1])
    new = replaced.result["proposal_id"]
    assert f"- {new}: 1 pending" in listed and old not in listed
    assert "Proposed changes decided or withdrawn so far: 1 withdrawn." in listed
    # The thread's audit notebook records the withdrawal with who took it.
    audit = (tmp_path / "ws" / "threads" / summary.thread_id / "notebook.ipynb").read_text()
    assert "withdrawn by model at" in audit
    store.close()


def call_step_propose(*changes, **extra):
    return {"tool_calls": [{"name": "propose_cells", "arguments": {"changes": list(changes), **extra}}]}


def test_a_withdrawn_change_cannot_be_accepted(proposing):
    from jupyter_analyst.notebooks import ProposalConflict
    from jupyter_analyst.turns import accept_proposal

    env, path, store = proposing
    made = call(env, [NOTE])
    pid = made.result["proposal_id"]
    gone = asyncio.run(ToolBox(env).call("propose_cells", {"withdraw": pid},
                                          CallContext(thread_id=env.thread_id, turn_id="turn_1", call_id="call_2"),
                                          StepPlan()))
    assert gone.status == "ok" and gone.result == {
        "status": "withdrawn", "withdrawn": pid,
        "note": "its 1 pending change(s) are no longer offered to the user; say so in the answer"}
    with pytest.raises(ProposalConflict, match="was withdrawn already"):
        asyncio.run(accept_proposal(store, None, env.thread_id, pid, [made.result["changes"][0]["change_id"]],
                                    user="ann"))


def test_a_cell_that_fails_in_the_sandbox_on_a_name_of_the_notebook_is_said_to_be_unchecked(proposing):
    env, _, store = proposing
    outcome = call(env, [{"op": "insert", "after": "c2", "source": "print(y * 2)", "reason": "double y"}])
    (change,) = outcome.result["changes"]
    # `y` is the notebook's (cell c2), which never ran in the sandbox: the user's kernel has it.
    assert change["run"] == "error" and change["not_in_sandbox"] == ["y"] and "not_in_notebook" not in change
    assert "could not check those cells" in outcome.result["note"] and outcome.result["status"] == "failed"


def test_an_answer_may_cite_what_a_proposed_cell_showed_in_the_sandbox(analyst):
    from jupyter_analyst.notebooks.outline import AttachedNotebook
    from jupyter_analyst.testing import text_step

    a = analyst({"turns": [{"steps": [
        call_step_propose({"op": "insert", "after": "c1", "source": "print('checksum', 6 * 7 * 1013)",
                           "reason": "a checksum"}),
        text_step("[scripted] The proposed cell prints the checksum 42,546."),
    ]}]})
    summary = a.run("add a checksum cell", attached=AttachedNotebook(path="study.ipynb", content=STUDY))
    assert summary.status == "completed", summary.error
    (told,) = results_of(a)
    assert told.result["changes"][0]["stdout"] == "checksum 42546\n"
    # The number is in the proposal's result the model was sent: no answer check is asked.
    assert "unsupported_claim_flagged" not in summary.counters
    assert not any(r["messages"][-1]["content"].startswith("[answer check]") for r in a.server.requests
                   if isinstance(r["messages"][-1].get("content"), str))
