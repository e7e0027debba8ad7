"""The analyst as an MCP server, for other agents (Claude Code, Codex, VS Code...): the
engine's tools (engine.py) on the official SDK (server.py), over stdio or streamable HTTP
(serve.py). The SDK is imported on first use: a Jupyter server start does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .analyst_tools import AnalystTools
    from .serve import new_token, require_sdk, serve_http, serve_stdio
    from .source_choice import named_sources, parse_named

_HOME = {
    "AnalystTools": "analyst_tools",
    "new_token": "serve",
    "require_sdk": "serve",
    "serve_http": "serve",
    "serve_stdio": "serve",
    "named_sources": "source_choice",
    "parse_named": "source_choice",
}

__all__ = ["AnalystTools", "named_sources", "new_token", "parse_named", "require_sdk", "serve_http", "serve_stdio"]

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
