"""The Jupyter server of the browser tests (given to ``jupyter-analyst demo --lab``).

Galata's test configuration: no token, no XSRF check, the app exposed to the page.
Never use it for anything but tests. The root folder and port come from the command line.
"""

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821 (c is the configuration being loaded)

c.ServerApp.ip = "127.0.0.1"  # noqa: F821
