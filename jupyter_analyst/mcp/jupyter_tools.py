"""The analyst's tools inside Jupyter's own MCP server (the ``jupyter-server-mcp`` extension),
which loads them from the ``jupyter_server_mcp.tools`` entry point (:func:`tool_specs`).

That extension calls plain functions and hands them nothing of the server, nor who asks. So
each function finds the running server's own analyst (its settings, its sources, the kernels
it keeps between turns: the service the panel uses) and works as the server's user: ``local``
on a single-user server, as the panel's API says it, or the Hub's user of this server.
Their names start with ``analyst_``, beside the tools Jupyter AI registers there.

A step on a thread whose panel turn is running waits for it (as for the thread's steps
before it, :mod:`.queueing`), look-ups run beside it; a call whose client sent a progress
token is told the step's progress, as by the analyst's own server (FastMCP's context, which
the extension's server runs each call in).

That server reads no resources: a result names each artifact by the call that fetches it
(``analyst_get_artifact``, which gives its bytes in its result: a chart as an image), and a
thread's audit notebook by its path under the Jupyter server's root, as the server's other
tools name files (:func:`~.tool_results.fetched_by`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

from mcp_types import CallToolResult
from pydantic import Field

from ..errors import AnalystError, ConfigError
from .analyst_tools import AnalystTools, Reply, Scope
from .parameters import Code, Name, Prompt, Rerun, Sql
from .reporting import progress
from .tool_results import artifact_result, fetched_by, tool_result

_cached: tuple[Any, AnalystTools] | None = None
_scope = Scope()

# Each parameter as the client's model reads it in the tool's schema (those both surfaces share: parameters.py).
Thread = Annotated[str | None, Field(description=(
    "The analyst thread (thr_...) to go on in; left out, a new thread starts."))]
NamedThread = Annotated[str, Field(description=(
    "The analyst thread (thr_...), as a result or analyst_threads named it."))]
Source = Annotated[str | None, Field(description=(
    "The source to start a new thread on, by name as analyst_list_sources lists them (default the first)."))]
Table = Annotated[str, Field(description="A table or view name, as analyst_list_tables gives it.")]
Fingerprint = Annotated[str, Field(description="The artifact's fingerprint (sha256:...), as a result gave it.")]
Notebook = Annotated[str | None, Field(description=(
    "A notebook to work beside (cells may be proposed for it), by its path under the Jupyter server's root."))]
ProposalId = Annotated[str, Field(description="The proposal (prop_...), as analyst_ask's `proposals` named it.")]
TurnId = Annotated[str, Field(description="The turn (turn_...) whose accepted changes to undo.")]
Cells = Annotated[list[str] | None, Field(description="The change ids to decide on; left out, every pending one.")]

#: The prefix of each tool's name, beside Jupyter AI's tools.
PREFIX = "analyst_"
#: An artifact larger than this is not put in a result (its dataset is read in the thread's Python).
EMBED_CAP = 5_000_000


def tool_specs() -> list[str]:
    """What the ``jupyter_server_mcp.tools`` entry point lists: ``module:function`` of each tool."""
    return [f"{__name__}:{tool.__name__}" for tool in TOOLS]


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
        # Only the configured sources, by name, even where the panel may open any path.
        # Notebooks by their path under the server's root, as its other tools and the panel name them.
        tools = AnalystTools(service.config, sources=dict(service.catalog.sources), model=service.model, user=user,
                             live=service.live, wait_s=service.jupyter_mcp_wait_s, host_turn=service.running_turn,
                             notebooks=Path(ServerApp.instance().root_dir).expanduser())
        _cached = (service, tools)
    return _cached[1]


@contextlib.asynccontextmanager
async def _told(what: str) -> AsyncIterator[Any]:
    """The call's progress sink: FastMCP's context of this call, when there is one."""
    try:
        from fastmcp.server.dependencies import get_context

        context = get_context()
    except (ImportError, RuntimeError):  # called outside a FastMCP request: nobody to tell
        yield None
        return
    async with progress(context, what) as on_event:
        yield on_event


async def _answer(work: Callable[[AnalystTools], Awaitable[Reply]]) -> CallToolResult:
    """The reply of ``work`` on the server's analyst as an MCP result, as the analyst's own
    server gives it (a failed step ``isError``); a call refused as a whole says why."""
    tools: AnalystTools | None = None
    try:
        tools = _tools()
        reply = await work(tools)
    except AnalystError as exc:
        reply = tools.refused(exc) if tools is not None else _plain(exc)
    return tool_result(fetched_by(reply, analyst_get_artifact.__name__, _notebook_path))


def _notebook_path(thread: str) -> str | None:
    """A thread's audit notebook as the Jupyter server names files: its path under the
    server's root (``None`` when the workspace is outside it, or it is not written yet)."""
    from jupyter_server.serverapp import ServerApp

    from ..workspace import Workspace

    if _cached is None or not ServerApp.initialized():
        return None
    # The thread's id comes from a result's text (a model's answer may hold any): a lookup
    # that creates nothing.
    path = Workspace.of(_cached[1].config).written_notebook(thread)
    try:
        return path.relative_to(Path(ServerApp.instance().root_dir).expanduser().resolve()).as_posix() if path else None
    except ValueError:
        return None


