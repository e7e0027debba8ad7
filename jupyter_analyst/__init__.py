"""jupyter-analyst: a notebook-centric data-analysis agent kernel for Jupyter.

The public face: :func:`run_turn` runs one turn of a thread (the CLI and the server both
call it), with :class:`TurnRequest`, :class:`AnalystConfig` and :class:`ModelSettings`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

__all__ = ["AnalystConfig", "ModelSettings", "TurnRequest", "__version__", "run_turn"]

if TYPE_CHECKING:
    from .turns.run import AnalystConfig, ModelSettings, TurnRequest, run_turn


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the built JupyterLab extension is (``jupyter labextension develop`` links it)."""
    return [{"src": "labextension", "dest": "jupyter-analyst"}]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext jupyter_analyst``: the magics (``%%ask``, ``%analyst_sql``, ``%analyst``)."""
    from .magics import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str) -> Any:
    # Imported lazily so that `import jupyter_analyst` (e.g. inside a kernel for the
    # runtime helper) does not pull in the engine.
    if name in {"AnalystConfig", "ModelSettings", "TurnRequest", "run_turn"}:
        from .turns import run as analysis

        return getattr(analysis, name)
    raise AttributeError(name)
