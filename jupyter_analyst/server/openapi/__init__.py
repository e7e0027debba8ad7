"""The API's OpenAPI 3.1 description: made from the routes it is handed (``document.build``,
``build(routes(""))``) out of each operation's declaration (``operations``); :func:`render`
writes it as YAML, :func:`for_server` narrows it to one server's sources. ``python -m
jupyter_analyst.server.openapi --write`` writes the shipped ``openapi.yaml`` (see ``command``)."""

from .document import for_server, render

__all__ = ["for_server", "render"]
