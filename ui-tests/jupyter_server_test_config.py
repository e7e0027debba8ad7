"""The Jupyter server of the browser tests (given to ``jupyter-analyst demo --lab``).

Galata's test configuration: no token, no XSRF check, the app exposed to the page.
Never use it for anything but tests. The root folder and port come from the command line.
"""

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821 (c is the configuration being loaded)

c.ServerApp.ip = "127.0.0.1"  # noqa: F821
# jupyter-server-mcp (installed with the test extra) would open a port of its own.
c.ServerApp.jpserver_extensions = {"jupyter_analyst.server": True, "jupyter_server_mcp": False}  # noqa: F821
