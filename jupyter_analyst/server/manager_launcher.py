"""Kernels from the Jupyter server's own kernel manager.

So ``--gateway-url`` (Jupyter Enterprise Gateway) moves them to a cluster unchanged, and
the server's kernel list, culling and metrics see them like any other kernel.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..kernel import connect_client


def is_gateway(kernel_manager: Any) -> bool:
    """Whether ``kernel_manager`` starts its kernels on a gateway (``--gateway-url``)."""
    try:
        from jupyter_server.gateway.managers import GatewayMappingKernelManager
    except ImportError:  # a server without gateway support
        return False
    return isinstance(kernel_manager, GatewayMappingKernelManager)


class ServerKernelLauncher:
    """Starts kernels through ``serverapp.kernel_manager``.

    Args:
        remote_kernel: the kernelspec to start when the kernels share no disk with this
            server (a gateway's: then this is set from ``AnalystApp.gateway_kernel``);
            ``None`` for kernels on this machine.
    """

    def __init__(self, kernel_manager: Any, *, remote_kernel: str | None = None) -> None:
        self.kernel_manager = kernel_manager
        self.remote_kernel = remote_kernel

    async def launch(self, kernel_name: str, cwd: Path, env: Mapping[str, str]) -> tuple[Any, Any]:
        kernel_id = await self.kernel_manager.start_kernel(kernel_name=kernel_name, cwd=str(cwd), env=dict(env))
        manager = self.kernel_manager.get_kernel(kernel_id)
        manager._analyst_kernel_id = kernel_id
        return manager, await connect_client(self, manager, 60)

    async def stop(self, manager: Any) -> None:
        kernel_id = getattr(manager, "_analyst_kernel_id", None)
        if kernel_id is not None and kernel_id in self.kernel_manager:
            await self.kernel_manager.shutdown_kernel(kernel_id, now=True)

    def activity(self, kernel_id: str) -> tuple[str | None, str | None]:
        """The kernel's execution state and last activity (UTC, ISO 8601) as the server's
        kernel manager tracks them; ``(None, None)`` for a kernel it does not know."""
        if kernel_id not in self.kernel_manager:
            return None, None
        manager = self.kernel_manager.get_kernel(kernel_id)
        last = getattr(manager, "last_activity", None)
        return getattr(manager, "execution_state", None) or "unknown", last.isoformat() if last is not None else None
