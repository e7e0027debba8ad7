"""Kernels: sessions that execute, interrupt, restart and rehydrate; the launcher seam; the
files a step leaves in the kernel's folder, taken out within caps; the sandbox around it all
(``sandbox/``, its own face).

The names below are imported on first use: a turn whose steps are all reused never starts
a kernel, so it should not pay for importing ``jupyter_client`` either.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .cells import SETUP_CODE
    from .figure_names import figure_names as figure_file_names
    from .iopub import ErrorInfo, displayed_images
    from .launcher import KernelLauncher, LocalKernelLauncher, connect_client
    from .loader import read_dataset
    from .outputs import OutputCaps, over_thread_cap
    from .outputs import collect as collect_outputs
    from .pool import KernelPool
    from .sandbox import (
        SANDBOX_KERNEL,
        SETTINGS_ENV,
        SandboxPolicy,
        SandboxSettings,
        install_kernelspec,
        kernels_dir,
        notebook_metadata,
        run_doctor,
    )
    from .session import KernelSession, changed_outputs, kernel_environment
    from .workdir import Entry as WorkdirEntry
    from .workdir import scan as scan_workdir

_HOME = {
    "SETUP_CODE": "cells",
    "ErrorInfo": "iopub",
    "displayed_images": "iopub",
    "figure_file_names": "figure_names:figure_names",
    "KernelLauncher": "launcher",
    "LocalKernelLauncher": "launcher",
    "connect_client": "launcher",
    "read_dataset": "loader",
    "OutputCaps": "outputs",
    "collect_outputs": "outputs:collect",
    "over_thread_cap": "outputs",
    "KernelPool": "pool",
    "SANDBOX_KERNEL": "sandbox",
    "SETTINGS_ENV": "sandbox",
    "SandboxPolicy": "sandbox",
    "SandboxSettings": "sandbox",
    "install_kernelspec": "sandbox",
    "kernels_dir": "sandbox",
    "notebook_metadata": "sandbox",
    "run_doctor": "sandbox",
    "KernelSession": "session",
    "changed_outputs": "session",
    "kernel_environment": "session",
    "WorkdirEntry": "workdir:Entry",
    "scan_workdir": "workdir:scan",
}

__all__ = [
    "ErrorInfo", "KernelLauncher", "KernelPool", "KernelSession", "LocalKernelLauncher", "OutputCaps", "SANDBOX_KERNEL",
    "SETTINGS_ENV", "SETUP_CODE", "SandboxPolicy", "SandboxSettings", "WorkdirEntry", "changed_outputs",
    "collect_outputs", "connect_client", "displayed_images", "figure_file_names", "install_kernelspec", "kernel_environment",
    "kernels_dir", "notebook_metadata", "over_thread_cap", "read_dataset", "run_doctor", "scan_workdir",
]

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
