"""The small helper that audit-trail notebooks use to re-run their SQL steps.

A thread's notebook starts with ``from jupyter_analyst import runtime as analyst`` and
``analyst.connect(SOURCE)``; each SQL step is then ``name = analyst.sql(\"\"\"...\"\"\")``.
The query goes through the same guard and runner as the agent's ``run_sql``, so a
notebook re-executes exactly what the agent ran, read-only.
"""

from __future__ import annotations

import asyncio
import tempfile
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from .errors import ConfigError

T = TypeVar("T")

_state: dict[str, Any] = {}


def connect(source: str) -> Any:
    """Open ``source`` (a path or URL, as for ``--db``) for the following ``sql`` calls."""
    from .sql import open_source

    previous = _state.pop("source", None)
    if previous is not None:
        previous.close()
    _state["source"] = open_source(source)
    return _state["source"]


def sql(query: str, *, timeout_s: float = 300.0, row_cap: int = 1_000_000) -> Any:
    """Run a read-only query against the connected source; returns a pandas DataFrame."""
    import pandas as pd

    from .sql import QueryRunner, prepare_query

    source = _state.get("source")
    if source is None:
        raise ConfigError("no data source connected", hint="call analyst.connect(SOURCE) first")
    prepared = prepare_query(query, source)
    runner = QueryRunner(source, timeout_s=timeout_s, row_cap=row_cap)
    with tempfile.TemporaryDirectory(prefix="analyst-sql-") as tmp:
        dest = Path(tmp) / "result.parquet"
        _run_sync(runner.run_to_parquet(prepared, dest))
        return pd.read_parquet(dest)


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion, even from inside a running event loop (a kernel)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="analyst-sql")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
