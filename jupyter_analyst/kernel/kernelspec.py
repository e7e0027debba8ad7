"""The sandboxed kernelspec: ipykernel started by our provisioner, interrupted by message."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

SANDBOX_KERNEL = "jupyter-analyst"
PROVISIONER = "analyst-sandbox-provisioner"


def kernelspec(python: str | None = None) -> dict[str, Any]:
    """The ``kernel.json`` of the sandboxed kernel.

    ``interrupt_mode`` is ``message``: a signal would reach bubblewrap, not the kernel.
    """
    return {
        "argv": [python or sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (jupyter-analyst sandbox)",
        "language": "python",
        "interrupt_mode": "message",
        "metadata": {"kernel_provisioner": {"provisioner_name": PROVISIONER}, "debugger": False},
    }


def write_kernelspec(folder: Path, python: str | None = None) -> Path:
    """Write the kernelspec into ``folder/jupyter-analyst``; returns that folder."""
    spec_dir = Path(folder) / SANDBOX_KERNEL
    spec_dir.mkdir(parents=True, exist_ok=True)
    (spec_dir / "kernel.json").write_text(json.dumps(kernelspec(python), indent=2))
    return spec_dir


@lru_cache(maxsize=1)
def kernels_dir() -> Path:
    """A folder of kernelspecs holding ours, made once per process."""
    base = Path(tempfile.gettempdir()) / f"jupyter-analyst-kernels-{os.getuid()}"
    write_kernelspec(base)
    return base


def install_kernelspec(*, user: bool = False, prefix: str | None = None) -> str:
    """Install the sandboxed kernelspec where Jupyter finds it (for the server); returns where."""
    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory() as tmp:
        source = write_kernelspec(Path(tmp))
        return KernelSpecManager().install_kernel_spec(str(source), SANDBOX_KERNEL, user=user, prefix=prefix)
