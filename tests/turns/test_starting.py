"""A turn tells what it waits for while something it needs starts (``starting``), and only then:
the thread's sandboxed kernel when none runs, the SQL checker's worker at a process's first
query. The server's engine is told by the server (tests/server/test_service.py)."""

from __future__ import annotations

import select

from jupyter_analyst.events import STARTING_MESSAGES
from jupyter_analyst.sql.preparer import WorkerPool
from jupyter_analyst.testing import python_step, sql_step, text_step

CODE = "print(6 * 7)"


def test_a_python_step_that_starts_the_kernel_says_so_before_it_runs(analyst):
    a = analyst({"turns": [
        {"match": "first", "steps": [python_step(CODE), text_step()]},
        {"match": "again", "steps": [python_step(CODE), text_step()]},
    ]})
    summary = a.run("first")
    types = [e.type for e in a.events]
    call = types.index("tool_call")
    (told,) = a.of_type("starting")
    # After the step's card (its call), before anything it ran: the kernel is what it waits for.
    assert call < types.index("starting") < types.index("step_output") < types.index("tool_result")
    assert (told.what, told.message) == ("kernel", STARTING_MESSAGES["kernel"]) == ("kernel", "Starting the sandboxed Python kernel…")
    assert told.turn_id == summary.turn_id and told.seq > 0  # stored, as every event is
    # The same step again: reused, no kernel needed, nothing said.
    a.events.clear()
    a.run("again", thread=summary.thread_id)
    assert a.of_type("tool_result")[0].reused and a.of_type("starting") == []


def test_the_sql_checker_is_cold_until_a_worker_has_said_it_is_ready():
    pool = WorkerPool(size=1)
    try:
        assert not pool.started  # no worker at all: the first query would wait for one
        pool.warm(1)
        (worker,) = pool._all
        # Its ready line has arrived (it imported what it needs): seen by a look, no job waiting.
        assert select.select([worker.proc.stdout], [], [], 60)[0]
        assert pool.started and worker.ready
    finally:
        pool.close()


def test_a_query_the_workspace_checked_before_waits_for_no_checker_in_a_new_process(analyst, monkeypatch):
    from jupyter_analyst.sql import preparer as preparation

    sql = "SELECT region, COUNT(*) AS n FROM regions GROUP BY region"
    a = analyst({"turns": [
        {"match": "first", "steps": [sql_step(sql, "counts"), text_step()]},
        {"match": "again", "steps": [sql_step(sql, "counts"), text_step()]},
    ]})
    first = a.run("first")
    # As a new process on the same workspace: no check remembered in memory, no worker started.
    monkeypatch.setattr(preparation, "_checked", preparation._Checked())
    monkeypatch.setattr(preparation, "_pool", None)
    before = preparation.prepared_count()
    a.events.clear()
    try:
        a.run("again", thread=first.thread_id)
    finally:
        if preparation._pool is not None:
            preparation._pool.close()
    (result,) = a.of_type("tool_result")
    assert result.reused
    assert preparation.prepared_count() == before  # its check came from the workspace
    assert [e.what for e in a.of_type("starting")] == []  # nothing said to be starting
