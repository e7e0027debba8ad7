"""The sandbox's cost: start and round trip vs a plain kernel; warm-pool acquisition vs a cold start."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_analyst.kernel import KernelPool, KernelSession, SandboxPolicy

from .common import Report, median_time_async

CODE = "x = sum(range(1000)); print(x)"
PLAIN = SandboxPolicy(enabled=False)


async def _start_time(root: Path, policy: SandboxPolicy, repeat: int) -> float:
    times = []
    for i in range(repeat):
        session = KernelSession(root / f"k{i}-{policy.enabled}", sandbox=policy)
        t0 = time.perf_counter()
        await session.start()
        times.append(time.perf_counter() - t0)
        await session.shutdown()
    return statistics.median(times)


async def _round_trip(root: Path, policy: SandboxPolicy, repeat: int) -> float:
    async with KernelSession(root / f"rt-{policy.enabled}", sandbox=policy) as session:

        async def once() -> None:
            assert (await session.execute(CODE)).stdout.strip() == "499500"

        return await median_time_async(once, repeat * 10)


async def _pool(root: Path, repeat: int) -> tuple[float, float]:
    pool = KernelPool(root / "staging", size=1)
    warm, cold = [], []
    try:
        for i in range(repeat):
            await pool.start()  # full again before each acquisition
            t0 = time.perf_counter()
            session = await pool.acquire(root / "threads" / f"warm-{i}")
            warm.append(time.perf_counter() - t0)
            await session.shutdown()
            await pool.start()  # let the background refill finish: nothing else runs while timing
            session = KernelSession(root / "threads" / f"cold-{i}")
            t0 = time.perf_counter()
            await session.start()
            cold.append(time.perf_counter() - t0)
            await session.shutdown()
    finally:
        await pool.close()
    return statistics.median(warm), statistics.median(cold)


def bench_sandbox(report: Report, *, rows: int, repeat: int) -> None:
    async def go() -> None:
        with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
            root = Path(tmp)
            report.add("kernel start, sandboxed", await _start_time(root, SandboxPolicy(), repeat),
                       await _start_time(root, PLAIN, repeat), "kernel start, plain ipykernel")
            report.add("execute round trip, sandboxed", await _round_trip(root, SandboxPolicy(), repeat),
                       await _round_trip(root, PLAIN, repeat), "execute round trip, plain ipykernel")
            warm, cold = await _pool(root, repeat)
            report.add("first step's kernel from the warm pool", warm, cold, "cold start of a sandboxed kernel")

    asyncio.run(go())
