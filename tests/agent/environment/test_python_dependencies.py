"""A Python step depends on the steps that bound the names it reads.

Its key includes, per name it reads, the dataset's fingerprint or the key of the Python
step that assigned it; and before it executes, the kernel is made to hold exactly those
values (a reused step changes nothing in the kernel, so it may hold a later value).
Real kernels, the real SDK over HTTP; the model's words are scripted.
"""

from __future__ import annotations

import pytest

from jupyter_analyst.testing import python_step as py_step, sql_step, text_step as answer

REVENUE_SQL = (
    "SELECT r.region, SUM(o.revenue) AS revenue FROM orders o "
    "JOIN regions r ON o.region_id = r.region_id GROUP BY r.region ORDER BY r.region"
)

SET_X = "x = 1"
SET_X_OTHER = "x = 5"
BUMP_X = "x = x + 10\nprint(x)"
DOUBLE_X = "doubled = x * 2\nprint(doubled)\nopen('outputs/double.txt', 'w').write(str(doubled))"

SCRIPT = {"turns": [
    # x = 1, then x = 11.
    {"match": "^first$", "steps": [py_step(SET_X), py_step(BUMP_X), answer()]},
    # x = 1 again (reused); the next step reads x: it must see 1, as a notebook would.
    {"match": "^second$", "steps": [py_step(SET_X), py_step(DOUBLE_X), answer()]},
    # x = 5 (new), then the same code as before: its input changed, so it runs again.
    {"match": "^third$", "steps": [py_step(SET_X_OTHER), py_step(BUMP_X), answer()]},
    # The first turn's steps again: x = 1 is recorded, and x + 10 on it too.
    {"match": "^again$", "steps": [py_step(SET_X), py_step(BUMP_X), answer()]},
    # A new step reading what the second turn's step made.
    {"match": "^fourth$", "steps": [py_step("print(doubled + 100)"), answer()]},
]}


def results(a, turn_id: str) -> list:
    return [e for e in a.of_type("tool_result") if e.turn_id == turn_id]


@pytest.fixture
def thread(analyst):
    a = analyst(SCRIPT)
    first = a.run("first")
    assert first.status == "completed" and first.tool_calls["executed"] == 2
    return a, first.thread_id


def test_a_step_whose_input_changed_runs_again(thread):
    a, thread_id = thread
    third = a.run("third", thread=thread_id)
    bump = results(a, third.turn_id)[1]
    assert not bump.reused and bump.result["stdout"].strip() == "15"
    # The first turn's steps, asked again, are both recorded: nothing runs.
    again = a.run("again", thread=thread_id)
    assert again.tool_calls == {"executed": 0, "reused": 2, "blocked": 0}
    assert results(a, again.turn_id)[1].result["stdout"].strip() == "11"


def test_a_reused_step_is_what_the_next_step_reads(thread):
    a, thread_id = thread
    second = a.run("second", thread=thread_id)
    set_x, double = results(a, second.turn_id)
    assert set_x.reused and not double.reused
    # The kernel held 11 (x + 10 ran last), but the reused `x = 1` is what comes before.
    assert double.result["stdout"].strip() == "2"


def test_a_reused_step_is_aligned_in_a_new_process_too(thread, tmp_path):
    # Each run_turn is its own kernel: the new kernel replays x = 1 then x = 11, and the
    # reused `x = 1` must still win before `x * 2` runs.
    a, thread_id = thread
    a.run("second", thread=thread_id)
    made = {e.name: e for e in a.of_type("artifact")}
    from jupyter_analyst.workspace import Workspace

    ws = Workspace(a.workspace)
    try:
        artifact = ws.artifacts.get(made["outputs/double.txt"].artifact_id)
        assert ws.artifacts.read_bytes(artifact.artifact_id) == b"2"
    finally:
        ws.close()


def test_a_new_kernel_replays_each_step_on_its_own_inputs(thread):
    # The new kernel replays x = 1, x = x + 10, then `doubled = x * 2`, which was made
    # after the reused x = 1: it is replayed on x = 1 again, so doubled is 2, not 22.
    a, thread_id = thread
    a.run("second", thread=thread_id)
    fourth = a.run("fourth", thread=thread_id)
    assert results(a, fourth.turn_id)[0].result["stdout"].strip() == "102"


def test_a_thread_recorded_without_bindings_reads_them_off_its_ledger(thread):
    import sqlite3

    a, thread_id = thread
    with sqlite3.connect(a.workspace / "analyst.sqlite3") as db:
        assert db.execute("DELETE FROM bindings WHERE thread_id = ?", (thread_id,)).rowcount == 1  # x
    again = a.run("again", thread=thread_id)
    assert again.tool_calls == {"executed": 0, "reused": 2, "blocked": 0}


def test_the_exported_thread_verifies(thread, tmp_path):
    """The agent's kernel followed the notebook's order, so the notebook reproduces it."""
    from jupyter_analyst.notebooks.export import export_thread, write_export
    from jupyter_analyst.notebooks.verify import verify_notebook
    from jupyter_analyst.workspace import Workspace

    a, thread_id = thread
    for prompt in ("second", "third"):
        a.run(prompt, thread=thread_id)
    ws = Workspace(a.workspace)
    try:
        path = write_export(export_thread(ws.store, ws.artifacts, thread_id), tmp_path / "deps.ipynb")
    finally:
        ws.close()
    report = verify_notebook(path, source=str(a.source))
    assert report.ok, report.model_dump()
    assert report.counts["matched"] == 1


def test_a_dataset_rebound_by_python_is_an_input_of_later_steps(analyst):
    head = "revenue = revenue.head(2)"
    count = "print(len(revenue))"
    a = analyst({"turns": [
        {"match": "^fetch$", "steps": [sql_step(REVENUE_SQL, "revenue"), py_step(count), answer()]},
        {"match": "^cut$", "steps": [py_step(head), py_step(count), answer()]},
        {"match": "^refetch$", "steps": [sql_step(REVENUE_SQL, "revenue"), py_step(count), answer()]},
    ]})
    fetch = a.run("fetch")
    cut = a.run("cut", thread=fetch.thread_id)
    # The count reads the cut DataFrame now: a different input, so it runs, and says 2.
    assert results(a, cut.turn_id)[1].result["stdout"].strip() == "2"
    refetch = a.run("refetch", thread=fetch.thread_id)
    # The same query again (reused) binds the whole dataset back: the first count is reused.
    counted = results(a, refetch.turn_id)
    assert counted[0].reused and counted[1].reused
    assert counted[1].result["stdout"].strip() == str(fetch_rows(a, fetch.turn_id))


def fetch_rows(a, turn_id: str) -> int:
    return results(a, turn_id)[0].result["rows"]
