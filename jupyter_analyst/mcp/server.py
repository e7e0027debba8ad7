"""The analyst as an MCP server (the official SDK's ``MCPServer``): the tools of
:class:`~.engine.AnalystTools`, artifacts and audit notebooks as resources (read with their own
MIME type; the user's recent artifacts listed), over stdio or streamable HTTP.

Each tool call's events become progress notifications, with a beat every second while a step
runs (:mod:`.reporting`); a client that cancels the call cancels the step's task, which stops
it as the panel's Stop does (the kernel interrupted, the query cancelled) and ends the turn
``interrupted``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import anyio
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp_types import CallToolResult, Resource, ToolAnnotations
from pydantic import Field

from .._version import __version__
from ..errors import AnalystError
from .analyst_tools import ARTIFACT_SCHEME, NOTEBOOK_SCHEME, AnalystTools, Reply, Scope
from .parameters import Code, Name, Prompt, Rerun, Sql
from .reporting import progress as _progress
from .tool_results import tool_result
from .schemas import (
    ArtifactOut,
    ArtifactsOut,
    AskOut,
    DecisionOut,
    RevertOut,
    RestartOut,
    SourcesOut,
    StateOut,
    StepOut,
    ThreadsOut,
    VerifyOut,
)

LOOKUP = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
STEP = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

# Each tool's result, with the output schema of its structured content (checked by the SDK).
StepResult = Annotated[CallToolResult, StepOut]
RestartResult = Annotated[CallToolResult, RestartOut]
AskResult = Annotated[CallToolResult, AskOut]
SourcesResult = Annotated[CallToolResult, SourcesOut]
ThreadsResult = Annotated[CallToolResult, ThreadsOut]
ArtifactsResult = Annotated[CallToolResult, ArtifactsOut]
ArtifactResult = Annotated[CallToolResult, ArtifactOut]
StateResult = Annotated[CallToolResult, StateOut]
VerifyResult = Annotated[CallToolResult, VerifyOut]
DecisionResult = Annotated[CallToolResult, DecisionOut]
RevertResult = Annotated[CallToolResult, RevertOut]

IPYNB = "application/x-ipynb+json"

# Each parameter as the client's model reads it in the tool's schema (those both surfaces share: parameters.py).
# The long form of `thread` and `source` is the server's instructions' (INSTRUCTIONS): each
# tool's schema says them in one sentence, not the same paragraph in every tool.
Thread = Annotated[str | None, Field(description="The thread (thr_...) to go on in; left out, a new thread starts.")]
NamedThread = Annotated[str, Field(description="The thread (thr_...), as a result or the threads tool named it.")]
Table = Annotated[str, Field(description="A table or view name, as list_tables gives it.")]
Fingerprint = Annotated[str, Field(description="The artifact's fingerprint (sha256:...), as a result gave it.")]
NotebookName = Annotated[str | None, Field(description=(
    "A notebook to work beside, by its path relative to the server's notebook folder (e.g. study.ipynb)."))]
ProposalId = Annotated[str, Field(description="The proposal (prop_...), as ask's `proposals` named it.")]
TurnId = Annotated[str, Field(description="The turn (turn_...) whose accepted changes to undo.")]
Cells = Annotated[list[str] | None, Field(description="The change ids to decide on; left out, every pending one.")]


def source_parameter(names: list[str]) -> Any:
    """The ``source`` parameter, naming this server's sources (its schema is the server's own).

    >>> source_parameter(["sales", "crm"]).__metadata__[0].description
    'The source to start a new thread on, by name (never a path): one of sales, crm (default sales).'
    """
    choice = f"one of {', '.join(names)} (default {names[0]})" if names else "none is configured"
    return Annotated[str | None, Field(description=(
        f"The source to start a new thread on, by name (never a path): {choice}."))]

INSTRUCTIONS = (
    "A data analyst over the user's database. Look up tables with list_tables/describe_table, query with "
    "run_sql (into a named dataset), analyse with run_python (datasets are pandas DataFrames by name), or ask "
    "the analyst a whole question with ask. Every result names its thread: pass it as `thread` to go on in it "
    "(its datasets and Python variables are there); without `thread` a new thread starts. Datasets, charts "
    "and files are resources analyst://artifact/<fingerprint> (a chart also comes back as an image); a thread's "
    "audit notebook is analyst://notebook/<thread>. Calls on one thread run one after another; look-ups run "
    "at once. The user configured the sources by name (list_sources lists them with their tables): pass one as "
    "`source` to start a thread on it, never a path or URL; a thread stays on its source (leave `source` out to "
    "go on in a `thread`)."
)


class Scopes:
    """The client's :class:`Scope`: the threads made or named through this server.

    The 2026 protocol answers each request on its own (no connection a scope could be kept
    on), so the scope is the server's: over stdio, one client's (each client starts its own
    server); over HTTP, that of every client holding the server's token, all the same user.
    """

    def __init__(self) -> None:
        self._scope = Scope()

    def of(self, ctx: Context | None) -> Scope:
        return self._scope


class _AnalystServer(MCPServer):
    """The SDK's server, whose artifact resources are read with their own MIME type (a
    template declares one for all) and listed: the user's recent ones."""

    def __init__(self, tools: AnalystTools, scopes: Scopes, **settings: Any) -> None:
        super().__init__(**settings)
        self.analyst, self.scopes = tools, scopes

    async def list_resources(self) -> list[Resource]:
        views = await self.analyst.recent_artifacts()
        return [*await super().list_resources(), *(
            Resource(uri=v["uri"], name=v["name"], mime_type=v["mime"], size=v["size"],
                     description=f"{v['type']} of thread {v['thread']}") for v in views)]

    async def read_resource(self, uri: Any, context: Context | None = None) -> Any:
        address, scope = str(uri), self.scopes.of(context)
        try:
            if address.startswith(ARTIFACT_SCHEME):
                data, mime = await self.analyst.read_artifact(address[len(ARTIFACT_SCHEME):], scope=scope)
            elif address.startswith(NOTEBOOK_SCHEME):
                data, mime = await self.analyst.read_notebook(address[len(NOTEBOOK_SCHEME):], scope=scope), IPYNB
            else:
                return await super().read_resource(uri, context)
        except AnalystError as exc:  # the client is told why, as a resource error
            raise ResourceError(self.analyst.sources.redact(str(exc))) from exc
        return [ReadResourceContents(content=data, mime_type=mime)]


