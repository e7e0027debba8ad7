"""A turn's model calls held to the budgets: the end-of-turn summarizer's call counts against them
and is not sent once one is spent; a thread's own budget ends only that thread's turns; a cost
budget counts the priced calls; the thread's notebook says how the turn ended."""

from __future__ import annotations

from datetime import UTC, datetime

import nbformat

from jupyter_analyst import _clock
from jupyter_analyst.testing import MODEL_NAME
from jupyter_analyst.workspace import Workspace


def usage(prompt: int, completion: int) -> dict:
    return {"prompt_tokens": prompt, "completion_tokens": completion}


SCRIPT = {
    "turns": [{"steps": [{"content": "[scripted model] the orders, counted", "usage": usage(600, 100)}]}],
    "summarizer": [{"steps": [{"content": "{}", "usage": usage(150, 50)}]}],
}
NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def spent_today(tmp_path, budgets) -> int:
    from jupyter_analyst.budgets import parse_budgets

    workspace = Workspace(tmp_path / "ws")
    try:
        (line,) = workspace.store.budget_lines(parse_budgets(budgets), user="local", thread_id=None, now=NOON)
        return line.spent_tokens
    finally:
        workspace.close()


def test_the_summarizers_call_counts_and_is_not_sent_once_a_budget_is_spent(analyst, tmp_path):
    runner = analyst(SCRIPT)
    budgets = {"user/day": "1500 tokens"}
    with _clock.moved(lambda: NOON):
        first = runner.run("how many orders?", budgets=budgets, summarizer=True)
        assert first.status == "completed" and len(runner.server.summarizer_requests) == 1
        # The turn's call, then the summarizer's: what the turn's ledger counts, call by call.
        ledger = first.ledger
        assert spent_today(tmp_path, budgets) == 700 + 200 == (
            ledger.usage.prompt_tokens + ledger.usage.completion_tokens
            + ledger.summarizer.prompt_tokens + ledger.summarizer.completion_tokens)
        second = runner.run("and now?", thread=first.thread_id, budgets=budgets, summarizer=True)
        # 1,600 spent by the second turn's end: its summarizer's call is not sent.
        assert second.status == "completed" and len(runner.server.summarizer_requests) == 1
        third = runner.run("and again?", thread=first.thread_id, budgets=budgets, summarizer=True)
    assert third.status == "budget_exhausted"
    assert third.message.startswith("the daily budget of user 'local' is spent: 1,600 tokens used of 1,500 today")
    assert len(runner.server.requests) == 2
    # The thread's notebook marks the turn.
    notebook = nbformat.read(third.notebook, as_version=4)
    assert any("**Budget spent**" in cell.source for cell in notebook.cells)


def test_a_threads_budget_ends_only_that_threads_turns(analyst):
    runner = analyst(SCRIPT)
    budgets = {"thread": "700 tokens"}
    first = runner.run("how many orders?", budgets=budgets, summarizer=False)
    again = runner.run("and now?", thread=first.thread_id, budgets=budgets, summarizer=False)
    assert again.status == "budget_exhausted"
    assert again.message == ("the budget of this thread is spent: 700 tokens used of 700; it does not reset "
                             "(start a new thread)")
    assert runner.run("how many orders?", budgets=budgets, summarizer=False).status == "completed"


def test_a_cost_budget_counts_the_priced_calls(analyst):
    runner = analyst(SCRIPT)
    priced = {"prices": {MODEL_NAME: "1000/2000"}, "summarizer": False, "budgets": {"server/day": "$0.75"}}
    first = runner.run("how many orders?", **priced)  # 600 * $0.001 + 100 * $0.002 = $0.80
    assert first.ledger.usage.cost_usd == 0.8
    then = runner.run("and now?", thread=first.thread_id, **priced)
    assert then.status == "budget_exhausted"
    assert then.message.startswith("the daily budget of this server is spent: $0.8 used of $0.75 today")


def test_each_call_counts_what_the_ledger_counts_the_estimate_where_the_server_says_nothing(analyst, tmp_path):
    script = {"turns": [{"steps": [
        {"tool_calls": [{"name": "list_tables", "arguments": {}}], "usage": "none"},
        {"content": "[scripted model] three tables", "usage": usage(900, 30)}]}]}
    runner = analyst(script)
    budgets = {"user/day": "1M tokens"}
    with _clock.moved(lambda: NOON):
        done = runner.run("which tables?", budgets=budgets, summarizer=False)
    usage_ = done.ledger.usage
    assert (usage_.calls, usage_.counted_by) == (2, "mixed")
    assert spent_today(tmp_path, budgets) == usage_.prompt_tokens + usage_.completion_tokens > 930
