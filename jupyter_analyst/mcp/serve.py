"""Serving the MCP server: over stdio (one client, the process that started it), or over
streamable HTTP, where every request needs the token and names the served address.

Over HTTP any process of any account of the machine can connect, and a web page can reach
a loopback port through a name it rebinds there: the token keeps out the first, the check of
the ``Host`` and ``Origin`` headers the second (the SDK's own, made to hold on every address).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import socket
from typing import Any

from ..errors import ConfigError
from .analyst_tools import AnalystTools

TOKEN_ENV = "ANALYST_MCP_TOKEN"
EXTRA_HINT = "pip install 'jupyter-analyst[mcp]'"
#: Where a host looks for an OAuth server once a request gets 401: there is none, so 404.
DISCOVERY = b"/.well-known/"


def require_sdk() -> None:
    """Refuse, in one line naming the extra, when the MCP SDK is not installed.

    Raises:
        ConfigError: ``missing_extra``.
    """
    try:
        import mcp.server.mcpserver  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        missing = (exc.name or "mcp").split(".")[0]
        raise ConfigError(f"the MCP server needs the mcp extra ({missing} is not installed): "
                          f"{EXTRA_HINT}", reason="missing_extra") from None


def new_token() -> str:
    """A token for a server started without one (as ``jupyter server`` makes its own)."""
    return secrets.token_urlsafe(32)


def allowed_hosts(host: str, port: int) -> list[str]:
    """The ``Host`` headers a request to the server at ``host:port`` may carry: the address
    served, and the loopback names that reach the same socket.

    >>> allowed_hosts("127.0.0.1", 8765)
    ['127.0.0.1:8765', 'localhost:8765']
    >>> allowed_hosts("127.0.0.2", 80)
    ['127.0.0.2:80']
    >>> allowed_hosts("::1", 80)
    ['[::1]:80', 'localhost:80']
    >>> allowed_hosts("localhost", 80)
    ['localhost:80', '127.0.0.1:80', '[::1]:80']
    """
    names = [_bracketed(host)]
    if host == "localhost":
        names += ["127.0.0.1", "[::1]"]
    elif host in ("127.0.0.1", "::1", "[::1]"):
        names.append("localhost")  # localhost resolves to this address
    elif _is_wildcard(host):  # every address of the machine, by any of its names
        names = ["localhost", "127.0.0.1", "[::1]", *_own_names()]
    return [f"{name}:{port}" for name in dict.fromkeys(names)]


def _bracketed(host: str) -> str:
    host = host.strip("[]")
    return f"[{host}]" if ":" in host else host


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def _own_names() -> list[str]:
    """The machine's host names and addresses, as a client on the network names it."""
    names = [socket.gethostname(), socket.getfqdn()]
    try:
        names += [_bracketed(str(info[4][0])) for info in socket.getaddrinfo(socket.gethostname(), None)]
    except OSError:  # a host name that does not resolve: its name is still allowed
        pass
    return names


class BearerToken:
    """ASGI middleware: a request without ``Authorization: Bearer TOKEN`` gets 401 (the scheme
    in any case, RFC 7235), and OAuth discovery gets 404, so a host does not try to log in."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.expected = app, token.encode()

    def _authorised(self, header: bytes) -> bool:
        scheme, _, given = header.strip().partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.expected)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            if scope.get("path", "").encode().startswith(DISCOVERY):
                await _answer(send, 404, b"no OAuth here: send Authorization: Bearer TOKEN\n")
                return
            if not self._authorised(dict(scope.get("headers") or []).get(b"authorization", b"")):
                await _answer(send, 401, b"a bearer token is required\n", [(b"www-authenticate", b"Bearer")])
                return
        await self.app(scope, receive, send)


async def _answer(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain"), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


async def serve_stdio(tools: AnalystTools) -> None:
    """Serve one client over stdin/stdout until it closes them."""
    from .server import build_server

    try:
        await build_server(tools).run_stdio_async()
    finally:
        await tools.close()


async def serve_http(tools: AnalystTools, *, host: str, port: int, token: str) -> None:
    """Serve clients over streamable HTTP at ``http://HOST:PORT/mcp`` until stopped; every
    request needs ``token`` and a ``Host`` naming this server.

    Raises:
        ConfigError: ``no_token`` when ``token`` is empty: HTTP is never served without one.
    """
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from .server import build_server

    if not token:
        raise ConfigError("refusing to serve HTTP without a token", reason="no_token",
                          hint=f"pass --token TOKEN or set {TOKEN_ENV}")
    hosts = allowed_hosts(host, port)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                         allowed_origins=[f"http://{h}" for h in hosts])
    app: Any = BearerToken(build_server(tools).streamable_http_app(host=host, transport_security=security), token)
    server = uvicorn.Server(uvicorn.Config(app, host=host.strip("[]"), port=port, log_level="warning",
                                           lifespan="on"))
    try:
        await server.serve()
    finally:
        await tools.close()
