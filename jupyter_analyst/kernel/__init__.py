"""Kernels: sessions that execute, interrupt, restart and rehydrate; the launcher seam."""

from .launcher import KernelLauncher, LocalKernelLauncher
from .session import ErrorInfo, ExecutionResult, KernelSession, kernel_environment

__all__ = ["ErrorInfo", "ExecutionResult", "KernelLauncher", "KernelSession", "LocalKernelLauncher", "kernel_environment"]
