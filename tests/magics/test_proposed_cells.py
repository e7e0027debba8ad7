"""How ``%%ask`` draws the cells a turn proposed: the model's text escaped in HTML and cleaned
in plain text, the decision lines for where the proposals are kept."""

from __future__ import annotations

from pathlib import Path

from jupyter_analyst.magics.proposed_cells import Proposed, review_bundle
from jupyter_analyst.magics.remote import AnalystServer
from jupyter_analyst.notebooks import ProposedRun
from jupyter_analyst.turns import ProposalView, review_proposals
from jupyter_analyst.turns.notebook_changes import ChangeView

HOSTILE = "<script>alert(1)</script>\x1b[31m"


def diffs(failed: bool = False):
    run = ProposedRun(status="error" if failed else "ok", error="boom" if failed else None,
                      outputs=[{"output_type": "stream", "name": "stdout", "text": HOSTILE + "\n"}])
    change = ChangeView(change_id="a", op="replace", cell_id="a", after=None, cell_type="code", source=HOSTILE,
                        reason=HOSTILE, run=run, status="pending", decided_by=None, diff=None, conflict=None)
    view = ProposalView(proposal_id="prop_1", turn_id="turn_1", notebook="nb.ipynb", created_at="now", failed=failed,
                        changes=[change])
    return review_proposals([view], {"cells": [{"id": "a", "source": "x = 1"}]})


def test_the_models_text_is_escaped_and_the_decision_lines_say_where_they_apply(tmp_path):
    local = Proposed("thr_1", "turn_1", notebook=tmp_path / "nb.ipynb", proposals=["prop_1"])
    bundle = review_bundle(local, diffs(), tmp_path / "nb.proposed.ipynb")
    assert "<script>" not in bundle["text/html"] and "&lt;script&gt;" in bundle["text/html"]
    assert "\x1b" not in bundle["text/plain"] and "\x1b" not in bundle["text/html"]
    assert "%analyst accept prop_1" in bundle["text/plain"] and "%analyst revert turn_1" in bundle["text/plain"]
    assert "wrote nb.proposed.ipynb beside the notebook" in bundle["text/plain"]
    assert f"decisions apply to {Path(tmp_path / 'nb.ipynb')} here" in bundle["text/plain"]

    remote = Proposed("thr_1", "turn_1", server=AnalystServer("http://127.0.0.1:8888/"), proposals=["prop_1"])
    failed = review_bundle(remote, diffs(failed=True))
    assert "decisions apply through the Jupyter server at http://127.0.0.1:8888/" in failed["text/plain"]
    assert "a cell failed in the sandbox: accept its cells by id" in failed["text/plain"]
    assert "ran in the sandbox: error (boom)" in failed["text/plain"]
