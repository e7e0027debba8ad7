"""What turns cost, through the API the panel reads: each turn's ledger with the thread, the
thread's sum, the ledger on the ``turn_ended`` event; prices come from ``c.AnalystApp.prices``
and a wrong one is refused when it is set."""

from __future__ import annotations

import json

import pytest
from traitlets import TraitError

from jupyter_analyst.server.app import AnalystApp
from jupyter_analyst.testing import MODEL_NAME
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

SQL = "SELECT region_id, SUM(revenue) AS revenue FROM orders GROUP BY region_id"
USED = {"prompt_tokens": 2000, "completion_tokens": 100}
SCRIPT = {"turns": [{"match": ".", "steps": [
    {"tool_calls": [{"name": "run_sql", "arguments": {"sql": SQL, "name": "revenue"}}], "usage": USED},
    {"content": "[scripted model] revenue by region", "usage": USED},
]}]}
#: USD per million prompt / completion tokens.
PRICE = {"prompt": 0.5, "completion": 4.0}
CALL = (2000 * 0.5 + 100 * 4.0) / 1e6


@pytest.fixture
def jp_server_config(tmp_path, sales_db, scripted):
    return analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, scripted.base_url,
                                 prices={MODEL_NAME: PRICE})


async def as_json(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = json.dumps(body)
    return json.loads((await jp_fetch("analyst", "api", *path, method=method, **kw)).body)


async def test_the_thread_tells_each_turns_cost_and_their_sum(jp_fetch):
    tid = (await as_json(jp_fetch, "threads", method="POST", body={"source": "sales"}))["thread_id"]
    for prompt in ("Revenue by region", "Revenue by region, again"):
        await jp_fetch("analyst", "api", "threads", tid, "turns", method="POST", body=json.dumps({"prompt": prompt}),
                       request_timeout=120)
    thread = await as_json(jp_fetch, "threads", tid)
    first, second = (t["ledger"] for t in thread["turns"])
    assert first["usage"] == {"calls": 2, "prompt_tokens": 4000, "completion_tokens": 200, "counted_by": "server",
                              "cost_usd": pytest.approx(2 * CALL)}
    assert first["price"] == PRICE and first["steps"] == 1 and first["saved"]["steps"] == 0
    # The second turn reused the query: it saved the recorded share of the call that issued it.
    assert second["steps"] == 0 and second["saved"]["steps"] == 1
    assert second["saved"]["prompt_tokens"] == 2000 and second["saved"]["cost_usd"] == pytest.approx(CALL)
    total = thread["ledger"]
    assert total["usage"]["calls"] == 4 and total["usage"]["cost_usd"] == pytest.approx(4 * CALL)
    assert total["saved"]["steps"] == 1 and total["steps"] == 1
    # The panel has it live, on the event that ends each turn.
    events = (await as_json(jp_fetch, "threads", tid, "events"))["events"]
    ended = [e["ledger"] for e in events if e["type"] == "turn_ended"]
    assert ended == [first, second]


@pytest.mark.parametrize("prices, said", [
    ({"gpt-x": {"prompt": "free", "completion": 1}}, "invalid price for model 'gpt-x': prompt:"),
    ({"gpt-x": "1.5"}, "invalid price for model 'gpt-x': invalid price '1.5'"),
])
def test_a_wrong_price_in_the_config_is_refused_with_what_is_wrong(prices, said):
    app = AnalystApp()
    with pytest.raises(TraitError) as caught:
        app.prices = prices
    assert str(caught.value).startswith(f"AnalystApp.prices: {said}") and "per million" in str(caught.value)
    app.prices = {"gpt-x": "0.15/0.60"}
    assert app.prices == {"gpt-x": "0.15/0.60"}
