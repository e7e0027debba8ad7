"""The workspace database: threads, messages, events, agent state, turn leases and the model's
spending, on SQLite (embedded, the default) or PostgreSQL (several server processes on one database).

``threads`` is the store of threads and their records, one concern a module: ``turns``,
``events_log``, ``messages``, ``state`` (the agent state), ``spending`` (each model call's
tokens and cost, as budgets count them), ``schema`` (their tables);
``database`` the store base class,
its schema migrations and the backend registry; ``sqlite`` and ``postgres`` the backends
(PostgreSQL's needs psycopg, an optional extra, and is imported only when used); ``leases``
the leases that keep one process's turn from being cut or doubled by another's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names
from .database import DatabaseStore, register_backend
from .leases import TurnLeases, renewing
from .threads import Thread, ThreadBusy, ThreadStore, Turn

if TYPE_CHECKING:
    from .postgres import EVENTS_CHANNEL

__all__ = [
    "EVENTS_CHANNEL", "DatabaseStore", "Thread", "ThreadBusy", "ThreadStore", "Turn", "TurnLeases", "register_backend",
    "renewing",
]

__getattr__, __dir__ = lazy_names(__name__, {"EVENTS_CHANNEL": "postgres"}, globals())
