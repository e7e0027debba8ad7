"""The HTTP methods an API path answers: what its 405 names in ``Allow`` (handlers) and what
the OpenAPI description lists for it (openapi), both read from the handler class."""

from __future__ import annotations

from tornado import web

#: The methods an API path may declare (OPTIONS is Jupyter's CORS answer, on every path).
METHODS = ("get", "post", "put", "patch", "delete")


def declared_methods(handler: type[web.RequestHandler]) -> list[str]:
    """The HTTP methods ``handler`` answers (those it defines, not Tornado's 405 stubs).

    >>> class Reader(web.RequestHandler):
    ...     def get(self) -> None: ...
    >>> declared_methods(Reader)
    ['get']
    """
    return [m for m in METHODS if getattr(handler, m) is not getattr(web.RequestHandler, m)]
