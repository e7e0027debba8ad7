"""Loading a dataset into a kernel that shares no disk with us (a gateway's) vs one that does.

The remote hand-off sends the Parquet bytes in comm messages (base64) and the kernel hashes
them before reading; a local kernel memory-maps the linked blob. Both kernels here are
local (no sandbox), so the figure is the cost of the protocol hand-off itself; a gateway adds
its websocket hop, and a real network its bandwidth.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from jupyter_analyst.artifacts.fingerprints import sha256_file
from jupyter_analyst.kernel import KernelSession, LocalKernelLauncher, SandboxPolicy

from .common import Report, median_time_async


class _Remote(LocalKernelLauncher):
    remote_kernel = "python3"


async def _load_time(folder: Path, path: Path, fingerprint: str, *, remote: bool, repeat: int) -> float:
    launcher = _Remote() if remote else LocalKernelLauncher()
    async with KernelSession(folder / ("remote" if remote else "local"), launcher=launcher,
                             sandbox=SandboxPolicy(enabled=False)) as kernel:

        async def once() -> None:
            result = await kernel.load_dataset("data", path, fingerprint=fingerprint)
            assert result.status == "ok", result.error

        return await median_time_async(once, repeat)


def bench_handoff(report: Report, *, rows: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-handoff-") as tmp:
        folder = Path(tmp)
        rng = np.random.default_rng(0)
        frame = pd.DataFrame({"id": np.arange(rows), "value": rng.random(rows),
                              "group": rng.integers(0, 1000, rows).astype(str)})
        path = folder / "data.parquet"
        frame.to_parquet(path)
        fingerprint = sha256_file(path)
        local = asyncio.run(_load_time(folder, path, fingerprint, remote=False, repeat=repeat))
        remote = asyncio.run(_load_time(folder, path, fingerprint, remote=True, repeat=repeat))
        size = path.stat().st_size / 2**20
        report.add(f"dataset load over the kernel protocol ({rows:,} rows, {size:.1f} MB Parquet)", remote, local,
                   "the same load from the linked file (local kernel)")
        report.note("the protocol hand-off (a gateway's kernel) sends the bytes base64-encoded in 4 MB comm "
                    "messages and hashes them in the kernel; a gateway adds its websocket hop")
