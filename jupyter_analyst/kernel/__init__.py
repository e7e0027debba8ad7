"""Kernels: sessions that execute, interrupt, restart and rehydrate; the launcher seam.

The names below are imported on first use: a turn whose steps are all reused never starts
a kernel, so it should not pay for importing ``jupyter_client`` either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .sandbox.kernelspec import SANDBOX_KERNEL, install_kernelspec
    from .launcher import KernelLauncher, LocalKernelLauncher
    from .pool import KernelPool
    from .sandbox import SandboxPolicy
    from .session import ErrorInfo, ExecutionResult, KernelSession, kernel_environment

_HOME = {
    "SANDBOX_KERNEL": "sandbox.kernelspec",
    "install_kernelspec": "sandbox.kernelspec",
    "KernelLauncher": "launcher",
    "LocalKernelLauncher": "launcher",
    "KernelPool": "pool",
    "SandboxPolicy": "sandbox",
    "ErrorInfo": "session",
    "ExecutionResult": "session",
    "KernelSession": "session",
    "kernel_environment": "session",
}

__all__ = sorted(_HOME)


__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
