"""``run_python`` round trip vs a raw jupyter_client execute on the same kind of kernel."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager

from jupyter_analyst.kernel import KernelSession

from .common import Report, median_time_async

CODE = "x = sum(range(1000)); print(x)"


async def _raw(repeat: int) -> float:
    sockets = tempfile.mkdtemp(prefix="ja-bench-")  # the same ZMQ transport as ours (ipc)
    km = AsyncKernelManager(kernel_name="python3", transport="ipc", ip=f"{sockets}/k")
    km.connection_file = f"{sockets}/connection.json"
    await km.start_kernel()
    kc = km.client()
    kc.start_channels()
    await kc.wait_for_ready(timeout=60)

    async def once() -> None:
        msg_id = kc.execute(CODE)
        while True:
            msg = await kc.get_iopub_msg(timeout=30)
            if (
                msg["parent_header"].get("msg_id") == msg_id
                and msg["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"
            ):
                break
        await kc.get_shell_msg(timeout=30)

    try:
        return await median_time_async(once, repeat * 10)
    finally:
        kc.stop_channels()
        await km.shutdown_kernel(now=True)


async def _ours(repeat: int) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-py-") as tmp:
        async with KernelSession(Path(tmp)) as kernel:

            async def once() -> None:
                result = await kernel.execute(CODE)
                assert result.status == "ok" and result.stdout.strip() == "499500"

            return await median_time_async(once, repeat * 10)


def bench_run_python(report: Report, *, rows: int, repeat: int) -> None:
    baseline = asyncio.run(_raw(repeat))
    ours = asyncio.run(_ours(repeat))
    report.add("run_python round trip (KernelSession.execute)", ours, baseline,
               "jupyter_client execute + iopub until idle")