async def _stoppable(work: Awaitable[Reply]) -> Reply:
    """``work`` in a task of its own, cancelled once when the client cancels the call.

    The SDK cancels a handler by cancelling its scope, which cancels every await inside
    it until it exits; a step stopped that way could not end its turn (interrupt the
    kernel, tell ``turn_ended``, close the turn in the store). Here the step's task is
    cancelled once, as the panel's Stop does, and awaited to its end, shielded.
    """
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait([task])
        raise


def build_server(tools: AnalystTools) -> MCPServer:
    """The MCP server of ``tools``: every tool, and artifacts as resources."""
    scopes = Scopes()
    server = _AnalystServer(tools, scopes, name="jupyter-analyst", title="Jupyter Analyst", version=__version__,
                            instructions=INSTRUCTIONS)

    async def guarded(work: Awaitable[Reply]) -> CallToolResult:
        try:
            return tool_result(await _stoppable(work))
        except AnalystError as exc:  # bad input: a clear error, nothing lost
            return tool_result(tools.refused(exc))

    async def step(ctx: Context, handler: Callable[..., Any], thread: str | None, source: str | None,
                   rerun: bool = False, **arguments: Any) -> CallToolResult:
        """One call of the analyst's tool that the MCP tool ``handler`` is named after."""
        tool = handler.__name__
        async with _progress(ctx, tool) as on_event:
            return await guarded(tools.step(tool, arguments, thread=thread, scope=scopes.of(ctx), on_event=on_event,
                                            rerun=rerun, source=source))

    # The tools that may start a thread take `source`, whose schema names this server's sources.
    choosing = _choosing(source_parameter(tools.sources.names))

    @server.tool(title="List tables", annotations=LOOKUP)
    @choosing
    async def list_tables(ctx: Context, thread: Thread = None, source: str | None = None) -> StepResult:
        """The source's tables and views, with row counts. Without thread, a new thread is made."""
        return await step(ctx, list_tables, thread, source)

    @server.tool(title="Describe a table", annotations=LOOKUP)
    @choosing
    async def describe_table(table: Table, ctx: Context, thread: Thread = None,
                             source: str | None = None) -> StepResult:
        """A table's columns, types and sample rows."""
        return await step(ctx, describe_table, thread, source, table=table)

    @server.tool(title="Run SQL into a dataset", annotations=STEP)
    @choosing
    async def run_sql(sql: Sql, name: Name, ctx: Context, thread: Thread = None, source: str | None = None,
                      rerun: Rerun = False) -> StepResult:
        """Run a read-only SELECT on the source into the dataset `name` (a Parquet artifact, loaded in the
        thread's Python as a DataFrame). The same query again is reused, not re-run (unless rerun)."""
        return await step(ctx, run_sql, thread, source, rerun, sql=sql, name=name)

    @server.tool(title="Run Python", annotations=STEP)
    @choosing
    async def run_python(code: Code, ctx: Context, thread: Thread = None, source: str | None = None,
                         rerun: Rerun = False) -> StepResult:
        """Run Python in the thread's sandboxed kernel (its datasets are DataFrames by name; charts shown and
        files written under outputs/ become artifacts; a chart comes back as an image too)."""
        return await step(ctx, run_python, thread, source, rerun, code=code)

    @server.tool(title="Restart a thread's kernel", annotations=STEP)
    async def restart_kernel(thread: NamedThread, ctx: Context) -> RestartResult:
        """Stop the thread's Python kernel (after its running steps): the next run_python starts a fresh one,
        where the thread's datasets and values are restored as steps read them."""
        return await guarded(tools.restart_kernel(thread=thread, scope=scopes.of(ctx)))

    _ask(server, tools, scopes, guarded, choosing)

    _lookups(server, tools, scopes, guarded)
    return server



