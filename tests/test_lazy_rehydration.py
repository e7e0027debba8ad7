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
