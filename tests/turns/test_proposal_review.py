"""Proposals reviewed as unified diffs with their sandbox runs (what ``%%ask`` draws and MCP
``ask`` returns), from the proposal views and the notebook as it is now."""

from __future__ import annotations

from jupyter_analyst.notebooks import ProposedRun
from jupyter_analyst.turns import ProposalView, review_proposals
from jupyter_analyst.turns.notebook_changes import ChangeView


def change(op: str, cell: str | None, source: str = "", status: str = "pending", run: ProposedRun | None = None,
           after: str | None = None) -> ChangeView:
    return ChangeView(change_id=cell or "prop-1", op=op, cell_id=cell if op != "insert" else None, after=after,
                      cell_type="code", source=source, reason=f"{op} it", run=run, status=status, decided_by=None,
                      diff=None, conflict=None)


def view(*changes: ChangeView, failed: bool = False) -> ProposalView:
    return ProposalView(proposal_id="prop_1", turn_id="turn_1", notebook="nb.ipynb", created_at="now",
                        failed=failed, changes=list(changes))


NB = {"cells": [{"id": "a", "source": ["x = 1\n", "y = 2"]}, {"id": "b", "source": "print(x)"}]}


def test_each_op_has_its_sources_before_and_after_and_their_diff():
    failed = ProposedRun(status="error", error="NameError: name 'z' is not defined", outputs=[
        {"output_type": "stream", "name": "stdout", "text": "before\n"},
        {"output_type": "error", "ename": "NameError", "evalue": "name 'z' is not defined", "traceback": []},
        {"output_type": "display_data", "data": {"image/png": "iVBOR"}, "metadata": {}}])
    (diff,) = review_proposals([view(change("insert", None, "z + 1", run=failed, after="a"),
                                     change("replace", "a", "x = 1\ny = 3"), change("delete", "b"))], NB)
    insert, replace, delete = diff.changes
    assert (insert.old_source, insert.new_source, insert.after) == ("", "z + 1", "a")
    assert insert.diff.startswith("--- /dev/null\n+++ nb.ipynb#prop-1 (proposed)\n")
    assert insert.sandbox.status == "error" and insert.sandbox.figures == 1
    assert insert.sandbox.output == "before\nNameError: name 'z' is not defined\n"
    assert (replace.old_source, replace.new_source) == ("x = 1\ny = 2", "x = 1\ny = 3")
    assert replace.diff.splitlines()[-3:] == [" x = 1", "-y = 2", "+y = 3"]
    assert (delete.old_source, delete.new_source) == ("print(x)", None)
    assert delete.diff.splitlines()[:2] == ["--- nb.ipynb#b", "+++ /dev/null"] and "-print(x)" in delete.diff
    assert diff.status == "pending"


def test_a_notebook_that_cannot_be_read_leaves_the_old_source_unknown_and_statuses_add_up():
    (diff,) = review_proposals([view(change("replace", "a", "x = 2"))], None)
    assert diff.changes[0].old_source is None and diff.changes[0].diff.endswith("+x = 2\n")
    assert review_proposals([view(change("replace", "a", "q"), failed=True)], NB)[0].status == "failed"
    both = view(change("replace", "a", "q", status="accepted"), change("delete", "b"))
    assert review_proposals([both], NB)[0].status == "partly_decided"
    done = view(change("replace", "a", "q", status="rejected"), change("delete", "b", status="rejected"))
    assert review_proposals([done], NB)[0].status == "rejected"


def test_a_withdrawn_proposal_is_reviewed_as_withdrawn():
    gone = view(change("replace", "a", "q", status="withdrawn"), change("delete", "b", status="withdrawn"))
    (diff,) = review_proposals([gone], NB)
    assert diff.status == "withdrawn" and [c.status for c in diff.changes] == ["withdrawn", "withdrawn"]
    mixed = view(change("replace", "a", "q", status="withdrawn"), change("delete", "b"))
    assert review_proposals([mixed], NB)[0].status == "partly_decided"
