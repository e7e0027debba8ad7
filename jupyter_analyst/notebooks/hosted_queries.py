"""A notebook's queries run by the host, for a source the sandboxed kernel cannot reach.

The kernel that re-executes a notebook has no network: a server (PostgreSQL, Spark Connect,
a warehouse) is out of its reach. So, as for the agent's own ``run_sql``, the host runs the
queries and the kernel reads their Parquet files: before the notebook runs, each
``analyst.sql(...)`` call written as a string literal in a code cell is found by
parsing the cell (never running it), checked by the same guard and run by the same runner
as ``run_sql``, into a folder the kernel may only read (:data:`~.trail.HOSTED_ENV`). Inside,
``analyst.sql`` takes the file named by its query's hash, so its bytes, and the fingerprint
``verify`` hashes, are the ones a query on the source gives. A query that the host refused
or that failed leaves its error beside, which the kernel raises in that cell.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

from .trail import hosted_result_name

#: How long each query may run (``analyst.sql``'s own default).
HOSTED_TIMEOUT_S = 300.0
#: The most queries the host runs for one notebook: a thread's audit notebook has one per SQL
#: step; a notebook from elsewhere may hold any number, each a query on the team's server.
MAX_HOSTED_QUERIES = 200


def needs_host(spec: str) -> bool:
    """Whether the kernel cannot open ``spec`` itself: a server's URL (no network in the sandbox;
    a URL of a local file, ``sqlite:///x.db``, is opened by the kernel when verify finds the file).

    >>> needs_host("sc://localhost:15002"), needs_host("postgresql://h/db"), needs_host("/d/sales.duckdb")
    (True, True, False)
    """
    return "://" in spec and not spec.lower().startswith("file://")


def notebook_queries(nb: Any) -> list[str]:
    """The queries of the notebook's ``analyst.sql("...")`` calls, in order, each once (a
    cell that does not parse, or a query that is not a literal, is left to fail in the kernel)."""
    found: list[str] = []
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        try:
            tree = ast.parse("".join(cell.get("source") or ""))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sql"
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "analyst"
                    and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.append(node.args[0].value)
    return list(dict.fromkeys(found))


def run_hosted(nb: Any, spec: str, folder: Path) -> None:
    """Run each of the notebook's queries against ``spec`` into ``folder`` (see the module)."""
    from ..errors import AnalystError, ConfigError
    from .._text import masked
    from ..sql import QueryRunner, open_source, prepare_query

    folder.mkdir(parents=True, exist_ok=True)
    queries = notebook_queries(nb)
    if not queries:
        return
    if len(queries) > MAX_HOSTED_QUERIES:
        raise ConfigError(f"the notebook has {len(queries):,} queries for the host to run on {masked(spec)}; at most "
                          f"{MAX_HOSTED_QUERIES} are run for one notebook", reason="too_many_queries",
                          hint="verify a thread's own audit notebook, or split the notebook")
    source = open_source(spec)

    async def run_all() -> None:
        runner = QueryRunner(source, timeout_s=HOSTED_TIMEOUT_S)
        for query in queries:
            dest = folder / hosted_result_name(query)
            try:
                await runner.run_to_parquet(prepare_query(query, source), dest)
            except AnalystError as exc:
                dest.with_suffix(".error").write_text(f"{type(exc).__name__}: {exc.message}")

    try:
        asyncio.run(run_all())
    finally:
        source.close()
