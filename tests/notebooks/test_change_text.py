"""A proposal as plain text for a terminal: the source's difference line by line and each
sandbox output in one line, with no escape codes nor notebook JSON."""

from __future__ import annotations

from jupyter_analyst.notebooks import Proposal, ProposedChange, ProposedRun, proposal_lines

NB = {"cells": [{"id": "c1", "cell_type": "code", "source": "x = 1\ny = 2\nprint(x + y)"},
                {"id": "c2", "cell_type": "markdown", "source": "old note"}]}
TRACEBACK = "\x1b[0;31mValueError\x1b[0m: boom"


def proposal(*changes: ProposedChange) -> Proposal:
    return Proposal(proposal_id="prop_1", thread_id="thr", turn_id="turn", call_id="call", notebook="nb.ipynb",
                    changes=list(changes), created_at="2026-01-01T00:00:00Z")


def test_each_change_is_its_source_difference_and_one_line_per_output():
    changes = [
        ProposedChange(change_id="c1", op="replace", cell_id="c1", source="x = 1\ny = 3\nprint(x + y)", reason="y is 3",
                       run=ProposedRun(status="ok", outputs=[
                           {"output_type": "stream", "name": "stdout", "text": "4\n"},
                           {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo" * 500,
                                                                    "text/plain": "<Figure>"}, "metadata": {}}])),
        ProposedChange(change_id="prop-a", op="insert", after="c1", source="raise ValueError('boom')", reason="fails",
                       run=ProposedRun(status="error", error=TRACEBACK, outputs=[
                           {"output_type": "error", "ename": "ValueError", "evalue": "boom",
                            "traceback": [TRACEBACK]}]), undefined=["rev"]),
        ProposedChange(change_id="c2", op="delete", cell_id="c2", cell_type="markdown", reason="stale"),
    ]
    text = [(line.kind, line.text) for line in proposal_lines(NB, [proposal(*changes)], {"c2": "rejected"})]
    assert text == [
        ("head", "proposal prop_1 (3 change(s), a cell failed in the sandbox)"),
        ("head", "replace cell c1: y is 3"),
        ("same", "  x = 1"), ("remove", "- y = 2"), ("add", "+ y = 3"), ("same", "  print(x + y)"),
        ("note", "  output stdout: 4"),
        ("note", "  output display: image/png"),
        ("head", "new code cell prop-a after c1: fails"),
        ("add", "+ raise ValueError('boom')"),
        ("note", "  output error: ValueError: boom"),
        ("note", "  reads rev, which no cell before it defines: run in your kernel it raises NameError"),
        ("head", "delete cell c2: stale [rejected]"),
        ("remove", "- old note"),
    ]
    assert not any("\x1b" in t or "iVBOR" in t or "metadata" in t for _, t in text)


def test_a_withdrawn_proposal_is_one_line_and_nothing_of_it_is_offered():
    change = ProposedChange(change_id="prop-a", op="insert", after="c1", source="print(rev)", reason="r",
                            run=ProposedRun(status="ok", outputs=[{"output_type": "stream", "text": "x"}]))
    lines = proposal_lines(NB, [proposal(change)], {"prop-a": "withdrawn"})
    assert [(line.kind, line.text) for line in lines] == [
        ("head", "proposal prop_1: withdrawn by the model, replaced or taken back")]
