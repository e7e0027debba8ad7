"""What a turn's queries say of the team's context folder, read once it has answered (real
turns, scripted model over HTTP): the verified query and the metric it followed cited, a
measure the folder lacks suggested, kept in the workspace so a reused query is not parsed
again; without a folder, nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from jupyter_analyst.knowledge import load_team_context
from jupyter_analyst.testing import sql_step, text_step

pytest.importorskip("dbt_semantic_interfaces")

EXAMPLE = Path(__file__).parents[2] / "fixtures" / "context"
UNITS = "SELECT SUM(quantity) AS units FROM orders WHERE region_id = 1"


def test_a_turn_cites_what_it_followed_and_suggests_what_the_folder_lacks(analyst, tmp_path):
    shutil.copytree(EXAMPLE, tmp_path / "context")
    verified = load_team_context(tmp_path / "context").queries[0].sql
    script = {"turns": [{"steps": [sql_step(verified, "monthly"), sql_step(UNITS, "units"),
                                   text_step("[scripted model] Done.")]}]}
    a = analyst(script)
    first = a.run("monthly revenue and units")
    assert first.status == "completed"
    assert [(d.name, d.definition, d.file) for d in first.definitions] == [
        ("revenue_by_month.sql", "verified_query", "context/queries/revenue_by_month.sql"),
        ("revenue", "metric", "context/models/orders.yml:46")]
    calls = [e.call_id for e in a.of_type("tool_call")]
    assert {d.call_id for d in first.definitions} == {calls[0]}
    (suggestion,) = first.suggestions
    assert (suggestion.name, suggestion.measure, suggestion.call_id) == (
        "units", "SUM(quantity) FROM orders WHERE region_id = 1", calls[1])
    (ended,) = a.of_type("turn_ended")
    assert ended.definitions == first.definitions and ended.suggestions == first.suggestions
    # The audit notebook's answer names them under its receipts, with the step that followed them.
    answer = next(c for c in nbformat.read(first.notebook, as_version=4).cells
                  if c.metadata.get("jupyter_analyst", {}).get("role") == "answer")
    assert ("**Definitions used**: the team's verified query `revenue_by_month.sql` "
            "(`context/queries/revenue_by_month.sql`), in step [In [") in answer.source
    readings = list((tmp_path / "ws" / "context-digests" / "readings").glob("*.json"))
    assert len(readings) == 2, "one reading kept per query"

    # Asked again, the queries are reused and their readings too: the same receipts.
    again = a.run("monthly revenue and units", thread=first.thread_id)
    assert again.tool_calls["reused"] == 2
    assert [d.name for d in again.definitions] == ["revenue_by_month.sql", "revenue"]
    assert [s.measure for s in again.suggestions] == [suggestion.measure]


def test_without_a_context_folder_a_turn_cites_and_suggests_nothing(analyst):
    a = analyst({"turns": [{"steps": [sql_step(UNITS, "units"), text_step("[scripted model] Done.")]}]})
    summary = a.run("units")
    assert summary.status == "completed"
    assert (summary.definitions, summary.suggestions) == ([], [])
