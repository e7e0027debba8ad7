"""The public entry points for a step the user (or a client agent) runs themselves: one
named tool, or ``run_sql``, into a thread.

The ``%analyst_sql`` magic calls :func:`run_sql_step`; the MCP server calls
:func:`run_tool_step` for each tool a client agent calls. Either is a turn in the same frame
as :func:`~jupyter_analyst.turns.run.run_turn`'s (the thread and source resolved the same
way, events persisted, the thread's audit notebook rewritten), whose one step was asked for
instead of being chosen by a model: the same pipeline (``AgentLoop.run_call``), so the same
guards, unknown-name suggestions, artifacts and fingerprints, and reuse by step key. No model
is asked; a kernel starts only for a step that needs one, lent by the host (kept between
steps by ``live``, as the server keeps a thread's kernel between turns).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..agent import USER_DRIVEN, AgentLoop, EventSink, StepOutcome, TurnSummary
from ..step_kinds import QUERY_TOOL
from .config import AnalystConfig
from .frame import Ask, TurnFrame, open_turn
from .host import TurnHost
from .requests import SqlStep, SqlStepRequest, ToolStep, ToolStepRequest

if TYPE_CHECKING:
    from ..kernel import KernelLauncher, KernelPool
    from .live import LiveThreads


async def run_sql_step(request: SqlStepRequest, *, config: AnalystConfig, on_event: EventSink | None = None) -> SqlStep:
    """Run the user's query as one turn of its thread (made on ``request.source`` when
    no thread is given); no kernel starts and no model is asked.

    Raises:
        ConfigError: an empty query, no thread and no source, or an unknown thread.
        SourceError: the source does not open.
    """
    request.check()
    summary, outcome, frame = await _one_call(request, QUERY_TOOL, request.arguments(), config, TurnHost.none(),
                                              on_event)
    return SqlStep.of(summary, outcome, notebook=frame.notebook)


async def run_tool_step(
    request: ToolStepRequest,
    *,
    config: AnalystConfig,
    on_event: EventSink | None = None,
    launcher: KernelLauncher | None = None,
    pool: KernelPool | None = None,
    live: LiveThreads | None = None,
) -> ToolStep:
    """Run one call of ``request.tool`` as one turn of its thread (made on
    ``request.source`` when no thread is given). A refused or failed call ends the turn in
    error and its result says why (the guard's own message); it raises only when the turn
    cannot be had at all. Cancelling the caller's task stops the step as the panel's Stop
    does (the kernel interrupted, the query cancelled) and ends the turn ``interrupted``.

    ``launcher``, ``pool`` and ``live`` are the host's, as :func:`run_turn` takes them: with
    ``live``, the thread's kernel is kept for its next step.

    Raises:
        ConfigError: a tool that cannot be asked for, no thread and no source, or an
            unknown thread.
        SourceError: the source does not open.
    """
    request.check()
    host = TurnHost(launcher=launcher, pool=pool, live=live)
    summary, outcome, frame = await _one_call(request, request.tool, request.arguments, config, host, on_event)
    assert frame.thread is not None
    return ToolStep.of(summary, outcome, thread_id=frame.thread.thread_id, notebook=frame.notebook)


async def _one_call(
    request: Ask, tool: str, arguments: dict[str, Any], config: AnalystConfig, host: TurnHost,
    on_event: EventSink | None,
) -> tuple[TurnSummary, StepOutcome, TurnFrame]:
    """One user-driven turn whose one step is ``tool(arguments)``, in the turn's frame."""
    async with open_turn(request, config, host, speaker=USER_DRIVEN, on_event=on_event) as frame:
        loop = AgentLoop(store=frame.store, environment=frame.environment, llm=None, model=USER_DRIVEN,
                         ending=frame.life.ended, events=frame.events, **config.loop_settings())
        summary, _trace, outcome = await frame.run(
            lambda turn: loop.run_call(turn, tool, arguments, rerun=request.rerun)
        )
    return summary, outcome, frame
