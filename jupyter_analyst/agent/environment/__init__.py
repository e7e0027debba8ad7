"""What a thread's tools run against: its source, query runner, inventory and kernel
(:class:`ThreadEnvironment`), what each name in the kernel holds, and how a new kernel is
brought back to the thread's history."""

from .bindings import inputs_of
from .thread import ThreadEnvironment

__all__ = ["ThreadEnvironment", "inputs_of"]
