"""A Jupyter identity provider for tests with several users on one server.

The user is whoever the ``X-Analyst-Test-User`` request header names, as JupyterHub's
provider names the Hub user: it stands in for that provider in tests (a browser test sets
the header with Playwright's ``extraHTTPHeaders``). It trusts a header any client can send,
so it is for tests on 127.0.0.1 only, never for a server anyone else can reach.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.identity import IdentityProvider, User

HEADER = "X-Analyst-Test-User"


class HeaderIdentityProvider(IdentityProvider):
    """The request's user is the one its ``X-Analyst-Test-User`` header names (none: 403)."""

    def get_user(self, handler: Any) -> User | None:
        """The named user, or ``None`` (unauthenticated) without the header."""
        name = handler.request.headers.get(HEADER)
        return User(username=name) if name else None
