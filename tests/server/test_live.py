"""A thread's kernel lives across its turns in the server: no new kernel, nothing replayed;
idle kernels are culled, the least recently used stopped past the caps, never a running
turn's; a culled thread is restored lazily. A real Jupyter server (pytest-jupyter), real
kernels from its kernel manager, the scripted model over HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from jupyter_analyst.testing.servers.jupyter import analyst_server_config
from jupyter_analyst.testing import ScriptedModelServer, python_step as py_step, text_step as answer


def logged(code: str, name: str) -> str:
    """``code``, then its name appended to a log in the kernel's folder: runs are counted."""
    return f"{code}\nopen('replays.log', 'a').write('{name}\\n')"


SCRIPT = {"turns": [
    {"match": "^one$", "steps": [py_step(logged("base = 40", "one")), answer()]},
    {"match": "^two$", "steps": [py_step(logged("other = base + 1", "two")), answer()]},
    {"match": "^three$", "steps": [py_step("print(base + 2)"), answer()]},
    {"match": "^dynamic$", "steps": [py_step("print(globals()['other'] + 1)"), answer()]},
    {"match": "^slow$", "steps": [py_step("x = 1"), py_step("import time\ntime.sleep(60)"), answer()]},
]}


@pytest.fixture
def jp_server_config(tmp_path, sales_db):
    with ScriptedModelServer(SCRIPT) as model:
        yield analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, model.base_url,
                                    kernel_idle=3600.0, max_kernels=5, max_kernels_per_user=4)


@pytest.fixture
def service(jp_serverapp):
    return jp_serverapp.web_app.settings["jupyter_analyst"]


async def run(service, thread, prompt: str) -> str:
    """One turn through the service; the stdout of its last Python step."""
    summary = await service.start_turn(thread, prompt)
    assert summary.status == "completed", summary.error
    results = [e for e in service.workspace.store.events(thread.thread_id) if e.type == "tool_result"]
    assert results[-1].status == "ok", results[-1].result
    return results[-1].result["stdout"].strip()


async def kernel_shown(jp_fetch, thread_id: str):
    return json.loads((await jp_fetch("analyst", "api", "threads", thread_id)).body)["kernel"]


def replays(service, thread_id: str) -> list[str]:
    return (Path(service.workspace.root) / "kernels" / thread_id / "replays.log").read_text().split()


async def test_the_next_turn_runs_in_the_same_kernel_and_the_thread_shows_it(jp_fetch, jp_serverapp, service):
    assert (service.live.idle_s, service.live.max_total, service.live.max_per_user) == (3600.0, 5, 4)
    kernels = jp_serverapp.kernel_manager
    thread = service.create_thread("local", "sales", "t")
    await run(service, thread, "one")
    shown = await kernel_shown(jp_fetch, thread.thread_id)
    assert shown is not None and kernels.list_kernel_ids() == [shown["id"]]
    assert shown["state"] in ("idle", "busy") and shown["last_activity"]
    await run(service, thread, "two")
    await run(service, thread, "three")
    # No kernel started, nothing replayed: the first turn's kernel ran every step once.
    assert kernels.list_kernel_ids() == [shown["id"]]
    assert (await kernel_shown(jp_fetch, thread.thread_id))["id"] == shown["id"]
    assert replays(service, thread.thread_id) == ["one", "two"]
    await service.close()  # the server stops: its threads' kernels with it
    assert kernels.list_kernel_ids() == []


async def test_an_idle_kernel_is_culled_and_its_thread_restored_lazily(jp_fetch, jp_serverapp, service):
    kernels = jp_serverapp.kernel_manager
    thread = service.create_thread("local", "sales", "t")
    await run(service, thread, "one")
    await run(service, thread, "two")
    service.live.idle_s = 0.0
    assert await service.live.cull() == [thread.thread_id]
    assert await kernel_shown(jp_fetch, thread.thread_id) is None and kernels.list_kernel_ids() == []
    # `base` was made two turns ago: a new kernel runs that one step again, not turn two's.
    assert await run(service, thread, "three") == "42"
    assert replays(service, thread.thread_id) == ["one", "two", "one"]
    # What `globals()` reads cannot be told: the whole history is replayed first.
    assert await run(service, thread, "dynamic") == "42"
    assert replays(service, thread.thread_id) == ["one", "two", "one", "one", "two"]
    assert len(kernels.list_kernel_ids()) == 1


async def test_a_kernel_shut_down_through_the_server_is_replaced(jp_fetch, jp_serverapp, service):
    kernels = jp_serverapp.kernel_manager
    thread = service.create_thread("local", "sales", "t")
    await run(service, thread, "one")
    gone = (await kernel_shown(jp_fetch, thread.thread_id))["id"]
    await kernels.shutdown_kernel(gone)  # as from JupyterLab's kernel list, or the server's culler
    assert await kernel_shown(jp_fetch, thread.thread_id) is None
    assert await run(service, thread, "three") == "42"
    assert replays(service, thread.thread_id) == ["one", "one"]
    assert kernels.list_kernel_ids() == [(await kernel_shown(jp_fetch, thread.thread_id))["id"]] != [gone]


async def test_past_the_caps_the_least_recently_used_kernels_stop(jp_fetch, jp_serverapp, service):
    service.live.max_total, service.live.max_per_user = 2, 1
    threads = {name: service.create_thread(user, "sales", name)
               for name, user in [("ann1", "ann"), ("ann2", "ann"), ("bob", "bob"), ("carl", "carl")]}

    async def live() -> set[str]:
        return {name for name, t in threads.items() if service.kernel_of(t.thread_id) is not None}

    await run(service, threads["ann1"], "one")
    await run(service, threads["ann2"], "one")
    assert await live() == {"ann2"}  # one per user
    await run(service, threads["bob"], "one")
    assert await live() == {"ann2", "bob"}
    await run(service, threads["carl"], "one")
    assert await live() == {"bob", "carl"}  # two in all: ann2's was the least recently used
    assert len(jp_serverapp.kernel_manager.list_kernel_ids()) == 2 and service.live.stopped == 2


async def test_a_running_turn_keeps_its_kernel_until_cancelled(jp_fetch, jp_serverapp, service):
    kernels = jp_serverapp.kernel_manager
    slow = service.create_thread("local", "sales", "slow")
    with service.listen(slow.thread_id) as queue:
        task = service.start_turn(slow, "slow")
        calls = 0
        while calls < 2:  # the first step has run; the second, sleeping, is under way
            event = await asyncio.wait_for(queue.get(), 120)
            calls += event.type == "tool_call"
    running = (await kernel_shown(jp_fetch, slow.thread_id))["id"]
    service.live.idle_s, service.live.max_total = 0.0, 0
    assert await service.live.cull() == []
    # Another thread's turn ends over the cap of 0: its own kernel stops, not the running one.
    other = service.create_thread("local", "sales", "other")
    await run(service, other, "one")
    assert service.kernel_of(other.thread_id) is None
    assert (await kernel_shown(jp_fetch, slow.thread_id))["id"] == running and kernels.list_kernel_ids() == [running]
    # Cancelled midway, the step may be cut in the middle: nothing of its kernel is kept.
    assert await service.cancel(slow.thread_id)
    assert task.done() and await kernel_shown(jp_fetch, slow.thread_id) is None
    assert kernels.list_kernel_ids() == []
