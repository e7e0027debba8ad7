"""Kernels: sessions that execute, interrupt, restart and rehydrate; the launcher seam."""

from .kernelspec import SANDBOX_KERNEL, install_kernelspec
from .launcher import KernelLauncher, LocalKernelLauncher
from .pool import KernelPool
from .sandbox import SandboxPolicy
from .session import ErrorInfo, ExecutionResult, KernelSession, kernel_environment

__all__ = [
    "SANDBOX_KERNEL",
    "ErrorInfo",
    "ExecutionResult",
    "KernelLauncher",
    "KernelPool",
    "KernelSession",
    "LocalKernelLauncher",
    "SandboxPolicy",
    "install_kernelspec",
    "kernel_environment",
]
