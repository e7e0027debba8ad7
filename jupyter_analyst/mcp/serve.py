"""Serving the MCP server: over stdio (one client, the process that started it), or over
streamable HTTP, where a token guards every request when one is set and is required on any
address other than loopback.
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

from ..errors import ConfigError
from .engine import AnalystTools
from .server import build_server

TOKEN_ENV = "ANALYST_MCP_TOKEN"


def check_listen(host: str, token: str | None) -> None:
    """Refuse to listen past loopback without a token.

    >>> check_listen("127.0.0.1", None)
    >>> check_listen("0.0.0.0", "s3cret")
    >>> check_listen("0.0.0.0", None)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.ConfigError: refusing to listen on 0.0.0.0 without a token (hint: ...)
    """
    if token:
        return
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ConfigError(f"refusing to listen on {host} without a token", reason="no_token",
                          hint=f"pass --token TOKEN or set {TOKEN_ENV}, or listen on 127.0.0.1")


class BearerToken:
    """ASGI middleware: a request without ``Authorization: Bearer TOKEN`` gets 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": b"a bearer token is required\n"})
                return
        await self.app(scope, receive, send)


async def serve_stdio(tools: AnalystTools) -> None:
    """Serve one client over stdin/stdout until it closes them."""
    try:
        await build_server(tools).run_stdio_async()
    finally:
        await tools.close()


async def serve_http(tools: AnalystTools, *, host: str, port: int, token: str | None) -> None:
    """Serve clients over streamable HTTP at ``http://HOST:PORT/mcp`` until stopped."""
    import uvicorn

    check_listen(host, token)
    app: Any = build_server(tools).streamable_http_app(host=host)
    if token:
        app = BearerToken(app, token)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    try:
        await server.serve()
    finally:
        await tools.close()
