"""The public entry point for a step the user runs themselves: ``run_sql`` into a thread.

The ``%analyst_sql`` magic calls it; so could any other surface. It is a turn in the same
frame as :func:`~jupyter_analyst.turns.run.run_turn`'s (the thread and source resolved the
same way, events persisted, the thread's audit notebook rewritten), whose one step the user
typed instead of a model: same guard, same unknown-name suggestions, same Parquet artifact
and fingerprint, same reuse by step key. No kernel starts and no model is asked.
"""

from __future__ import annotations

from ..agent import USER_DRIVEN, AgentLoop, EventSink
from .config import AnalystConfig
from .frame import open_turn
from .host import TurnHost
from .requests import SqlStep, SqlStepRequest


async def run_sql_step(request: SqlStepRequest, *, config: AnalystConfig, on_event: EventSink | None = None) -> SqlStep:
    """Run the user's query as one turn of its thread (made on ``request.source`` when
    no thread is given); no kernel starts and no model is asked.

    Raises:
        ConfigError: an empty query, no thread and no source, or an unknown thread.
        SourceError: the source does not open.
    """
    request.check()
    async with open_turn(request, config, TurnHost.none(), speaker=USER_DRIVEN, on_event=on_event) as frame:
        loop = AgentLoop(store=frame.store, environment=frame.environment, llm=None, model=USER_DRIVEN,
                         events=frame.events, **config.loop_settings())
        summary, _trace, outcome = await frame.run(
            lambda turn: loop.run_call(turn, "run_sql", request.arguments(), rerun=request.rerun,
                                       announced=frame.announced)
        )
    return SqlStep.of(summary, outcome, notebook=frame.notebook)
