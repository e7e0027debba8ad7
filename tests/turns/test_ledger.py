"""The cost ledger of a turn: the server's token counts (or the estimate, said as such), the
cost at the configured price and never without one, each step's share of the model call that
issued it, what a reused step saved, all kept with the turn in the store."""

from __future__ import annotations

import pytest

from jupyter_analyst.errors import ConfigError
from jupyter_analyst.ledger import Price
from jupyter_analyst.testing import MODEL_NAME
from jupyter_analyst.turns import AnalystConfig
from jupyter_analyst.workspace import Workspace

Q1 = "SELECT region_id, count(*) AS n FROM orders GROUP BY region_id"
Q2 = "SELECT count(*) AS n FROM products"


def usage(prompt: int, completion: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": completion}


SCRIPT = {"turns": [
    {"match": "orders by region", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": Q1, "name": "by_region"}},
                        {"name": "run_sql", "arguments": {"sql": Q2, "name": "n_products"}}],
         "usage": usage(1000, 101)},
        {"content": "[scripted model] done", "usage": usage(1200, 30)}]},
    {"match": "again", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": Q1, "name": "by_region"}}], "usage": usage(500, 10)},
        {"content": "[scripted model] same", "usage": usage(600, 5)}]},
    {"match": "twice in one reply", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": Q2, "name": "n_products"}},
                        {"name": "run_sql", "arguments": {"sql": Q2, "name": "n_products"}}],
         "usage": usage(1000, 100)},
        {"error": {"status": 500, "message": "the model fell over"}}]},
    {"match": "unmetered", "steps": [
        {"tool_calls": [{"name": "run_sql", "arguments": {"sql": Q2, "name": "n_products"}}], "usage": "none"},
        {"content": "[scripted model] counted by nobody", "usage": usage(700, 7)}]},
]}

PRICED = {"prices": {MODEL_NAME: {"prompt": 1.0, "completion": 2.0}}, "summarizer": False}


def test_a_turn_counts_the_servers_tokens_prices_them_and_shares_them_among_its_steps(analyst, tmp_path):
    runner = analyst(SCRIPT)
    first = runner.run("orders by region", **PRICED)
    ledger = first.ledger
    assert ledger.usage.calls == 2 and ledger.usage.counted_by == "server"
    assert (ledger.usage.prompt_tokens, ledger.usage.completion_tokens) == (2200, 131)
    assert ledger.usage.cost_usd == pytest.approx((2200 * 1.0 + 131 * 2.0) / 1e6)
    assert ledger.price == Price(prompt=1.0, completion=2.0)
    assert ledger.steps == 2 and ledger.saved.steps == 0
    # The event the panel applies and the stored turn say the same.
    (ended,) = runner.of_type("turn_ended")
    assert ended.ledger == ledger
    ws = Workspace(tmp_path / "ws")
    try:
        (turn,) = ws.store.turns(first.thread_id)
        assert turn.ledger == ledger
        steps = {s.arguments["name"]: s for s in ws.artifacts.steps(first.thread_id)}
    finally:
        ws.close()
    # The first model call issued both queries: each carries half of it, the odd token to the first.
    a, b = steps["by_region"].cost, steps["n_products"].cost
    assert (a.model_call, a.shared_by, a.prompt_tokens, a.completion_tokens) == (1, 2, 500, 51)
    assert (b.prompt_tokens, b.completion_tokens) == (500, 50)
    assert a.cost_usd + b.cost_usd == pytest.approx((1000 + 101 * 2.0) / 1e6)
    assert ledger.execution_s == pytest.approx(steps["by_region"].duration_s + steps["n_products"].duration_s, abs=1e-3)

    second = runner.run("again", thread=first.thread_id, **PRICED)
    saved = second.ledger.saved
    # Reused: what it saved is the recorded cost of the step it reuses, time included.
    assert second.tool_calls["reused"] == 1 and second.ledger.steps == 0
    assert (saved.steps, saved.prompt_tokens, saved.completion_tokens) == (1, 500, 51)
    assert saved.cost_usd == pytest.approx(a.cost_usd)
    assert saved.execution_s == pytest.approx(steps["by_region"].duration_s, abs=1e-3)
    assert second.ledger.usage.cost_usd == pytest.approx((1100 + 15 * 2.0) / 1e6)