def _ask(server: MCPServer, tools: AnalystTools, scopes: Scopes,
         guarded: Callable[[Awaitable[Reply]], Awaitable[CallToolResult]], choosing: Callable[[Any], Any]) -> None:
    """``ask``; with a notebook folder, beside a notebook of it, and the decisions on what it proposed."""
    if tools.desk is None:
        @server.tool(title="Ask the analyst", annotations=STEP)
        @choosing
        async def ask(prompt: Prompt, ctx: Context, thread: Thread = None, source: str | None = None) -> AskResult:
            """Ask this product's own analyst a whole question: it plans, queries, analyses and answers."""
            async with _progress(ctx, "ask") as on_event:
                return await guarded(tools.ask(prompt, thread=thread, scope=scopes.of(ctx), on_event=on_event,
                                               source=source))
    else:
        @server.tool(name="ask", title="Ask the analyst", annotations=STEP)
        @choosing
        async def ask_beside(prompt: Prompt, ctx: Context, thread: Thread = None, source: str | None = None,
                             notebook: NotebookName = None) -> AskResult:
            """Ask this product's own analyst a whole question: it plans, queries, analyses and answers. With
            `notebook`, it works beside that notebook and may propose cells for it (run first in the sandbox):
            the result's `proposals` are structured diffs; nothing changes until accept_proposal."""
            async with _progress(ctx, "ask") as on_event:
                return await guarded(tools.ask(prompt, thread=thread, scope=scopes.of(ctx), on_event=on_event,
                                               source=source, notebook=notebook))

        _decisions(server, tools, scopes, guarded)

def _decisions(server: MCPServer, tools: AnalystTools, scopes: Scopes,
               guarded: Callable[[Awaitable[Reply]], Awaitable[CallToolResult]]) -> None:
    """The decisions on proposed cells (a server with a notebook folder: it can write them)."""

    @server.tool(title="Accept proposed cells", annotations=STEP)
    async def accept_proposal(thread: NamedThread, proposal: ProposalId, ctx: Context,
                              cells: Cells = None) -> DecisionResult:
        """Write the proposal's changes into its notebook (checkpointed first): `cells` by id, or every pending
        one. A change whose cell was edited since is refused, and nothing is written."""
        return await guarded(tools.decide("accept", thread=thread, proposal=proposal, cells=cells,
                                          scope=scopes.of(ctx)))

    @server.tool(title="Reject proposed cells", annotations=STEP)
    async def reject_proposal(thread: NamedThread, proposal: ProposalId, ctx: Context,
                              cells: Cells = None) -> DecisionResult:
        """Reject the proposal's changes (`cells` by id, or every pending one); the notebook is not touched."""
        return await guarded(tools.decide("reject", thread=thread, proposal=proposal, cells=cells,
                                          scope=scopes.of(ctx)))

    @server.tool(title="Revert a turn's accepted cells", annotations=STEP)
    async def revert_turn(thread: NamedThread, turn: TurnId, ctx: Context) -> RevertResult:
        """Restore the notebook from the checkpoint taken before the turn's first accepted change."""
        return await guarded(tools.revert(thread=thread, turn=turn, scope=scopes.of(ctx)))