def _plain(exc: AnalystError) -> Reply:
    from .analyst_tools import error_reply

    return error_reply(exc)


async def _step(handler: Callable[..., Any], arguments: dict[str, Any], *, thread: str | None,
                source: str | None = None, rerun: bool = False) -> CallToolResult:
    """One call of the analyst's tool that ``handler`` is named after (``analyst_run_sql``: ``run_sql``)."""
    tool = handler.__name__.removeprefix(PREFIX)
    async with _told(tool) as on_event:
        return await _answer(lambda tools: tools.step(tool, arguments, thread=thread, scope=_scope, source=source,
                                                      rerun=rerun, on_event=on_event))


async def analyst_list_sources() -> CallToolResult:
    """The data sources you may name as `source` (the default first), each with its kind, tables and row
    counts; and how many analyst threads you have (analyst_threads lists them)."""
    return await _answer(lambda tools: tools.list_sources(scope=_scope))


async def analyst_threads() -> CallToolResult:
    """Your analyst threads, the most recently active first: each one's id, title, source and last activity."""
    return await _answer(lambda tools: tools.threads(scope=_scope))


async def analyst_list_tables(thread: Thread = None, source: Source = None) -> CallToolResult:
    """The source's tables and views, with row counts. Without `thread` a new analyst thread starts, on
    `source` (a name analyst_list_sources lists); a thread stays on its own source."""
    return await _step(analyst_list_tables, {}, thread=thread, source=source)


async def analyst_describe_table(table: Table, thread: Thread = None, source: Source = None) -> CallToolResult:
    """A table's columns, types and sample rows."""
    return await _step(analyst_describe_table, {"table": table}, thread=thread, source=source)


async def analyst_run_sql(sql: Sql, name: Name, thread: Thread = None, source: Source = None,
                          rerun: Rerun = False) -> CallToolResult:
    """Run a read-only SELECT into the dataset `name` of an analyst thread (reused when asked again). A step
    waits for the thread's running turn, the panel's too, up to a bound."""
    return await _step(analyst_run_sql, {"sql": sql, "name": name}, thread=thread, source=source, rerun=rerun)


async def analyst_run_python(code: Code, thread: Thread = None, source: Source = None,
                             rerun: Rerun = False) -> CallToolResult:
    """Run Python in the analyst thread's sandboxed kernel; its datasets are DataFrames by name. A step
    waits for the thread's running turn, the panel's too, up to a bound."""
    return await _step(analyst_run_python, {"code": code}, thread=thread, source=source, rerun=rerun)


async def analyst_list_artifacts(thread: NamedThread) -> CallToolResult:
    """An analyst thread's datasets, charts and files."""
    return await _answer(lambda tools: tools.list_artifacts(thread=thread, scope=_scope))


