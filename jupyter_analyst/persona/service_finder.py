"""Where a persona finds the analysis service of its Jupyter server, and whose threads it makes.

The persona runs inside the same Jupyter server as the analysis API (``jupyter_analyst.server``):
it runs its turns through that extension's thread service, so a chat's turns share the
server's kept kernels, warm pool, turn lock and event stream with the Data analyst panel, and
a thread made in a chat is one of the panel's. That service is reached through the server's
settings, not imported (the server and the persona are surfaces of one layer).

Whose threads: a chat message's sender is written by the chat's client (jupyterlab-chat takes
the ``sender`` a client sends), so it names no one. A thread belongs to the server's owner:
``local`` under Jupyter's own identity provider, as the REST API has it for a single-user
server (server/handlers/base.py), and the Hub's user (``JUPYTERHUB_USER``) under JupyterHub.
"""

from __future__ import annotations

import os
from typing import Any

from ..errors import ConfigError

#: Where the analysis extension keeps its thread service (server/app.py).
SERVICE_SETTING = "jupyter_analyst"


class NoService(ConfigError):
    """The server has no analysis service for its chats, or no owner for their threads."""

    reason = "no_analysis_service"


def serverapp_of(persona: Any) -> Any | None:
    """The Jupyter server the persona runs in: its manager's extension's, or (a persona made
    for one request, with no extension above it) the server application of the process."""
    extension = getattr(getattr(persona, "parent", None), "parent", None)
    app = getattr(extension, "serverapp", None)
    if app is not None:
        return app
    from jupyter_server.serverapp import ServerApp

    return ServerApp.instance() if ServerApp.initialized() else None


def base_url_of(persona: Any) -> str:
    """The base URL of the Jupyter server the persona runs in (``/`` when none is found)."""
    app = serverapp_of(persona)
    base = getattr(app, "base_url", None) if app is not None else None
    return base if isinstance(base, str) and base else "/"


def owner_of(serverapp: Any) -> str | None:
    """Who owns the threads the server's chats make (``None``: no one can be told).

    >>> from types import SimpleNamespace
    >>> from jupyter_server.auth.identity import IdentityProvider
    >>> owner_of(SimpleNamespace(identity_provider=IdentityProvider()))
    'local'
    """
    provider = getattr(serverapp, "identity_provider", None)
    if provider is not None and type(provider).__module__.startswith("jupyter_server.auth"):
        return "local"
    return os.environ.get("JUPYTERHUB_USER") or None


def analyst_service(persona: Any) -> tuple[Any, str]:
    """The server's thread service and the owner of the threads the persona makes.

    Raises:
        NoService: the analysis extension is not running here, or no owner can be told.
    """
    app = serverapp_of(persona)
    service = app.web_app.settings.get(SERVICE_SETTING) if app is not None and app.web_app is not None else None
    if service is None:
        raise NoService("the Analyst runs on jupyter-analyst's server extension, which is not running in this "
                        "Jupyter server", hint="jupyter server extension enable jupyter_analyst.server, then "
                        "restart the server")
    owner = owner_of(app)
    if owner is None:
        raise NoService("the Analyst cannot tell whose threads this server's chats make: its identity provider "
                        "is neither Jupyter's own nor JupyterHub's", hint="use the Data analyst panel")
    return service, owner
