"""The model's spending as budgets count it, on SQLite and PostgreSQL: a call reserved before it
is sent and settled after; the check and the reservation one step, so callers racing for the
last tokens of a budget overspend by at most one call each."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from jupyter_analyst.budgets import parse_budgets
from jupyter_analyst.store import ThreadStore

NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def test_a_call_is_refused_once_a_limit_is_reached_and_only_in_its_scope(store_location):
    store = ThreadStore(store_location)
    try:
        budgets = parse_budgets({"user/day": "1000 tokens", "thread": "1500 tokens"})
        ann = store.create_thread(user="ann")
        ann_too = store.create_thread(user="ann")
        bob = store.create_thread(user="bob")
        held = store.reserve_spend(budgets, user="ann", thread_id=ann.thread_id, turn_id="t1", tokens=300, usd=None,
                                   now=NOON)
        assert isinstance(held, str)
        # Until it is settled, its estimate counts.
        (day, thread) = store.budget_lines(budgets, user="ann", thread_id=ann.thread_id, now=NOON)
        assert (day.scope, day.spent_tokens, day.left_tokens, thread.spent_tokens) == ("user", 300, 700, 300)
        store.settle_spend(held, tokens=1200, usd=None)
        refused = store.reserve_spend(budgets, user="ann", thread_id=ann_too.thread_id, turn_id="t2", tokens=10,
                                      usd=None, now=NOON + timedelta(hours=1))
        assert [(line.scope, line.spent_tokens, line.exhausted) for line in refused] == [("user", 1200, True)]
        assert refused[0].resets_at == "2026-03-11T00:00:00.000Z"
        # Another user is not held to ann's spending.
        assert isinstance(store.reserve_spend(budgets, user="bob", thread_id=bob.thread_id, turn_id="t3", tokens=10,
                                              usd=None, now=NOON), str)
        # The next day ann's daily limit starts again; her thread's (for good) still counts the 1,200.
        tomorrow = NOON + timedelta(days=1)
        assert isinstance(store.reserve_spend(budgets, user="ann", thread_id=ann.thread_id, turn_id="t4", tokens=400,
                                              usd=None, now=tomorrow), str)
        refused = store.reserve_spend(budgets, user="ann", thread_id=ann.thread_id, turn_id="t5", tokens=1,
                                      usd=None, now=tomorrow)
        assert [(line.scope, line.period, line.spent_tokens, line.resets_at) for line in refused] == [
            ("thread", "total", 1600, None)]
        assert store.spending_by_user() == {
            "ann": store.spending_by_user()["ann"], "bob": store.spending_by_user()["bob"]}
        assert store.spending_by_user()["ann"].tokens == 1600
        assert store.spending_by_user(NOON, NOON + timedelta(hours=12))["ann"].tokens == 1200
    finally:
        store.close()


def test_deleting_a_thread_gives_none_of_its_tokens_back(store_location):
    store = ThreadStore(store_location)
    try:
        budgets = parse_budgets({"user/day": "500 tokens"})
        thread = store.create_thread(user="ann")
        held = store.reserve_spend(budgets, user="ann", thread_id=thread.thread_id, turn_id="t", tokens=10, usd=None,
                                   now=NOON)
        store.settle_spend(held, tokens=600, usd=None)
        store.delete_thread(thread.thread_id)
        (line,) = store.budget_lines(budgets, user="ann", thread_id=None, now=NOON)
        assert (line.spent_tokens, line.exhausted) == (600, True)
    finally:
        store.close()


def test_a_cost_limit_counts_dollars_and_the_server_limit_every_user(store_location):
    store = ThreadStore(store_location)
    try:
        budgets = parse_budgets({"server/day": "$1", "user/day": "$0.75"})
        ann, bob = store.create_thread(user="ann"), store.create_thread(user="bob")
        held = store.reserve_spend(budgets, user="ann", thread_id=ann.thread_id, turn_id="a", tokens=5, usd=0.01,
                                   now=NOON)
        store.settle_spend(held, tokens=50, usd=0.8)
        refused = store.reserve_spend(budgets, user="ann", thread_id=ann.thread_id, turn_id="a2", tokens=5, usd=0.01,
                                      now=NOON)
        assert [line.scope for line in refused] == ["user"]
        held = store.reserve_spend(budgets, user="bob", thread_id=bob.thread_id, turn_id="b", tokens=5, usd=0.01,
                                   now=NOON)
        store.settle_spend(held, tokens=50, usd=0.25)
        refused = store.reserve_spend(budgets, user="bob", thread_id=bob.thread_id, turn_id="b2", tokens=5, usd=0.01,
                                      now=NOON)
        (server,) = refused
        assert (server.scope, server.spent_usd, server.left_usd) == ("server", 1.05, 0.0)
    finally:
        store.close()


def test_callers_racing_for_the_last_tokens_overspend_by_at_most_one_call_each(store_location):
    """Eight callers, each with its own connection (as eight server processes would have),
    start together against a budget 50 tokens short of its limit; each call is reserved at its
    prompt's estimate, 10 tokens, and costs 250. Every caller keeps calling until refused."""
    limit, callers, cost = 10_000, 8, 250
    budgets = parse_budgets({"user/day": f"{limit} tokens"})
    setup = ThreadStore(store_location)
    thread = setup.create_thread(user="ann")
    held = setup.reserve_spend(budgets, user="ann", thread_id=thread.thread_id, turn_id="t0", tokens=1, usd=None,
                               now=NOON)
    setup.settle_spend(held, tokens=limit - 50, usd=None)
    start = threading.Barrier(callers)
    granted: list[int] = [0] * callers
    failures: list[BaseException] = []

    def caller(index: int) -> None:
        store = ThreadStore(store_location)
        try:
            start.wait()
            while True:
                held = store.reserve_spend(budgets, user="ann", thread_id=thread.thread_id, turn_id=f"t{index}",
                                           tokens=10, usd=None, now=NOON)
                if not isinstance(held, str):
                    return
                granted[index] += 1
                store.settle_spend(held, tokens=cost, usd=None)
        except BaseException as exc:  # noqa: BLE001 - said by the test below
            failures.append(exc)
        finally:
            store.close()

    workers = [threading.Thread(target=caller, args=(i,)) for i in range(callers)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    try:
        assert not failures, failures
        # A call is granted only while what was spent and reserved stays under the limit: at
        # most five reservations of 10 fit in the 50 tokens left, and no caller got a second call.
        assert 1 <= sum(granted) <= 5 and max(granted) == 1, granted
        (line,) = setup.budget_lines(budgets, user="ann", thread_id=None, now=NOON)
        assert line.spent_tokens == limit - 50 + cost * sum(granted)
        assert line.spent_tokens - limit < callers * cost
    finally:
        setup.close()
