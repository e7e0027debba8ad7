"""Budgets on a server with several users: one model configured once answers every user with the
server's key; a user past the daily limit has the next turn end ``budget_exhausted`` while another
user's turns run; the limit starts again the next day; what is left is served to each user, and
every user's spending to the budget administrators only; two turns racing for the last tokens
overspend by at most one call each."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime, timedelta

import pytest
from tornado.httpclient import HTTPClientError
from traitlets import TraitError

from jupyter_analyst import _clock
from jupyter_analyst.server.app import AnalystApp
from jupyter_analyst.testing.identity import MULTI_USER, fetch_as, json_as
from jupyter_analyst.testing.servers.jupyter import analyst_server_config


def usage(prompt: int, completion: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": completion}


SCRIPT = {"turns": [
    {"match": "^spend", "steps": [{"content": "[scripted model] spent", "usage": usage(900_000, 50_000)}]},
    {"match": "^race", "steps": [
        {"tool_calls": [{"name": "list_tables", "arguments": {}}], "usage": usage(250_000, 50_000)},
        {"content": "[scripted model] never asked", "usage": usage(10, 10)}]},
    {"match": ".", "steps": [{"content": "[scripted model] the orders, counted", "usage": usage(600, 100)}]},
]}
#: What the tests' server is configured with: 1,000 tokens a user a day, ann an administrator.
DAILY = {"budgets": {"user/day": "1000 tokens"}, "budget_admins": ["ann"]}
#: A budget that leaves 50,000 tokens, room for the prompts of two turns' first calls.
RACE = {"budgets": {"user/day": "1M tokens"}}
NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def jp_server_config(tmp_path, sales_db, scripted, request):
    return analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, scripted.base_url, server=MULTI_USER,
                                 **getattr(request, "param", DAILY))


async def turn(jp_fetch, user: str, thread_id: str, prompt: str) -> dict:
    """Run a turn as ``user``; its ``turn_ended`` event."""
    await fetch_as(jp_fetch, user, "threads", thread_id, "turns", method="POST", body={"prompt": prompt},
                   request_timeout=120)
    events = (await json_as(jp_fetch, user, "threads", thread_id, "events"))["events"]
    return [e for e in events if e["type"] == "turn_ended"][-1]


async def query_as(jp_fetch, user: str, path: str, **params: str) -> dict:
    return json.loads((await fetch_as(jp_fetch, user, *path.split("/"), params=params)).body)


async def new_thread(jp_fetch, user: str) -> str:
    return (await json_as(jp_fetch, user, "threads", method="POST", body={"source": "sales"}))["thread_id"]


async def test_a_user_past_the_daily_limit_is_stopped_another_is_not_and_the_next_day_both_run(jp_fetch, scripted):
    with _clock.moved(lambda: NOON):
        ann, bob = await new_thread(jp_fetch, "ann"), await new_thread(jp_fetch, "bob")
        assert (await turn(jp_fetch, "ann", ann, "how many orders?"))["status"] == "completed"
        assert (await turn(jp_fetch, "ann", ann, "and now?"))["status"] == "completed"  # 700 of 1,000 before it
        ended = await turn(jp_fetch, "ann", ann, "and again?")
        assert ended["status"] == "budget_exhausted"
        assert ended["message"] == ("the daily budget of user 'ann' is spent: 1,400 tokens used of 1,000 today; "
                                    "it resets at 2026-03-11 00:00 UTC")
        assert ended["ledger"]["usage"]["calls"] == 0
        assert len(scripted.requests) == 2
        # Bob's turns are his own budget's business.
        assert (await turn(jp_fetch, "bob", bob, "how many orders?"))["status"] == "completed"
        # What is left, as each user's panel reads it.
        left = await json_as(jp_fetch, "ann", "budget")
        assert (left["user"], left["limited"], left["exhausted"]) == ("ann", True, True)
        assert left["message"] == ended["message"]
        (line,) = left["budgets"]
        assert line == {"scope": "user", "period": "day", "limit_tokens": 1000, "limit_usd": None,
                        "spent_tokens": 1400, "spent_usd": 0.0, "left_tokens": 0, "left_usd": None,
                        "exhausted": True, "resets_at": "2026-03-11T00:00:00.000Z"}
        bobs = await json_as(jp_fetch, "bob", "budget")
        assert (bobs["exhausted"], bobs["budgets"][0]["left_tokens"]) == (False, 300)
        # The turn's thread and its history say it too.
        thread = await json_as(jp_fetch, "ann", "threads", ann)
        assert [t["status"] for t in thread["turns"]] == ["completed", "completed", "budget_exhausted"]
    with _clock.moved(lambda: NOON + timedelta(days=1)):
        assert (await turn(jp_fetch, "ann", ann, "how many orders today?"))["status"] == "completed"
        assert (await json_as(jp_fetch, "ann", "budget"))["budgets"][0]["spent_tokens"] == 700
    # One model, configured once on the server, answered both users with the server's own key.
    assert len(scripted.keys) == 4 and set(scripted.keys) == {"Bearer scripted"}


async def test_every_users_spending_is_for_the_budget_administrators_only(jp_fetch):
    with _clock.moved(lambda: NOON):
        ann, bob = await new_thread(jp_fetch, "ann"), await new_thread(jp_fetch, "bob")
        await turn(jp_fetch, "ann", ann, "how many orders?")
        await turn(jp_fetch, "bob", bob, "how many orders?")
        await turn(jp_fetch, "bob", bob, "and now?")
        spending = await query_as(jp_fetch, "ann", "budget/users")
        assert (spending["day"], spending["starts_at"], spending["ends_at"]) == (
            "2026-03-10", "2026-03-10T00:00:00.000Z", "2026-03-11T00:00:00.000Z")
        assert [(u["user"], u["tokens"], u["calls"]) for u in spending["users"]] == [("ann", 700, 1), ("bob", 1400, 2)]
        assert spending["users"][1]["budgets"][0]["exhausted"] is True
        assert spending["total"] == {"tokens": 2100, "usd": 0.0, "calls": 3}
        other_day = await query_as(jp_fetch, "ann", "budget/users", day="2026-03-09")
        assert other_day["users"] == [] and other_day["day"] == "2026-03-09"
        with pytest.raises(HTTPClientError) as refused:
            await query_as(jp_fetch, "bob", "budget/users")
        assert refused.value.code == 403
        assert json.loads(refused.value.response.body)["reason"] == "not_budget_admin"
        with pytest.raises(HTTPClientError) as refused:
            await query_as(jp_fetch, "ann", "budget/users", day="2026-02-30")
        body = json.loads(refused.value.response.body)
        assert refused.value.code == 400 and "2026-02-30 is not a day of the calendar" in body["message"]
        # Another user's thread is nobody's business: 404, as for one that never was.
        with pytest.raises(HTTPClientError) as refused:
            await query_as(jp_fetch, "bob", "budget", thread_id=ann)
        assert refused.value.code == 404


@pytest.mark.parametrize("jp_server_config", [RACE], indirect=True)
async def test_two_turns_racing_for_the_last_tokens_overspend_by_at_most_one_call_each(jp_fetch, scripted):
    """Ann has 50,000 tokens left; two of her turns start together, each reserving its first
    call's prompt (a few thousand tokens: both fit) before either reply is in. Each reply costs
    300,000 tokens: each turn made that one call, and its next was refused."""
    with _clock.moved(lambda: NOON):
        first, second, spender = [await new_thread(jp_fetch, "ann") for _ in range(3)]
        assert (await turn(jp_fetch, "ann", spender, "spend"))["status"] == "completed"
        held, release = scripted.hold_requests(after=len(scripted.requests))
        before = len(scripted.received)
        racing = [asyncio.ensure_future(turn(jp_fetch, "ann", tid, "race")) for tid in (first, second)]
        deadline = time.monotonic() + 60
        while len(scripted.received) < before + 2:  # both turns' first calls have reached the model
            assert time.monotonic() < deadline and not any(t.done() for t in racing), "a turn did not reach the model"
            await asyncio.sleep(0.05)
        release.set()
        ends = await asyncio.gather(*racing)
        left = await json_as(jp_fetch, "ann", "budget")
    assert [e["status"] for e in ends] == ["budget_exhausted", "budget_exhausted"]
    assert [e["ledger"]["usage"]["calls"] for e in ends] == [1, 1]
    # 950,000 before the race, and one call of 300,000 each: over the limit by those two calls, no more.
    assert left["budgets"][0]["spent_tokens"] == 950_000 + 2 * 300_000


def test_a_wrong_budget_in_the_config_is_refused_with_what_is_wrong():
    app = AnalystApp()
    with pytest.raises(TraitError) as caught:
        app.budgets = {"user/hour": "10 tokens"}
    assert str(caught.value).startswith("AnalystApp.budgets: unknown budget 'user/hour'")
    app.budgets = {"user/day": "10k tokens", "server/day": {"usd": 5}, "timezone": "Europe/Paris"}
    assert app.budgets["timezone"] == "Europe/Paris"


@pytest.mark.parametrize("jp_server_config", [{"budgets": {"thread": "5k tokens"}}], indirect=True)
async def test_a_threads_budget_is_told_with_that_thread(jp_fetch):
    tid = await new_thread(jp_fetch, "ann")
    await turn(jp_fetch, "ann", tid, "how many orders?")
    assert (await json_as(jp_fetch, "ann", "budget"))["budgets"] == []  # no thread named, no thread budget
    (line,) = (await query_as(jp_fetch, "ann", "budget", thread_id=tid))["budgets"]
    assert (line["scope"], line["period"], line["spent_tokens"], line["left_tokens"], line["resets_at"]) == (
        "thread", "total", 700, 4300, None)
    with pytest.raises(HTTPClientError) as refused:
        await query_as(jp_fetch, "ann", "budget", thread_id="../thr_1")
    body = json.loads(refused.value.response.body)
    assert (refused.value.code, body["reason"]) == (400, "invalid_thread_id")
    assert body["message"] == "'thread_id': must be a thread's id (thr_...) (got '../thr_1')"


@pytest.mark.parametrize("jp_server_config", [{}], indirect=True)
async def test_a_server_without_budgets_says_nothing_is_limited(jp_fetch):
    tid = await new_thread(jp_fetch, "ann")
    assert (await turn(jp_fetch, "ann", tid, "how many orders?"))["status"] == "completed"
    assert await json_as(jp_fetch, "ann", "budget") == {"user": "ann", "limited": False, "timezone": "UTC",
                                                       "budgets": [], "exhausted": False, "message": None}
