"""A Jupyter identity provider for tests with several users on one server.

The user is whoever the ``X-Analyst-Test-User`` request header names, as JupyterHub's
provider names the Hub user (in the Hub groups ``X-Analyst-Test-Groups`` lists): it stands in for that provider in tests (a browser test sets
the header with Playwright's ``extraHTTPHeaders``). It trusts a header any client can send,
so it is for tests on 127.0.0.1 only, never for a server anyone else can reach.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.auth.identity import IdentityProvider, User

HEADER = "X-Analyst-Test-User"
#: The user's JupyterHub groups, comma-separated (as the Hub's user model lists them).
GROUPS_HEADER = "X-Analyst-Test-Groups"


class HubLikeUser(User):
    """A user with a Hub user model (``hub_user``), as JupyterHub's provider makes them."""

    def __init__(self, username: str, groups: list[str]) -> None:
        super().__init__(username=username)
        self.hub_user = {"name": username, "groups": groups}


class HeaderIdentityProvider(IdentityProvider):
    """The request's user is the one its ``X-Analyst-Test-User`` header names (none: 403)."""

    def get_user(self, handler: Any) -> User | None:
        """The named user, or ``None`` (unauthenticated) without the header."""
        name = handler.request.headers.get(HEADER)
        if not name:
            return None
        groups = [g.strip() for g in handler.request.headers.get(GROUPS_HEADER, "").split(",") if g.strip()]
        return HubLikeUser(name, groups)


#: A Jupyter server's settings for several users: each named by the header, none refused.
MULTI_USER = {"identity_provider_class": HeaderIdentityProvider, "allow_unauthenticated_access": False}
#: The cookie and header of Jupyter's XSRF check, for requests that change something.
XSRF = {"Cookie": "_xsrf=t0k3n", "X-XSRFToken": "t0k3n"}


async def fetch_as(jp_fetch: Any, user: str, *path: str, method: str = "GET", body: Any = None,
                   headers: dict[str, str] | None = None, **kw: Any) -> Any:
    """A request to the analyst's REST API as ``user`` (pytest-jupyter's ``jp_fetch``, without
    its token: the header names the user); ``body`` is sent as JSON, with ``headers`` besides."""
    headers = {HEADER: user, "Authorization": "", **(XSRF if method != "GET" else {}), **(headers or {})}
    if body is not None:
        kw["body"] = json.dumps(body)
    return await jp_fetch("analyst", "api", *path, method=method, headers=headers, **kw)


async def json_as(jp_fetch: Any, user: str, *path: str, method: str = "GET", body: Any = None) -> Any:
    """What :func:`fetch_as` answers, read as JSON."""
    return json.loads((await fetch_as(jp_fetch, user, *path, method=method, body=body)).body)
