"""Kernel sessions on a real ipykernel: outputs, figures, files, datasets, timeouts, deaths."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import pytest_asyncio

from jupyter_analyst.errors import InvalidArguments
from jupyter_analyst.kernel import KernelSession

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(tmp_path_factory):
    session = KernelSession(tmp_path_factory.mktemp("kernel"), output_cap=10_000)
    async with session:
        yield session


async def test_streams_and_result(kernel):
    r = await kernel.execute("import sys\nprint('out')\nprint('err', file=sys.stderr)\n6 * 7")
    assert r.status == "ok" and r.stdout == "out\n" and r.stderr == "err\n" and r.result == "42"
    assert [o["output_type"] for o in r.outputs] == ["stream", "stream", "execute_result"]


async def test_error_keeps_the_session_usable(kernel):
    r = await kernel.execute("undefined_name + 1")
    assert r.status == "error" and r.error.ename == "NameError"
    assert "\x1b[" not in r.error.short()
    assert (await kernel.execute("print('still here')")).stdout == "still here\n"


async def test_the_kernel_is_frozen_between_steps(kernel):
    cgroup = getattr(kernel._provisioner(), "cgroup", None)
    if cgroup is None:
        pytest.skip("no cgroup can be made here: kernels are not frozen")
    r = await kernel.execute("import threading; print(threading.active_count() > 0)")
    assert r.status == "ok" and r.stdout == "True\n"
    assert cgroup.is_frozen(), "nothing of the kernel runs between steps"
    assert (await kernel.execute("print('thawed for the step')")).stdout == "thawed for the step\n"
    assert cgroup.is_frozen()


HOST = """
import asyncio, sys
from pathlib import Path
from jupyter_analyst.kernel import KernelSession

async def main():
    session = KernelSession(Path(sys.argv[1]))
    await session.start()
    await session.execute("x = 1")
    print(*session._provisioner().cgroup.dirs, flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


async def test_a_host_that_dies_leaves_no_frozen_kernel_behind(tmp_path):
    """bubblewrap kills a kernel whose host died, but a frozen one only when thawed: the next
    host to make a kernel group stops it."""
    from jupyter_analyst.kernel.sandbox.cgroups import KernelCgroup

    host = subprocess.Popen([sys.executable, "-c", HOST, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    groups = [Path(g) for g in host.stdout.readline().split()]
    host.kill()
    host.wait()
    if not groups:
        pytest.skip("no cgroup can be made here: kernels are not frozen")
    left = {int(p) for g in groups for p in (g / "cgroup.procs").read_text().split()}
    assert left, "the kernel outlived its host, frozen"
    fresh = KernelCgroup.create(memory_mb=256, processes=16)
    try:
        assert not any(g.exists() for g in groups)
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{pid}").exists() for pid in left) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not any(Path(f"/proc/{pid}").exists() for pid in left)
    finally:
        if fresh is not None:
            fresh.destroy()


async def test_figure_is_captured(kernel):
    r = await kernel.execute("plt.plot([1, 2, 3]); plt.show()")
    assert r.status == "ok"
    assert [mime for mime, _ in r.images] == ["image/png"]
    assert r.images[0][1].startswith(b"\x89PNG")
    assert any(o["output_type"] == "display_data" for o in r.outputs)


async def test_files_under_outputs_are_reported(kernel):
    r = await kernel.execute("open('outputs/a.csv', 'w').write('x\\n1\\n'); open('elsewhere.txt', 'w').write('no')")
    assert [str(p) for p in r.new_files] == ["outputs/a.csv"]
    again = await kernel.execute("open('outputs/a.csv', 'a').write('2\\n')")
    assert [str(p) for p in again.new_files] == ["outputs/a.csv"], "a modified file counts too"
    untouched = await kernel.execute("x = 1")
    assert untouched.new_files == []


async def test_dataset_loaded_from_parquet(kernel):
    path = kernel.workdir / "d.parquet"
    pd.DataFrame({"a": range(10), "b": list("abcdefghij")}).to_parquet(path)
    assert (await kernel.load_dataset("my_data", path)).status == "ok"
    assert (await kernel.execute("print(my_data.shape)")).stdout.strip() == "(10, 2)"
    for bad in ("1abc", "class", "a-b", "x; import os"):
        with pytest.raises(InvalidArguments):
            await kernel.load_dataset(bad, path)


async def test_dataset_types_as_the_engine_wrote_them(kernel):
    """DuckDB's Parquet becomes the DataFrame analyst.sql gives too: DECIMAL as float64,
    the rest as pandas reads it; the loader leaves no name of its own behind."""
    import duckdb

    from jupyter_analyst.kernel.loader import read_dataset

    path = kernel.workdir / "typed.parquet"
    with duckdb.connect() as conn:
        conn.execute(
            "COPY (SELECT range AS id, (range * 0.5)::DECIMAL(10, 2) AS amount, 'r' || range AS label, "
            f"DATE '2024-01-01' + range::INT AS day FROM range(5)) TO '{path}' (FORMAT parquet)"
        )
    assert (await kernel.load_dataset("typed", path)).status == "ok"
    shown = await kernel.execute(
        "print(dict(typed.dtypes.astype(str)), typed.amount.tolist(), sorted(n for n in dir() if 'analyst' in n))"
    )
    host = read_dataset(str(path))
    assert shown.stdout.strip() == f"{dict(host.dtypes.astype(str))} [0.0, 0.5, 1.0, 1.5, 2.0] []"
    assert str(host.dtypes["amount"]) == "float64" and str(host.dtypes["id"]) == "int64"
    assert host.equals(pd.read_parquet(path).astype({"amount": "float64"}))
    # The loader is defined once per kernel; code that removes it does not break the next load.
    assert (await kernel.execute("import sys; del sys.modules['_jupyter_analyst_loader']")).status == "ok"
    assert (await kernel.load_dataset("again", path)).status == "ok"
    assert (await kernel.execute("print(again.equals(typed))")).stdout.strip() == "True"


async def test_output_cap(kernel):
    r = await kernel.execute("print('x' * 50_000)")
    assert len(r.stdout) < 11_000 and "[output truncated:" in r.stdout


async def test_timeout_interrupts_and_the_next_step_works(kernel):
    started = time.perf_counter()
    r = await kernel.execute("while True: pass", timeout=1)
    assert r.status == "timeout" and time.perf_counter() - started < 15
    assert (await kernel.execute("print('after')")).stdout == "after\n"


async def test_death_is_noticed_promptly_and_restart_works(tmp_path):
    async with KernelSession(tmp_path) as session:
        started = time.perf_counter()
        r = await session.execute("import os; os._exit(1)", timeout=60)
        assert r.status == "died" and time.perf_counter() - started < 15
        assert not session.is_started
        await session.restart()
        assert (await session.execute("print(1 + 1)")).stdout == "2\n"
        await session.shutdown()
        await session.shutdown()  # idempotent
        assert not await session.is_alive()


async def test_a_dataset_loads_as_a_dataframe_later_steps_read(tmp_path):
    path = tmp_path / "d.parquet"
    pd.DataFrame({"v": [1, 2, 3]}).to_parquet(path)
    async with KernelSession(tmp_path / "k", readable=[path]) as session:
        results = [await session.load_dataset("data", path)]
        results += [await session.execute(code) for code in ("total = data.v.sum()", "double = total * 2")]
        assert [r.status for r in results] == ["ok", "ok", "ok"]
        assert (await session.execute("print(double)")).stdout == "12\n"
