"""The Jupyter server of the team browser test (playwright.team.config.js).

Galata's test configuration, users from the ``X-Analyst-Test-User`` header (as the two-user
test's), a context folder whose editors are ann and eve (eve saves a
suggested metric), and a daily token budget per user small
enough that a user's second question is past it: a turn of the scripted model's "earned the
most" spends about 1,450 tokens in two calls and the thread summary after it about 550, which
leaves about 300 of 3,700, room for the next turn's first call and not its second.
That header is trusted as sent: tests on 127.0.0.1 only.
"""

import os

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821 (c is the configuration being loaded)

c.ServerApp.ip = "127.0.0.1"  # noqa: F821
c.ServerApp.identity_provider_class = "jupyter_analyst.testing.identity.HeaderIdentityProvider"  # noqa: F821
# jupyter-server-mcp (installed with the test extra) would open a port of its own.
c.ServerApp.jpserver_extensions = {"jupyter_analyst.server": True, "jupyter_server_mcp": False}  # noqa: F821
c.AnalystApp.context_dir = os.path.join(os.environ["ANALYST_UI_TEAM_ROOT"], "context")  # noqa: F821
c.AnalystApp.context_editors = ["ann", "eve"]  # noqa: F821
c.AnalystApp.budgets = {"user/day": os.environ.get("ANALYST_UI_TEAM_BUDGET", "3700 tokens")}  # noqa: F821
