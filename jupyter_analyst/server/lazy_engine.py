"""The turn engine, loaded when the server first needs it rather than when the server starts.

A Jupyter server imports and loads its extensions at every start, whether or not anyone
opens the panel. The engine is most of what this extension would import there: the agent
loop, the model's SDK, the summarizer (``python -X importtime``: about 2 s of CPU of the
2.6 s the extension used to add). So the server starts without it. The first request to
the API (the panel opening) begins importing it on a thread of its own, so the event loop
goes on serving; what needs the engine (a turn, whether the model is the scripted one)
awaits that import, and finds it done when it already is.

The panel's opening means a question is coming: once the engine is in, the server's loader
(:func:`import_engine_warm`) starts the rest of what a first turn would wait for, in the
background: the SQL checker's worker process and the modules a turn imports at its first use.
A turn asked before all that is ready says it waits (``starting``, see service.py).
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..turns import BackgroundWork, LiveThreads, TurnRequest, TurnSummary


@dataclass(frozen=True)
class TurnEngine:
    """What the server runs turns with."""

    run_turn: Callable[..., Awaitable[TurnSummary]]
    turn_request: type[TurnRequest]
    live_threads: type[LiveThreads]
    background_work: type[BackgroundWork]
    scripted_model: str
    """The name the offline scripted model answers to."""
    warm: Callable[[], None]
    """Start what a first question would otherwise wait for (the SQL checker's worker, the
    modules a turn imports at its first use), in the background."""
    warmed: threading.Event
    """Set once the modules :attr:`warm` imports are in (a turn before then waits for them)."""


def import_engine() -> TurnEngine:
    """The engine, imported (seconds the first time, nothing after)."""
    from ..agent import SCRIPTED_MODEL
    from ..sql import SqlPreparer
    from ..turns import BackgroundWork, LiveThreads, TurnRequest, run_turn

    def warm() -> None:
        SqlPreparer().warm()
        threading.Thread(target=_import_first_turn_needs, name="jupyter-analyst-warm", daemon=True).start()

    return TurnEngine(run_turn=run_turn, turn_request=TurnRequest, live_threads=LiveThreads,
                      background_work=BackgroundWork, scripted_model=SCRIPTED_MODEL, warm=warm,
                      warmed=_FIRST_TURN_READY)


#: What a turn imports at its first use, past the engine: the model's SDK (``openai``, its
#: HTTP stack: a second or two), the query runner (DuckDB, Arrow), the kernel's loader.
FIRST_TURN_MODULES = ("openai", "openai.types.chat.chat_completion_chunk", "jupyter_analyst.sql.query_runner",
                      "jupyter_analyst.kernel.loader")


_FIRST_TURN_READY = threading.Event()


def _import_first_turn_needs() -> None:
    # A turn that starts meanwhile waits on the same imports (Python's import lock), not twice.
    try:
        for name in FIRST_TURN_MODULES:
            importlib.import_module(name)
    except ImportError:  # the turn that needs it says why
        pass
    finally:
        _FIRST_TURN_READY.set()


def import_engine_warm() -> TurnEngine:
    """The engine, with the SQL checker's worker started beside it: the server's engine is
    imported when the panel opens, so its first question finds the checker ready rather
    than wait seconds for it to import (nothing of any thread is in it: it checks SQL text
    against a source's schema, for every thread of the process)."""
    engine = import_engine()
    engine.warm()
    return engine


class EngineLoader:
    """Imports the engine once, on a thread of its own, for any number of waiters.

    >>> loader = EngineLoader()
    >>> loader.loaded
    False
    >>> loader.now().turn_request.__name__, loader.loaded
    ('TurnRequest', True)
    """

    def __init__(self, load: Callable[[], TurnEngine] = import_engine) -> None:
        self._load = load
        self._lock = threading.Lock()
        self._future: Future[TurnEngine] | None = None

    @property
    def loaded(self) -> bool:
        """Whether the engine is imported (a failed import counts as not)."""
        future = self._future
        return future is not None and future.done() and future.exception() is None

    def start(self) -> None:
        """Begin importing the engine in the background, unless that is begun or done."""
        with self._lock:
            if self._future is not None:
                return
            self._future = Future()
        threading.Thread(target=self._run, name="jupyter-analyst-engine", daemon=True).start()

    def _run(self) -> None:
        assert self._future is not None
        try:
            engine = self._load()
        except BaseException as exc:  # handed to whoever waits for the engine
            self._future.set_exception(exc)
        else:
            self._future.set_result(engine)

    async def ready(self) -> TurnEngine:
        """The engine, once imported; the event loop serves other requests meanwhile."""
        self.start()
        assert self._future is not None
        return await asyncio.wrap_future(self._future)

    def now(self) -> TurnEngine:
        """The engine, waiting here for its import (which begins if it has not): for callers
        off the event loop, or on it once :meth:`ready` has returned."""
        self.start()
        assert self._future is not None
        return self._future.result()
