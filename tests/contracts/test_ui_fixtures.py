"""The recorded turns the panel's specs render (src/__tests__/fixtures/*-turn.json) are events
the server would send: each reads as itself through the server's own event models.

The panel's event types are generated from those models (src/model/api.generated.ts, through
the OpenAPI description), so they cannot drift from them; src/__tests__/model/generatedTypes.spec.ts
holds the panel to them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_analyst import events

FIXTURES = Path(__file__).resolve().parents[2] / "src" / "__tests__" / "fixtures"


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*-turn.json")), ids=lambda p: p.name)
def test_the_ui_fixtures_are_events_the_server_would_send(fixture):
    """The jest specs render recorded turns: each event must still be one the server sends."""
    raws = json.loads(fixture.read_text(encoding="utf-8"))
    assert raws
    for raw in raws:
        read = json.loads(events.parse_event(raw).model_dump_json())
        assert {key: read.get(key) for key in raw} == raw  # fields added since take their defaults


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*-turn.json")), ids=lambda p: p.name)
def test_the_ui_fixtures_tool_results_are_what_their_tools_models_hold(fixture):
    """The results the specs' cards read are instances of their tools' result models (the
    panel's generated ``ToolResults`` types)."""
    from jupyter_analyst.agent.tools.result_models import result_model_for

    results = [raw for raw in json.loads(fixture.read_text(encoding="utf-8")) if raw["type"] == "tool_result"]
    assert results
    for raw in results:
        model = result_model_for(raw["tool"], raw["status"], raw["result"])
        assert model is not None, raw["tool"]
        model.model_validate(raw["result"])
