"""The warm pool: a new thread gets a prestarted kernel; a thread with files a cold one."""

from __future__ import annotations

import pytest

from jupyter_analyst.kernel import KernelPool, KernelSession

pytestmark = pytest.mark.asyncio


async def test_new_thread_takes_a_warm_kernel_that_writes_into_its_folder(tmp_path):
    pool = KernelPool(tmp_path / "staging", size=1)
    await pool.start()
    try:
        assert pool.ready == 1
        workdir = tmp_path / "threads" / "thr_new"
        session = await pool.acquire(workdir)
        try:
            assert pool.hits == 1 and session.workdir == workdir
            r = await session.execute("open('outputs/hello.txt', 'w').write('hi'); print('ok')")
            assert r.status == "ok" and [str(p) for p in r.new_files] == ["outputs/hello.txt"]
            assert (workdir / "outputs" / "hello.txt").read_text() == "hi"
        finally:
            await session.shutdown()
        if pool._filling is not None:
            await pool._filling  # refilled in the background
        assert pool.ready == 1
    finally:
        await pool.close()
    assert pool.ready == 0


async def test_thread_with_files_gets_a_cold_kernel(tmp_path):
    pool = KernelPool(tmp_path / "staging", size=1)
    await pool.start()
    workdir = tmp_path / "threads" / "thr_old"
    (workdir / "outputs").mkdir(parents=True)
    (workdir / "outputs" / "earlier.csv").write_text("a\n")
    try:
        session = await pool.acquire(workdir)
        try:
            assert pool.misses == 1 and pool.ready == 1
            assert (await session.execute("import os; print(sorted(os.listdir('outputs')))")).stdout.strip() == "['earlier.csv']"
        finally:
            await session.shutdown()
    finally:
        await pool.close()


async def test_idle_kernels_are_culled(tmp_path):
    pool = KernelPool(tmp_path / "staging", size=1, idle_timeout_s=0.0)
    await pool.start()
    try:
        assert pool.cull() == 1 and pool.ready == 0
    finally:
        await pool.close()


async def test_dead_warm_kernel_is_not_handed_out(tmp_path):
    made: list[KernelSession] = []

    def make(folder):
        made.append(KernelSession(folder))
        return made[-1]

    pool = KernelPool(tmp_path / "staging", size=1, make=make)
    await pool.start()
    await made[0].execute("import os; os._exit(1)", timeout=30)
    try:
        session = await pool.acquire(tmp_path / "threads" / "t")
        try:
            assert session is not made[0] and pool.misses == 1
            assert (await session.execute("print(1)")).stdout == "1\n"
        finally:
            await session.shutdown()
    finally:
        await pool.close()
