"""A new kernel for a thread with history restores only what the next step reads.

Each turn here runs in its own kernel (as the command line does, or the server after a
kernel was culled): the steps that made what a step reads run again, no other. When what a
step reads cannot be told from its code, the whole history is replayed first. Every step
appends its name to a log in the kernel's folder, so the replays can be counted.
Real kernels, the real SDK over HTTP; the model's words are scripted.
"""

from __future__ import annotations

import pytest

from jupyter_analyst.testing import python_step as py_step, text_step as answer


def logged(code: str, name: str) -> str:
    return f"{code}\nopen('replays.log', 'a').write('{name}\\n')"


SCRIPT = {"turns": [
    {"match": "^one$", "steps": [py_step(logged("base = 40\nitems = []", "one")), answer()]},
    {"match": "^two$", "steps": [py_step(logged("other = 2\nitems.append(7)", "two")), answer()]},
    # Reads only `base`, made two turns earlier: only that step runs again.
    {"match": "^three$", "steps": [py_step("print(base + 2)"), answer()]},
    # `items` was changed in place by turn two's `.append`: the whole history is replayed.
    {"match": "^count$", "steps": [py_step("print(len(items))"), answer()]},
    # What `globals()` reads cannot be told: the whole history is replayed.
    {"match": "^dynamic$", "steps": [py_step("print(globals()['other'] + base)"), answer()]},
]}


@pytest.fixture
def thread(analyst):
    a = analyst(SCRIPT)
    first = a.run("one")
    a.run("two", thread=first.thread_id)
    # Turn two's own kernel ran turn one's step again: the `items` it appends to.
    assert replays(a, first.thread_id) == ["one", "one", "two"]
    return a, first.thread_id


def replays(a, thread_id: str) -> list[str]:
    return (a.workspace / "kernels" / thread_id / "replays.log").read_text().split()


def stdout_of_last_step(a) -> str:
    return a.of_type("tool_result")[-1].result["stdout"].strip()


def test_a_new_kernel_runs_again_only_the_steps_the_next_step_reads(thread):
    a, thread_id = thread
    third = a.run("three", thread=thread_id)
    assert third.status == "completed" and stdout_of_last_step(a) == "42"
    assert replays(a, thread_id)[3:] == ["one"]


@pytest.mark.parametrize(("prompt", "printed"), [("count", "1"), ("dynamic", "42")])
def test_a_step_whose_inputs_cannot_be_told_gets_the_whole_history(thread, prompt, printed):
    a, thread_id = thread
    out = a.run(prompt, thread=thread_id)
    assert out.status == "completed" and stdout_of_last_step(a) == printed
    assert replays(a, thread_id)[3:] == ["one", "two"]


# ---------------------------------------------------------------- when only a part may be restored


@pytest.fixture
def runtime(tmp_path, sales_db):
    """A thread's runtime over a real workspace; no kernel is started."""
    from jupyter_analyst.agent.environment import ThreadEnvironment
    from jupyter_analyst.sql import open_source
    from jupyter_analyst.workspace import Workspace

    workspace = Workspace(tmp_path / "ws")
    thread = workspace.store.create_thread(source=str(sales_db))
    source = open_source(str(sales_db))
    yield ThreadEnvironment(thread_id=thread.thread_id, source=source, artifacts=workspace.artifacts,
                        workdir=workspace.kernel_dir(thread.thread_id))
    source.close()
    workspace.close()


def record(runtime, key: str, code: str) -> None:
    """A Python step that ran in the thread: recorded with its inputs, its names bound."""
    from jupyter_analyst.agent.environment.bindings import inputs_of
    from jupyter_analyst.artifacts import StepRecord

    inputs = inputs_of(code, runtime.bindings())
    runtime.artifacts.record_step(StepRecord(
        thread_id=runtime.thread_id, step_key=key, tool="run_python", call_id=key, turn_id="turn", arguments={"code": code},
        status="ok", result={"_inputs": inputs}, artifact_ids=[], created_at="2026-01-01T00:00:00Z", duration_s=0.0,
    ))
    runtime.python_executed(code, key, ok=True)


@pytest.mark.parametrize(("code", "refused"), [
    ("print(y + 1)", None),
    ("print(f())", "reads f, made by a step that reads k, which no step bound"),  # k was bound after f
    ("print(sqrt(2))", "it reads sqrt, which no step bound"),  # a star import's
    ("%time print(y)", "it is not plain Python"),
    ("print(len(items))", "reads items, which a later step may have changed in place"),
    ("print(vars()['y'])", "it reads the namespace through vars"),
])
def test_only_what_the_code_shows_it_reads_is_restored_alone(runtime, code, refused):
    from jupyter_analyst.agent.environment.bindings import inputs_of

    for key, step in [("step:f", "def f():\n    return k * 2"), ("step:k", "k = 3"), ("step:y", "y = 1"),
                      ("step:star", "from math import *"), ("step:items", "items = []"),
                      ("step:grow", "items.append(y)")]:
        record(runtime, key, step)
    assert runtime.lazy_restore_refused(code, inputs_of(code, runtime.bindings())) == refused
