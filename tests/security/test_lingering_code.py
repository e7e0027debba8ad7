"""A step's code does not outlive its step: a kernel that keeps running it is replaced.

Before the fix a thread started by a step kept running after the step, and after the turn
in a server's kept kernel, and what it wrote under ``outputs/`` was stored as the next
step's work; a forged ``status: idle`` ended a step while its code ran on, with the same
effect. The host now checks from outside (``/proc``) that nothing of a step runs once it
says it has ended, and freezes the kernel until the next step.
"""

from __future__ import annotations

import pytest

from jupyter_analyst.testing import ScriptedModelServer, python_step, text_step
from jupyter_analyst.testing.servers.jupyter import analyst_server_config

from .conftest import results_of, sandboxed_root, scripted

pytestmark = sandboxed_root()

WRITER = """
import threading, time
def linger():
    n = 0
    while True:
        n += 1
        with open("outputs/late.txt", "a") as fh:
            fh.write(f"{n}\\n")
        time.sleep(0.05)
threading.Thread(target=linger, name="lingering", daemon=True).start()
time.sleep(0.2)
"""
BURNER = """
import threading, time
def linger():
    n = 0
    while True:
        n += 1
        with open("outputs/late.txt", "a") as fh:
            fh.write(f"{n}\\n")
        busy_until = time.monotonic() + 0.05
        while time.monotonic() < busy_until:
            pass
threading.Thread(target=linger, name="lingering", daemon=True).start()
"""
FORGED_IDLE = """
import time
kernel = get_ipython().kernel
kernel.session.send(kernel.iopub_socket, "status", {"execution_state": "idle"}, parent=kernel.get_parent())
time.sleep(0.3)
open("outputs/late.txt", "w").write("written after the kernel said the step had ended")
time.sleep(3)
"""
MINE = "open('outputs/mine.txt', 'w').write('mine')"
LOOK = """
import threading, time
before = open("outputs/late.txt").read().count("\\n")
time.sleep(0.5)
after = open("outputs/late.txt").read().count("\\n")
print(before == after, "lingering" in [t.name for t in threading.enumerate()])
"""


def _names(result) -> list[str]:
    return [a["name"] for a in result.result["artifacts"]]


@pytest.mark.parametrize("attack", [WRITER, BURNER, FORGED_IDLE], ids=["writer-thread", "cpu-thread", "forged-idle"])
def test_code_left_running_by_a_step_is_stopped_and_its_files_are_not_the_next_steps(tmp_path, sales_db, attack):
    steps = [python_step(attack), python_step(MINE), python_step(LOOK), text_step()]
    with scripted(tmp_path / "ws", sales_db, {"turns": [{"match": ".", "steps": steps}]}) as runner:
        summary = runner.run("linger")
    assert summary.status == "completed"
    first, second, third = results_of(runner, summary.turn_id)
    # The next step's work is its own file only; after it, nothing of the first step runs.
    assert second.status == "ok" and _names(second) == ["outputs/mine.txt"], second.result
    assert third.result["stdout"] == "True False\n", third.result
    # The first step is told why its kernel was replaced, and stores nothing.
    assert first.status == "error" and first.result["error"]["reason"] == "kernel_runaway", first.result
    assert "still ran after the step ended" in first.result["error"]["message"]
    assert first.artifact_ids == []


TIMERS = {
    "alarm-signal": """
import signal
signal.signal(signal.SIGALRM, lambda *_: open("outputs/late.txt", "w").write("rang\\n"))
signal.setitimer(signal.ITIMER_REAL, 3)
""",
    "main-loop-timer": """
import asyncio
asyncio.get_event_loop().call_later(3, lambda: open("outputs/late.txt", "w").write("rang\\n"))
""",
    "iopub-loop-timer": """
get_ipython().kernel.iopub_thread.io_loop.call_later(3, lambda: open("outputs/late.txt", "w").write("rang\\n"))
""",
}
#: Long enough for a timer of the step before to fire meanwhile, had its kernel been kept.
SLOW_MINE = "import time\ntime.sleep(3.5)\nopen('outputs/mine.txt', 'w').write('mine')"


@pytest.mark.parametrize("attack", list(TIMERS.values()), ids=list(TIMERS))
def test_a_timer_set_by_a_step_never_fires_in_the_next_one(tmp_path, sales_db, attack):
    """Timers that fire past the time a step is given to come to rest (a timer that fires
    within it is the step's own, and what it writes is stored as the step's)."""
    steps = [python_step(attack), python_step(SLOW_MINE), text_step()]
    with scripted(tmp_path / "ws", sales_db, {"turns": [{"match": ".", "steps": steps}]}) as runner:
        summary = runner.run("set a timer")
    first, second = results_of(runner, summary.turn_id)
    assert second.status == "ok" and _names(second) == ["outputs/mine.txt"], second.result
    assert first.status == "error" and first.result["error"]["reason"] == "kernel_runaway", first.result


def test_library_thread_pools_are_not_taken_for_code_left_running(tmp_path, sales_db):
    work = """
import faulthandler
import duckdb, numpy as np, pandas as pd, pyarrow.parquet as pq, matplotlib.pyplot as plt
from tqdm.auto import tqdm
faulthandler.enable()
total = sum(i for i in tqdm(range(1000)))
a = np.random.default_rng(0).random((800, 800))
product = float((a @ a).sum())
frame = pd.DataFrame({"k": np.arange(300_000) % 7, "v": np.arange(300_000)})
frame.to_parquet("frame.parquet")
back = pq.read_table("frame.parquet").to_pandas().groupby("k").v.sum()
counted = duckdb.sql("select count(*) from frame").fetchall()[0][0]
plt.plot(back.values); plt.show()
marker = "same kernel"
"""
    steps = [python_step(work), python_step("print(marker)"), text_step()]
    with scripted(tmp_path / "ws", sales_db, {"turns": [{"match": ".", "steps": steps}]}) as runner:
        summary = runner.run("work")
    first, second = results_of(runner, summary.turn_id)
    assert first.status == "ok" and len(first.artifact_ids) == 1, first.result
    assert second.status == "ok" and second.result["stdout"] == "same kernel\n", second.result


SERVER_SCRIPT = {"turns": [
    {"match": "^leave a thread$", "steps": [python_step(WRITER), text_step()]},
    {"match": "^next turn$", "steps": [python_step(MINE), python_step(LOOK), text_step()]},
]}


@pytest.fixture
def jp_server_config(tmp_path, sales_db):
    with ScriptedModelServer(SERVER_SCRIPT) as model:
        yield analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, model.base_url, kernel_idle=3600.0)


async def test_a_thread_left_by_a_step_does_not_run_on_in_a_servers_kept_kernel(jp_serverapp):
    service = jp_serverapp.web_app.settings["jupyter_analyst"]
    thread = service.create_thread("local", "sales", "t")
    assert (await service.start_turn(thread, "leave a thread")).status == "completed"
    assert (await service.start_turn(thread, "next turn")).status == "completed"
    first, second, third = [e for e in service.workspace.store.events(thread.thread_id) if e.type == "tool_result"]
    assert second.status == "ok" and _names(second) == ["outputs/mine.txt"], second.result
    assert third.result["stdout"] == "True False\n", third.result
    assert first.status == "error" and first.result["error"]["reason"] == "kernel_runaway", first.result
    await service.close()