def test_a_step_reused_within_its_own_reply_saved_the_share_of_the_first_and_a_failed_call_adds_no_tokens(
        analyst):
    runner = analyst(SCRIPT)
    ledger = runner.run("twice in one reply", **PRICED).ledger
    # Two calls sent; the second failed without a reply: no tokens, and the cost stays that of the first.
    assert ledger.usage.calls == 2 and (ledger.usage.prompt_tokens, ledger.usage.completion_tokens) == (1000, 100)
    assert ledger.usage.cost_usd == pytest.approx((1000 + 100 * 2.0) / 1e6)
    assert ledger.steps == 1 and ledger.saved.steps == 1
    assert (ledger.saved.prompt_tokens, ledger.saved.completion_tokens) == (500, 50)
    assert ledger.saved.cost_usd == pytest.approx((500 + 50 * 2.0) / 1e6)


def test_without_usage_the_tokens_are_estimated_and_without_a_price_there_is_no_cost(analyst):
    runner = analyst(SCRIPT)
    summary = runner.run("unmetered", summarizer=False)
    usage_ = summary.ledger.usage
    # One call the server counted, one it did not: the sum says it is partly estimated.
    assert usage_.calls == 2 and usage_.counted_by == "mixed"
    estimated = [e for e in runner.of_type("context_usage") if e.call == 1]
    assert all(e.prompt_tokens is None for e in estimated)  # the server never counted call 1
    assert usage_.prompt_tokens == estimated[0].tokens + 700
    assert usage_.completion_tokens > 7  # the estimate of call 1's reply, plus the 7 counted
    assert usage_.cost_usd is None and summary.ledger.price is None


@pytest.mark.parametrize("prices, said", [
    ({"m": {"prompt": -1, "completion": 0.6}}, "invalid price for model 'm': prompt: Input should be greater"),
    ({"m": {"prompt": 0.15}}, "invalid price for model 'm': completion: Field required"),
    ({"m": {"prompt": 0.15, "completion": 0.6, "currency": "EUR"}}, "currency: Extra inputs are not permitted"),
    ({"m": "0.15 per token"}, "invalid price for model 'm': invalid price '0.15 per token'"),
    ({"m": 3}, "invalid price for model 'm'"),
    (["m"], "prices must be a mapping of model name -> price"),
])
def test_a_wrong_price_is_refused_with_a_clear_error(prices, said):
    with pytest.raises(ConfigError) as caught:
        AnalystConfig(prices=prices)
    assert said in caught.value.message and caught.value.reason == "invalid_price"


def test_prices_are_taken_in_both_spellings():
    config = AnalystConfig(prices={"a": "0.15/0.60", "b": {"prompt": 3, "completion": 15}})
    assert config.price_of("a") == Price(prompt=0.15, completion=0.6)
    assert config.price_of("b").cost(1_000_000, 1_000_000) == 18.0 and config.price_of("c") is None


def test_the_summarizers_call_is_added_to_its_turns_ledger_and_the_threads_sum(analyst, tmp_path):
    """The end-of-turn summarizer answers after the turn: its call is paid for all the same,
    so it is added to the turn's stored ledger (at its own price) and said in its event."""
    from jupyter_analyst.ledger import Ledger

    runner = analyst({**SCRIPT, "summarizer": [{"steps": [{"content": "{}", "usage": usage(300, 20)}]}]})
    first = runner.run("orders by region", prices={MODEL_NAME: {"prompt": 1.0, "completion": 2.0}})
    # What the turn said at its end: its own calls only; the summary returned after the
    # summarizer ran (no background here) counts its call too, nothing pending.
    (ended,) = runner.of_type("turn_ended")
    assert ended.ledger.usage.calls == 2 and ended.ledger.summarizer.calls == 0
    assert first.ledger.usage.calls == 2 and first.ledger.summarizer.calls == 1 and not first.summarizer_pending
    (memory,) = runner.of_type("memory")
    assert memory.status == "applied"
    assert (memory.usage.calls, memory.usage.prompt_tokens, memory.usage.completion_tokens) == (1, 300, 20)
    assert memory.usage.counted_by == "server" and memory.usage.cost_usd == pytest.approx((300 + 40) / 1e6)
    ws = Workspace(tmp_path / "ws")
    try:
        (turn,) = ws.store.turns(first.thread_id)
    finally:
        ws.close()
    assert turn.ledger.usage == first.ledger.usage
    assert turn.ledger.summarizer == memory.usage
    total = Ledger.total([turn.ledger])
    assert total.usage.calls + total.summarizer.calls == 3