async def analyst_thread_state(thread: NamedThread) -> CallToolResult:
    """An analyst thread's turns and agent state."""
    return await _answer(lambda tools: tools.thread_state(thread=thread, scope=_scope))


async def analyst_get_artifact(fingerprint: Fingerprint) -> CallToolResult:
    """An artifact of your analyst threads, by fingerprint, in the result itself: a chart as an image, a file
    as text, a dataset as its Parquet bytes (base64). A result names the call that fetches each artifact."""
    fetched: list[tuple[dict[str, Any], bytes]] = []

    async def fetch(tools: AnalystTools) -> Reply:
        found = await tools.artifact(fingerprint, scope=_scope)
        if found.data["size"] > EMBED_CAP:
            raise ConfigError(f"{found.data['name']} is {found.data['size']:,} bytes, more than a result carries "
                              f"({EMBED_CAP:,})", reason="artifact_too_large",
                              hint="a dataset is a DataFrame by its name in its thread: analyst_run_python "
                                   "can summarise it")
        data, _mime = await tools.read_artifact(fingerprint, scope=_scope)
        fetched.append((found.data, data))
        return found

    refused = await _answer(fetch)  # a refusal (unknown, another user's, too large) is said as others are
    return artifact_result(*fetched[0]) if fetched else refused


async def analyst_restart_kernel(thread: NamedThread) -> CallToolResult:
    """Stop an analyst thread's Python kernel (after its running steps): the next analyst_run_python starts a
    fresh one, where the thread's datasets and values are restored as steps read them."""
    return await _answer(lambda tools: tools.restart_kernel(thread=thread, scope=_scope))


async def analyst_verify(thread: NamedThread) -> CallToolResult:
    """Re-execute an analyst thread's audit notebook and compare every artifact's fingerprint: whether its
    results reproduce, and why one that does not differs."""
    async with _told("verify"):
        return await _answer(lambda tools: tools.verify(thread=thread, scope=_scope))


async def analyst_ask(prompt: Prompt, thread: Thread = None, source: Source = None,
                      notebook: Notebook = None) -> CallToolResult:
    """Ask the data analyst a whole question: it plans, queries, analyses and answers. With `notebook`, it works
    beside that notebook and may propose cells for it (run first in the sandbox): the result's `proposals` are
    structured diffs; nothing changes until analyst_accept_proposal."""
    async with _told("ask") as on_event:
        return await _answer(lambda tools: tools.ask(prompt, thread=thread, scope=_scope, source=source,
                                                     on_event=on_event, notebook=notebook))


async def analyst_accept_proposal(thread: NamedThread, proposal: ProposalId, cells: Cells = None) -> CallToolResult:
    """Write the proposed cells (`cells` by id, or every pending one) into their notebook, checkpointed first. A
    change whose cell was edited since is refused, and nothing is written."""
    return await _answer(lambda tools: tools.decide("accept", thread=thread, proposal=proposal, cells=cells,
                                                    scope=_scope))


async def analyst_reject_proposal(thread: NamedThread, proposal: ProposalId, cells: Cells = None) -> CallToolResult:
    """Reject proposed cells (`cells` by id, or every pending one); the notebook is not touched."""
    return await _answer(lambda tools: tools.decide("reject", thread=thread, proposal=proposal, cells=cells,
                                                    scope=_scope))


async def analyst_revert_turn(thread: NamedThread, turn: TurnId) -> CallToolResult:
    """Restore the notebook from the checkpoint taken before the turn's first accepted change."""
    return await _answer(lambda tools: tools.revert(thread=thread, turn=turn, scope=_scope))


#: The tools, in the order they are listed.
TOOLS = (analyst_list_sources, analyst_threads, analyst_list_tables, analyst_describe_table, analyst_run_sql,
         analyst_run_python, analyst_restart_kernel, analyst_list_artifacts, analyst_get_artifact,
         analyst_thread_state, analyst_verify, analyst_ask, analyst_accept_proposal, analyst_reject_proposal,
         analyst_revert_turn)
