"""The analyst's tools inside Jupyter's own MCP server (the ``jupyter-server-mcp`` extension),
which loads them from the ``jupyter_server_mcp.tools`` entry point (:func:`tool_specs`).

That extension calls plain functions and hands them nothing of the server, nor who asks. So
each function finds the running server's own analyst (its settings, its sources, the kernels
it keeps between turns: the service the panel uses) and works as the server's user: ``local``
on a single-user server, as the panel's API says it, or the Hub's user of this server.
Their names start with ``analyst_``, beside the tools Jupyter AI registers there.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_types import CallToolResult

from ..errors import AnalystError, ConfigError
from .engine import AnalystTools, Reply, Scope, error_reply
from .results import tool_result

_cached: tuple[Any, AnalystTools] | None = None
_scope = Scope()

TOOLS = ("list_sources", "list_tables", "describe_table", "run_sql", "run_python", "list_artifacts",
         "thread_state", "ask")


def tool_specs() -> list[str]:
    """What the ``jupyter_server_mcp.tools`` entry point lists: ``module:function`` of each tool."""
    return [f"{__name__}:analyst_{name}" for name in TOOLS]


def _tools() -> AnalystTools:
    """The running Jupyter server's analyst, as its extension configured it."""
    global _cached
    from jupyter_server.serverapp import ServerApp

    if not ServerApp.initialized():
        raise ConfigError("no Jupyter server runs in this process", reason="no_server")
    service = ServerApp.instance().web_app.settings.get("jupyter_analyst")
    if service is None:
        raise ConfigError("the jupyter_analyst server extension is not enabled", reason="no_server",
                          hint="jupyter server extension enable jupyter_analyst")
    if not getattr(service, "jupyter_mcp_tools", False):
        # Jupyter's MCP server listens on a port of its own, without the server's token: any
        # local user reaching it could run code as this one. The owner opts in knowingly.
        raise ConfigError("the analyst's tools are off in Jupyter's MCP server", reason="jupyter_mcp_tools_off",
                          hint="it answers on a port of its own, without the Jupyter token; to allow them, set "
                               "c.AnalystApp.jupyter_mcp_tools = True")
    if _cached is None or _cached[0] is not service:
        user = os.environ.get("JUPYTERHUB_USER") or "local"
        tools = AnalystTools(service.config, source=service.catalog.spec_of(None), model=service.model, user=user,
                             live=service.live, sources=dict(service.catalog.sources))
        _cached = (service, tools)
    return _cached[1]


async def _answer(work: Callable[[AnalystTools], Awaitable[Reply]]) -> CallToolResult:
    """The reply of ``work`` on the server's analyst as an MCP result, as the analyst's own
    server gives it (a failed step ``isError``); a call refused as a whole says why."""
    try:
        return tool_result(await work(_tools()))
    except AnalystError as exc:
        return tool_result(error_reply(exc))


async def analyst_list_sources() -> CallToolResult:
    """The analyst's data sources: the server's default, and those of your threads."""
    return await _answer(lambda tools: tools.list_sources(scope=_scope))


async def analyst_list_tables(thread: str | None = None, source: str | None = None) -> CallToolResult:
    """The source's tables and views, with row counts (a new analyst thread when none is given, on the
    configured `source` named, as analyst_list_sources lists them, else the default)."""
    return await _answer(lambda tools: tools.step("list_tables", {}, thread=thread, scope=_scope, source=source))


async def analyst_describe_table(table: str, thread: str | None = None) -> CallToolResult:
    """A table's columns, types and sample rows."""
    return await _answer(lambda tools: tools.step("describe_table", {"table": table}, thread=thread, scope=_scope))


async def analyst_run_sql(sql: str, name: str, thread: str | None = None, source: str | None = None,
                          rerun: bool = False) -> CallToolResult:
    """Run a read-only SELECT into the dataset `name` of an analyst thread (reused when asked again)."""
    return await _answer(lambda tools: tools.step("run_sql", {"sql": sql, "name": name}, thread=thread, scope=_scope,
                                                  source=source, rerun=rerun))


async def analyst_run_python(code: str, thread: str | None = None) -> CallToolResult:
    """Run Python in the analyst thread's sandboxed kernel; its datasets are DataFrames by name."""
    return await _answer(lambda tools: tools.step("run_python", {"code": code}, thread=thread, scope=_scope))


async def analyst_list_artifacts(thread: str | None = None) -> CallToolResult:
    """An analyst thread's datasets, charts and files."""
    return await _answer(lambda tools: tools.list_artifacts(thread=thread, scope=_scope))


async def analyst_thread_state(thread: str) -> CallToolResult:
    """An analyst thread's turns and agent state."""
    return await _answer(lambda tools: tools.thread_state(thread=thread, scope=_scope))


async def analyst_ask(prompt: str, thread: str | None = None) -> CallToolResult:
    """Ask the data analyst a whole question: it plans, queries, analyses and answers."""
    return await _answer(lambda tools: tools.ask(prompt, thread=thread, scope=_scope))
