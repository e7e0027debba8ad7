"""``run --budget``: a user past their daily token limit has the next turn end
``budget_exhausted`` before any model call, told in one line; the next day it runs again."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from jupyter_analyst import _clock
from jupyter_analyst.cli.console import main
from jupyter_analyst.testing import ScriptedModelServer

#: Each reply says what it cost: 600 + 100 tokens a call.
SCRIPT = {"turns": [{"steps": [{"content": "[scripted model] the orders, counted",
                                "usage": {"prompt_tokens": 600, "completion_tokens": 100}}]}]}
NOON = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def model(monkeypatch):
    with ScriptedModelServer(SCRIPT) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        yield server


def run(capsys, tmp_path, sales_db, *extra: str) -> tuple[int, dict]:
    status = main(["run", "--db", str(sales_db), "--prompt", "how many orders?", "--workspace", str(tmp_path / "ws"),
                   "--no-summarizer", "--json", "--budget", "user/day=1000 tokens", *extra])
    out = capsys.readouterr().out.strip().splitlines()
    return status, json.loads(out[-1])


def test_a_user_past_the_daily_limit_is_stopped_before_the_model_is_asked_until_the_day_ends(
        model, capsys, tmp_path, sales_db):
    with _clock.moved(lambda: NOON):
        first = run(capsys, tmp_path, sales_db)
        second = run(capsys, tmp_path, sales_db)  # 700 of 1,000: still under
        third = run(capsys, tmp_path, sales_db)
    assert (first[0], first[1]["status"]) == (0, "completed")
    assert (second[0], second[1]["status"]) == (0, "completed")
    status, summary = third
    assert (status, summary["status"]) == (1, "budget_exhausted")
    assert summary["message"] == ("the daily budget of user 'local' is spent: 1,400 tokens used of 1,000 today; "
                                  "it resets at 2026-03-11 00:00 UTC")
    assert summary["ledger"]["usage"]["calls"] == 0
    assert len(model.requests) == 2  # the third turn sent nothing
    with _clock.moved(lambda: NOON + timedelta(days=1)):
        status, summary = run(capsys, tmp_path, sales_db)
    assert (status, summary["status"]) == (0, "completed")
    assert len(model.requests) == 3


def test_the_day_ends_at_midnight_of_the_configured_zone(model, capsys, tmp_path, sales_db):
    with _clock.moved(lambda: NOON):
        run(capsys, tmp_path, sales_db, "--budget", "user/day=500 tokens", "--budget", "timezone=Asia/Tokyo")
        status, summary = run(capsys, tmp_path, sales_db, "--budget", "user/day=500 tokens",
                              "--budget", "timezone=Asia/Tokyo")
    assert status == 1 and summary["message"].endswith("it resets at 2026-03-11 00:00 Asia/Tokyo time")
    # 15:00 UTC is already the next day in Tokyo.
    with _clock.moved(lambda: NOON + timedelta(hours=3)):
        status, summary = run(capsys, tmp_path, sales_db, "--budget", "user/day=500 tokens",
                              "--budget", "timezone=Asia/Tokyo")
    assert (status, summary["status"]) == (0, "completed")


@pytest.mark.parametrize(("budget", "said"), [
    ("user/week=5k tokens", "error: unknown budget 'user/week'"),
    ("user/day=lots", "error: invalid budget user/day: 'lots' is not a limit"),
    ("timezone=Mars/Olympus", "error: invalid budget timezone: unknown time zone 'Mars/Olympus'"),
])
def test_a_budget_that_is_not_one_is_a_clear_error_before_anything_runs(model, capsys, tmp_path, sales_db, budget, said):
    status = main(["run", "--db", str(sales_db), "--prompt", "hi", "--workspace", str(tmp_path / "ws"),
                   "--no-summarizer", "--budget", budget])
    err = capsys.readouterr().err
    assert status == 2 and err.splitlines()[0].startswith(said), err
    assert not model.requests


def test_a_cost_budget_without_a_price_is_refused_with_what_to_do(model, capsys, tmp_path, sales_db):
    status = main(["run", "--db", str(sales_db), "--prompt", "hi", "--workspace", str(tmp_path / "ws"),
                   "--no-summarizer", "--budget", "user/day=$1"])
    err = capsys.readouterr().err
    assert status == 2 and "a cost budget is configured, but no price for model" in err, err
    assert not model.requests
