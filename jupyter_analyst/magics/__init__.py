"""The IPython extension: the analyst in the user's own kernel.

``%load_ext jupyter_analyst`` registers ``%analyst_sql``, ``%%ask`` and ``%analyst``; each is
a thin layer over the engine's public functions, through its guards (see commands.py).
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics in ``ipython`` (what ``%load_ext`` calls)."""
    from .analyst_magics import AnalystMagics

    ipython.register_magics(AnalystMagics)
