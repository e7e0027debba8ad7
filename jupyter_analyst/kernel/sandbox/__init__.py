"""The sandbox around a kernel: bubblewrap, resource limits and a scrubbed environment.

The model writes the code, so the kernel treats it as untrusted:

* **bubblewrap** gives it its own mount, PID, network, IPC and UTS namespaces: ``/usr`` is
  mounted read-only, of ``/etc`` only an allow-list with accounts of its own
  (system_view.py), no ``/opt``; only the thread's folder (and the folder of its ZMQ sockets) is
  writable, datasets arrive read-only from the artifact store, and there is no network
  (ZMQ runs over Unix sockets).
* **limits**: memory and process count in a cgroup where one can be made, and rlimits
  always (address space when there is no cgroup, CPU time, processes, file size, open
  files; no core dumps, few locked pages, no real-time priority), set with ``prlimit``,
  hard limits included, so the kernel cannot raise them.
* **identity**: started as root, the kernel drops to a uid of its own (leased from a range,
  see identity.py) with ``setpriv``, so its process limit counts only its own processes.
  That uid must reach the interpreter: reach.py checks it before the start, and the mounts
  (command.py) make the folders above each bind passable.
* **kernel interfaces**: a seccomp filter (seccomp.py) refuses what a data kernel never
  needs: new namespaces and mounts, io_uring, userfaultfd, keyrings, bpf and perf,
  ptrace, socket families but Unix and IP, and every call through another ABI; with or
  without bubblewrap.
* **environment**: only an allow-list passes; API keys, database URLs and Jupyter tokens
  never reach the kernel.

The command is command.py's; kernelspec.py and provisioner.py make any jupyter_client manager
start kernels inside it; doctor.py says which layers this machine gives.

The names below are imported on first use: the policy is read by every turn, the
provisioner (``jupyter_client``) only by a kernel's start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_names

if TYPE_CHECKING:
    from .bwrap_command import SandboxPolicy
    from .doctor import main as run_doctor
    from .kernelspec import SANDBOX_KERNEL, install_kernelspec, kernels_dir, notebook_metadata
    from .provisioner import SETTINGS_ENV, SandboxSettings

_HOME = {
    "SandboxPolicy": "bwrap_command",
    "run_doctor": "doctor:main",
    "SANDBOX_KERNEL": "kernelspec",
    "install_kernelspec": "kernelspec",
    "kernels_dir": "kernelspec",
    "notebook_metadata": "kernelspec",
    "SETTINGS_ENV": "provisioner",
    "SandboxSettings": "provisioner",
}

__all__ = [
    "SANDBOX_KERNEL", "SETTINGS_ENV", "SandboxPolicy", "SandboxSettings", "install_kernelspec", "kernels_dir",
    "notebook_metadata", "run_doctor",
]

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
