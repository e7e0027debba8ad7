"""The Jupyter server of the two-user browser test (playwright.users.config.js).

Galata's test configuration, and the user taken from the ``X-Analyst-Test-User`` header
(jupyter_analyst.testing.identity), so each browser context is a user of its own. That
header is trusted as sent: tests on 127.0.0.1 only.
"""

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821 (c is the configuration being loaded)

c.ServerApp.ip = "127.0.0.1"  # noqa: F821
c.ServerApp.identity_provider_class = "jupyter_analyst.testing.identity.HeaderIdentityProvider"  # noqa: F821
# jupyter-server-mcp (installed with the test extra) would open a port of its own.
c.ServerApp.jpserver_extensions = {"jupyter_analyst.server": True, "jupyter_server_mcp": False}  # noqa: F821
