"""How the active dataset is carried from one turn's answer into the next turn."""

from jupyter_analyst.agent.memory.observations import turn_answered, turn_opened
from jupyter_analyst.agent_state import AgentState, Entity, apply_delta

ANSWER = (
    "Today is 2026-12-04, but the data ends on 2025-12-31 (dataset `date_range`, art_1): no orders yet.\n\n"
    "The latest fiscal year had 1,804 orders. Dataset `orders_by_fiscal_year` (art_2)."
)


def _state() -> AgentState:
    context = Entity(id="dataset:date_range", kind="dataset", name="date_range", derived_from=["table:orders"],
                     detail={"artifact_id": "art_1", "rows": 1, "columns": ["today", "first_order", "last_order"]})
    result = Entity(id="dataset:orders_by_fiscal_year", kind="dataset", name="orders_by_fiscal_year",
                    derived_from=["table:orders"],
                    detail={"artifact_id": "art_2", "rows": 2, "columns": ["fiscal_year_start", "order_count"]})
    return AgentState(entities={context.id: context, result.id: result})


def test_an_answer_citing_a_one_row_lookup_first_keeps_the_table_it_gives_as_the_result():
    delta = turn_answered(_state(), ANSWER)
    assert delta.patch.active["dataset"].value == "orders_by_fiscal_year"
    # Between two tables cited equally, the first cited still wins.
    state = _state()
    state.entities["dataset:date_range"].detail["rows"] = 12
    assert turn_answered(state, ANSWER).patch.active["dataset"].value == "date_range"


def test_an_elliptic_follow_up_keeps_the_active_dataset_into_the_next_turn():
    state = apply_delta(_state(), turn_answered(_state(), ANSWER))
    for prompt in ("And by region?", "What about by region", "by region please", "Now per region"):
        opened = turn_opened(state, turn_number=2, prompt=prompt, source_label="sales.duckdb",
                             names=["orders", "regions", "region", "country"])
        assert "dataset" not in opened.patch.active, prompt
    # A prompt on another topic still leaves it.
    opened = turn_opened(state, turn_number=2, prompt="How many regions have a country?", source_label="sales.duckdb",
                         names=["orders", "regions", "region", "country"])
    assert opened.patch.active["dataset"] is None