def _choosing(parameter: Any) -> Callable[[Any], Any]:
    """A decorator giving a tool's ``source`` parameter the schema ``parameter`` (made per server:
    it names the server's sources)."""
    def give(handler: Any) -> Any:
        handler.__annotations__["source"] = parameter
        return handler

    return give


def _lookups(server: MCPServer, tools: AnalystTools, scopes: Scopes,
             guarded: Callable[[Awaitable[Reply]], Awaitable[CallToolResult]]) -> None:
    """The tools that read the store, and artifacts as resources."""

    @server.tool(title="List sources and threads", annotations=LOOKUP)
    async def list_sources(ctx: Context) -> SourcesResult:
        """The data sources you may name as `source` (the default first), each with its kind, tables and row
        counts; and how many threads you have (the threads tool lists them)."""
        return await guarded(tools.list_sources(scope=scopes.of(ctx)))

    @server.tool(title="List your threads", annotations=LOOKUP)
    async def threads(ctx: Context) -> ThreadsResult:
        """Your threads, the most recently active first: each one's id, title, source and last activity."""
        return await guarded(tools.threads(scope=scopes.of(ctx)))

    @server.tool(title="List a thread's artifacts", annotations=LOOKUP)
    async def list_artifacts(thread: NamedThread, ctx: Context) -> ArtifactsResult:
        """The thread's datasets, charts and files, each with its resource URI."""
        return await guarded(tools.list_artifacts(thread=thread, scope=scopes.of(ctx)))

    @server.tool(title="Locate an artifact", annotations=LOOKUP)
    async def get_artifact(fingerprint: Fingerprint, ctx: Context) -> ArtifactResult:
        """Where an artifact's bytes are: its resource URI (read it as a resource), type and size."""
        return await guarded(tools.artifact(fingerprint, scope=scopes.of(ctx)))

    @server.tool(title="A thread's turns and state", annotations=LOOKUP)
    async def thread_state(thread: NamedThread, ctx: Context) -> StateResult:
        """The thread's turns and agent state (entities, hypotheses, open items)."""
        return await guarded(tools.thread_state(thread=thread, scope=scopes.of(ctx)))

    @server.tool(title="Verify a thread's notebook", annotations=LOOKUP)
    async def verify(thread: NamedThread, ctx: Context) -> VerifyResult:
        """Re-execute the thread's audit notebook and compare every artifact's fingerprint."""
        async with _progress(ctx, "verify"):
            return await guarded(tools.verify(thread=thread, scope=scopes.of(ctx)))

    # Listed for clients to see the URI's form; reads are answered by the server itself
    # (_AnalystServer.read_resource), each with its artifact's own MIME type.
    @server.resource(ARTIFACT_SCHEME + "{fingerprint}", name="artifact", mime_type="application/octet-stream",
                     description="A dataset (Parquet), chart (PNG) or file of one of your threads, by fingerprint; "
                                 "read with its own MIME type.")
    async def artifact(fingerprint: str, ctx: Context) -> bytes:
        data, _mime = await tools.read_artifact(fingerprint, scope=scopes.of(ctx))
        return data

    @server.resource(NOTEBOOK_SCHEME + "{thread}", name="notebook", mime_type=IPYNB,
                     description="A thread's audit notebook: every step it ran, re-executable (see verify).")
    async def notebook(thread: str, ctx: Context) -> bytes:
        return await tools.read_notebook(thread, scope=scopes.of(ctx))
