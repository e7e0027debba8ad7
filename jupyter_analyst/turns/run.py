"""The public entry point: run one turn of a thread, as the CLI, the server and the magics do."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..agent import (
    AgentLoop,
    EventSink,
    EventWriter,
    ThreadMemory,
    TurnSummary,
    start_sdk_import,
    summarize_turn,
)
from ..workspace import Workspace
from .budget_gate import turn_budget
from .config import AnalystConfig, ModelSettings
from .frame import open_turn
from .host import BackgroundWork, TurnHost
from .requests import TurnRequest

if TYPE_CHECKING:
    from ..kernel import KernelLauncher, KernelPool
    from ..ledger import Usage
    from ..store import Turn
    from .live import LiveThreads


async def run_turn(
    request: TurnRequest,
    *,
    config: AnalystConfig,
    model: ModelSettings,
    on_event: EventSink | None = None,
    launcher: KernelLauncher | None = None,
    pool: KernelPool | None = None,
    background: BackgroundWork | None = None,
    live: LiveThreads | None = None,
    turn: Turn | None = None,
) -> TurnSummary:
    """Run one turn end to end: resolve the thread and source, loop, write the notebook.

    ``launcher`` decides where kernels start (the Jupyter server passes its own kernel
    manager's); by default they start on this machine. A long-running process passes a
    warm ``pool`` so a new thread's first Python step does not wait for a kernel, and
    ``live`` to keep each thread's runtime, its kernel included, from one turn to the
    next; without it the kernel stops when the turn ends. A turn cancelled or failed
    midway keeps nothing of its kernel (a step may have been cut in the middle).

    ``turn``: the turn, already started and told by the caller on the request's
    thread (the server does so while it answers the request: its client sees the turn begin
    at once, see :meth:`ThreadStore.announce_turn`).

    After ``done``, the summarizer updates the agent state: in ``background`` when given (the
    call returns as soon as the turn is done, and the next turn may start at once), else
    before returning.
    """
    request.check()
    # The model's SDK is imported while the workspace, thread and source open (the first turn
    # of a process would otherwise wait for it after them).
    start_sdk_import()
    host = TurnHost(launcher=launcher, pool=pool, live=live, background=background)
    async with (
        open_turn(request, config, host, speaker=model.model, on_event=on_event, announced=turn) as frame,
        model.client() as llm,
    ):
        assert frame.thread is not None
        # Each model call is held to the thread owner's budgets, whichever surface asks.
        budget = turn_budget(frame.store, config, model, frame.thread.user)
        loop = AgentLoop(store=frame.store, environment=frame.environment, llm=llm, model=model.model,
                         ending=frame.life.ended, events=frame.events, price=config.price_of(model.model),
                         spending=budget, **config.loop_settings())
        summary, _trace = await frame.run(lambda t: loop.run(t, rerun=request.rerun))
        # The summarizer's call is a model call too: not sent once a budget is spent.
        spent = budget is not None and bool(await asyncio.to_thread(budget.spent, summary.thread_id))
    if config.summarizer and not spent and summary.status in ("completed", "needs_input", "step_limited", "no_answer"):
        assert frame.turn is not None
        work = _summarize(config, model, frame.turn, on_event)
        if host.background is None:
            summary = summary.with_summarizer(await work)
        else:
            host.background.spawn(work)
            # Said, so no report of the turn's model calls shows the summarizer's as none.
            summary = summary.model_copy(update={"summarizer_pending": True})
    return summary.model_copy(update={"notebook": str(frame.notebook)})


async def _summarize(config: AnalystConfig, model: ModelSettings, turn: Turn,
                     on_event: EventSink | None) -> Usage | None:
    """The end-of-turn summarizer, with its own store connection and model client; what its
    call cost (``None``: none was sent)."""
    workspace = Workspace.of(config)
    try:
        async with model.client(summarizer=True) as llm:
            event = await summarize_turn(ThreadMemory(workspace.store, turn.thread_id), turn, llm, budget=config.context,
                                 events=EventWriter(workspace.store, on_event),
                                 price=config.price_of(model.summary_model or model.model))
    finally:
        workspace.close()
    return event.usage
