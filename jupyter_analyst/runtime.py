"""The small helper that audit-trail notebooks use to re-run their SQL steps.

A thread's notebook starts with ``from jupyter_analyst import runtime as analyst`` and
``analyst.connect(SOURCE)``; each SQL step is then ``name = analyst.sql(\"\"\"...\"\"\")``.
The query goes through the same guard and runner as the agent's ``run_sql``, so a
notebook re-executes exactly what the agent ran, read-only.

Inside a kernel, ``connect`` also sets the kernel up as the agent's kernel was (pandas as
``pd``, matplotlib's ``plt`` with the same figure settings), so charts come out byte for
byte the same; and each ``sql`` call shows the fingerprint of its result (the mime type
:data:`ARTIFACT_MIME`), for a person reading the executed copy.

``jupyter analyst verify`` trusts no fingerprint a kernel shows: it starts the kernel with
:data:`RESULTS_ENV` naming a folder of the kernel's own, where each ``sql`` call keeps its
result's Parquet file, and hashes those bytes itself after each cell.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from .errors import ConfigError
from .notebooks import ARTIFACT_MIME, HOSTED_ENV, RESULTS_ENV, hosted_result_name

T = TypeVar("T")

_state: dict[str, Any] = {}



def _ipython() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        return None
    return get_ipython()


def connect(source: str) -> Any:
    """Open ``source`` (a path or URL, as for ``--db``) for the following ``sql`` calls."""
    from .sql import open_source

    previous = _state.pop("source", None)
    if previous is not None:
        previous.close()
    hosted = os.environ.get(HOSTED_ENV)
    # A server the sandbox cannot reach: the host ran the queries (notebooks/hosted_queries.py).
    _state["source"] = _Hosted(Path(hosted), source) if hosted else open_source(source)
    shell = _ipython()
    if shell is not None:
        from .kernel import SETUP_CODE

        shell.run_cell(SETUP_CODE, silent=True, store_history=False)
        # Steps save their files under outputs/, as in the agent's kernel folder.
        Path("outputs").mkdir(exist_ok=True)
    return _state["source"]


def sql(query: str, *, timeout_s: float = 300.0, row_cap: int = 1_000_000) -> Any:
    """Run a read-only query against the connected source; returns a pandas DataFrame."""
    from .kernel import read_dataset
    from .sql import QueryRunner, prepare_query

    source = _state.get("source")
    if source is None:
        raise ConfigError("no data source connected", hint="call analyst.connect(SOURCE) first")
    with tempfile.TemporaryDirectory(prefix="analyst-sql-") as tmp:
        dest = _kept_result() or Path(tmp) / "result.parquet"
        if isinstance(source, _Hosted):
            fingerprint = source.take(query, dest)
            frame = read_dataset(str(dest))
            rows = len(frame)
        else:
            prepared = prepare_query(query, source)
            runner = QueryRunner(source, timeout_s=timeout_s, row_cap=row_cap)
            result = _run_sync(runner.run_to_parquet(prepared, dest))
            frame = read_dataset(str(dest))  # as the agent's kernel loads it
            fingerprint, rows = result.fingerprint, result.rows  # hashed as it was written
    if _ipython() is not None:
        from IPython.display import display

        name = _assigned_name()
        display(
            {
                ARTIFACT_MIME: {"type": "dataset", "name": name, "fingerprint": fingerprint, "rows": rows},
                "text/plain": f"{name or 'result'}: {rows} rows, {fingerprint[:19]}",
            },
            raw=True,
        )
    return frame


class _Hosted:
    """A source whose queries the host ran: their results in a folder the kernel may read."""

    def __init__(self, folder: Path, spec: str) -> None:
        self.folder, self.spec = folder, spec

    def take(self, query: str, dest: Path) -> str:
        """Copy ``query``'s result to ``dest``; its fingerprint."""
        import shutil

        from .artifacts import sha256_file

        found = self.folder / hosted_result_name(query)
        if not found.is_file():
            error = found.with_suffix(".error")
            raise ConfigError(error.read_text() if error.is_file() else "the host ran no such query for this notebook",
                              hint=f"{self.spec} is out of the sandbox's reach: only the notebook's own queries are run")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(found, dest)
        return sha256_file(dest)

    def close(self) -> None:
        pass


def _kept_result() -> Path | None:
    """Where the next result is kept for the host to hash (see :data:`RESULTS_ENV`), if asked."""
    folder = os.environ.get(RESULTS_ENV)
    if not folder:
        return None
    _state["results"] = _state.get("results", 0) + 1
    return Path(folder) / f"{_state['results']:06d}.parquet"


def _assigned_name() -> str | None:
    """The variable the running cell assigns the result to (``name = analyst.sql(...)``);
    comment lines before it (a step cell's first line says who wrote it) do not count."""
    shell = _ipython()
    cell = shell.user_ns.get("_ih", [""])[-1] if shell is not None else ""
    return assigned_name(cell)


def assigned_name(cell: str) -> str | None:
    """The name a cell's first statement assigns to, when it reads ``name = ...``.

    >>> assigned_name("# Written by a model\\n\\nrevenue = analyst.sql('SELECT 1')")
    'revenue'
    >>> assigned_name("analyst.sql('SELECT 1')") is None
    True
    """
    lines = cell.splitlines()
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("#")):
        lines.pop(0)
    code = "\n".join(lines)
    head = code.split("=", 1)[0].strip() if "=" in code else ""
    return head if head.isidentifier() else None


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
