"""A query that ignores its interrupt: one engine call building a huge value from the data
(a ``regexp_replace`` over one long string). It names no size, so the guard lets it through,
and DuckDB takes an interrupt only between vectors. Its turn goes on all the same: the
model is told ``query_timeout`` with the limit, and the command line prints its JSON.

Before the fix the runner closed the busy connection when it gave up waiting: DuckDB's
``ResourceInUseException`` escaped the step, the turn ended in error, and ``run --json``
exited with a traceback and no JSON. Then the call was set aside until it returned, holding a
thread and its memory; now its engine worker is killed at the give-up wait.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from jupyter_analyst.store import ThreadStore
from jupyter_analyst.testing import ScriptedModelServer, TurnRunner, sql_step, text_step as say
from jupyter_analyst.testing.slow_queries import STUBBORN, build_stubborn_db

#: Seconds a query may run here; its call runs for many more (100 million characters: about
#: ten seconds on two cores, past the timeout and the give-up wait on a fast machine too).
TIMEOUT_S = 1.0
SCRIPT = {"turns": [{"steps": [sql_step(STUBBORN, "n"), say("[scripted model] it ran past its time")]}]}


@pytest.fixture(scope="module")
def stubborn_db(tmp_path_factory):
    return build_stubborn_db(tmp_path_factory.mktemp("stubborn") / "blob.duckdb", 100_000_000)


def _told_timeout(result: dict) -> None:
    error = result["error"]
    assert error["reason"] == "query_timeout", error
    assert f"ran past {TIMEOUT_S:g} s" in error["message"], error
    assert "took no interrupt, so its engine process was ended" in error["message"], error
    assert "huge string" in error["hint"]


def test_a_turn_whose_query_ignores_its_interrupt_tells_the_model_and_completes(tmp_path, stubborn_db):
    with ScriptedModelServer(SCRIPT) as server:
        analyst = TurnRunner(tmp_path / "ws", server, stubborn_db)
        summary = analyst.run("how long is it after the replace?", query_timeout_s=TIMEOUT_S)
        asked = server.requests
    assert summary.status == "completed", summary.error
    (result,) = analyst.of_type("tool_result")
    assert result.status == "error"
    _told_timeout(result.result)
    # The model's next request carries the step's result.
    assert "query_timeout" in json.dumps(asked[-1]["messages"][-1])
    _join_query_threads()


def test_run_json_prints_its_json_when_a_query_ignores_its_interrupt(tmp_path, stubborn_db):
    with ScriptedModelServer(SCRIPT) as server:
        base = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        out = subprocess.run(
            [sys.executable, "-m", "jupyter_analyst.cli", "run", "--db", str(stubborn_db), "--prompt", "how long?",
             "--workspace", str(tmp_path / "ws"), "--json", "--no-summarizer", "--query-timeout", str(TIMEOUT_S)],
            env={**base, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "x"},
            capture_output=True, text=True, timeout=600,
        )
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 0, out.stderr
    (line,) = out.stdout.splitlines()
    summary = json.loads(line)
    assert summary["status"] == "completed" and summary["answer"] == "[scripted model] it ran past its time"
    store = ThreadStore(tmp_path / "ws" / "analyst.sqlite3")
    try:
        (result,) = store.events(summary["thread_id"], types=["tool_result"])
    finally:
        store.close()
    _told_timeout(result.result)


def _join_query_threads() -> None:
    """No query's thread runs on: its worker was killed, and the thread let go at once."""
    for thread in threading.enumerate():
        if thread.name.startswith("analyst-query"):
            thread.join(timeout=10)
            assert not thread.is_alive()
