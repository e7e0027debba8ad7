"""Hostile code in the sandboxed kernel: each attempt contained, this process unaffected,
the failure reported clearly, and later steps still working."""

from __future__ import annotations

import os
import socket
import textwrap
import time

import pandas as pd
import pytest
import pytest_asyncio

from jupyter_analyst.kernel import KernelSession
from jupyter_analyst.kernel.sandbox import SandboxPolicy
from jupyter_analyst.kernel.sandbox.bwrap_command import find_bwrap

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed (make installs it)"),
]

SECRET = "sk-test-secret-never-in-the-kernel"


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    """A workspace with a thread folder, a sibling secret and a dataset in the blob store."""
    root = tmp_path_factory.mktemp("ws")
    (root / "analyst.sqlite3").write_text("other threads live here")
    blobs = root / "artifacts"
    blobs.mkdir()
    data = blobs / "data.parquet"
    pd.DataFrame({"v": [1, 2, 3]}).to_parquet(data)
    os.chmod(data, 0o644)
    workdir = root / "threads" / "thr_1"
    workdir.mkdir(parents=True)
    return {"root": root, "workdir": workdir, "blobs": blobs, "data": data}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel(host):
    os.environ["OPENAI_API_KEY"] = SECRET  # in this process's environment only
    try:
        session = KernelSession(host["workdir"], readable=[host["blobs"]], sandbox=SandboxPolicy(processes=128))
        async with session:
            yield session
    finally:
        os.environ.pop("OPENAI_API_KEY", None)


async def run(kernel, code, **kw):
    return await kernel.execute(textwrap.dedent(code), **kw)


async def test_real_work_still_happens(kernel, host):
    await kernel.load_dataset("data", host["data"])
    r = await run(kernel, """
        import matplotlib.pyplot as plt
        data.plot(); plt.show()
        data.to_csv('outputs/data.csv')
        print(int(data.v.sum()))
    """)
    assert r.status == "ok" and r.stdout.strip() == "6"
    assert r.images and [str(p) for p in r.new_files] == ["outputs/data.csv"]
    assert (host["workdir"] / "outputs" / "data.csv").exists(), "outputs are visible to the host"


async def test_no_network(kernel):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        r = await run(kernel, f"""
            import socket
            for target in [("127.0.0.1", {port}), ("example.com", 80)]:
                try:
                    socket.create_connection(target, timeout=3)
                    print("connected", target)
                except OSError as e:
                    print("refused", type(e).__name__)
        """)
    finally:
        listener.close()
    assert r.status == "ok" and "connected" not in r.stdout
    assert r.stdout.count("refused") == 2


async def test_cannot_write_outside_the_workspace(kernel, host, tmp_path):
    target = host["root"] / "planted.txt"
    r = await run(kernel, f"""
        for path in ["/etc/planted", "/usr/planted", {str(target)!r}, {str(host['data'])!r}]:
            try:
                open(path, "w").write("x")
                print("wrote", path)
            except OSError as e:
                print("refused", type(e).__name__)
        open("/tmp/scratch", "w").write("private tmp")  # its own /tmp, not the host's
    """)
    assert "wrote" not in r.stdout and r.stdout.count("refused") == 4
    assert not target.exists() and not os.path.exists("/tmp/scratch")
    assert pd.read_parquet(host["data"]).v.tolist() == [1, 2, 3], "the dataset is read-only"


async def test_cannot_read_home_or_the_servers_files(kernel, host):
    r = await run(kernel, f"""
        import os
        for path in [{str(host['root'] / 'analyst.sqlite3')!r}, "/root/.bashrc", "/etc/shadow",
                     {os.path.abspath(__file__)!r}]:
            try:
                open(path).read()
                print("read", path)
            except OSError as e:
                print("refused", type(e).__name__)
        print(sorted(os.listdir("/root")), os.listdir("/home"))
    """)
    assert "read " not in r.stdout and r.stdout.count("refused") == 4
    assert "['.pyenv'] []" in r.stdout or "[] []" in r.stdout


async def test_parent_environment_not_reachable(kernel):
    r = await run(kernel, """
        import os, glob
        leaked = [k for k, v in os.environ.items() if "sk-test" in v]
        for path in glob.glob("/proc/*/environ"):
            try:
                if b"sk-test" in open(path, "rb").read():
                    leaked.append(path)
            except OSError:
                pass
        print("leaked", leaked, "JPY_PARENT_PID" in os.environ)
    """)
    assert r.stdout.strip() == "leaked [] False"
    assert SECRET not in (await run(kernel, "import os; print(dict(os.environ))")).stdout


async def test_cannot_signal_the_parent(kernel):
    me = os.getpid()
    r = await run(kernel, f"""
        import os, signal
        for pid in [{me}, os.getppid(), 1]:
            try:
                os.kill(pid, signal.SIGKILL)
                print("signalled", pid)
            except OSError as e:
                print("refused", pid, type(e).__name__)
    """)
    assert f"signalled {me}" not in r.stdout
    assert "signalled 1" not in r.stdout
    assert os.getpid() == me  # still here
    assert (await run(kernel, "print('alive')")).stdout.strip() == "alive"


async def test_infinite_loop_times_out(kernel):
    started = time.perf_counter()
    r = await run(kernel, "while True: pass", timeout=2)
    assert r.status == "timeout" and time.perf_counter() - started < 30
    assert (await run(kernel, "print('after loop')")).stdout.strip() == "after loop"


async def test_huge_output_is_capped(kernel):
    r = await run(kernel, """
        import sys
        chunk = "x" * (1 << 20)
        for _ in range(1024):  # a gigabyte
            sys.stdout.write(chunk)
    """, timeout=180)
    assert r.status in ("ok", "timeout")
    assert len(r.stdout) < kernel.output_cap + 200
    assert "[output truncated:" in r.stdout
    assert (await run(kernel, "print('after flood')")).stdout.strip() == "after flood"


async def fresh(host, **policy):
    return KernelSession(host["workdir"], readable=[host["blobs"]], sandbox=SandboxPolicy(**policy))


async def test_fork_bomb_contained(host):
    session = await fresh(host, processes=64)
    async with session:
        r = await run(session, """
            import os
            children = 0
            try:
                while True:
                    if os.fork() == 0:
                        import time
                        time.sleep(60)
                        os._exit(0)
                    children += 1
            except OSError as e:
                print("stopped after", children, type(e).__name__)
        """, timeout=60)
        assert r.status in ("ok", "error", "timeout", "died")
        if r.status == "ok":
            assert "stopped after" in r.stdout and int(r.stdout.split()[2]) < 64
        if r.status != "ok":
            await session.restart()
        assert (await run(session, "print('after fork bomb')")).stdout.strip() == "after fork bomb"


async def test_memory_bomb_contained(host):
    session = await fresh(host, memory_mb=768)
    async with session:
        r = await run(session, "x = bytearray(3 * 2**30); x[::4096] = b'y' * len(x[::4096])", timeout=120)
        assert r.status in ("error", "died")
        if r.status == "error":
            assert r.error.ename == "MemoryError"
        else:
            await session.restart()
        assert (await run(session, "print('after memory bomb')")).stdout.strip() == "after memory bomb"


async def test_native_crash_contained(host):
    session = await fresh(host)
    async with session:
        started = time.perf_counter()
        r = await run(session, "import ctypes; ctypes.string_at(0)", timeout=60)
        assert r.status == "died" and time.perf_counter() - started < 30
        await session.restart()
        assert (await run(session, "print('after crash')")).stdout.strip() == "after crash"
