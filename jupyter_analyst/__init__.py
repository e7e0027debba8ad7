"""jupyter-analyst: a notebook-centric data-analysis agent kernel for Jupyter.

The public face: :func:`run_turn` runs one turn of a thread (the CLI and the server both
call it), with :class:`TurnRequest`, :class:`AnalystConfig` and :class:`ModelSettings`, and
returns a :class:`TurnSummary`; :func:`run_sql_step` runs one query the user typed
(:class:`SqlStepRequest`) as a turn of its own (:class:`SqlStep`). Every error the package
raises is an :class:`AnalystError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._lazy import lazy_names
from ._version import __version__

if TYPE_CHECKING:
    from .errors import AnalystError
    from .turns import (
        AnalystConfig,
        ModelSettings,
        SqlStep,
        SqlStepRequest,
        TurnRequest,
        TurnSummary,
        run_sql_step,
        run_turn,
    )

# Imported lazily so that `import jupyter_analyst` (e.g. inside a kernel for the runtime
# helper) does not pull in the engine.
_HOME = {
    "run_turn": "turns",
    "run_sql_step": "turns",
    "TurnRequest": "turns",
    "SqlStepRequest": "turns",
    "SqlStep": "turns",
    "TurnSummary": "turns",
    "AnalystConfig": "turns",
    "ModelSettings": "turns",
    "AnalystError": "errors",
}

__all__ = [
    "AnalystConfig", "AnalystError", "ModelSettings", "SqlStep", "SqlStepRequest", "TurnRequest",
    "TurnSummary", "__version__", "run_sql_step", "run_turn",
]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the built JupyterLab extension is (``jupyter labextension develop`` links it)."""
    return [{"src": "labextension", "dest": "jupyter-analyst"}]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_analyst``: the magics (``%%ask``, ``%analyst_sql``, ``%analyst``)."""
    from .magics import load_ipython_extension as load

    load(ipython)


__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
