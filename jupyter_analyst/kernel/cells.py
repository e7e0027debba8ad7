"""The host's own cells: what a new kernel runs first, and what waits for killed children.

They run before, or between, the model's steps, as host code: nothing in them comes from the
model. ``SETUP_CODE`` also runs in a re-executed audit notebook (``analyst.connect``).
"""

SETUP_CODE = """\
import os as _analyst_os
if _analyst_os.path.islink("outputs") or _analyst_os.path.isfile("outputs"):
    _analyst_os.remove("outputs")
_analyst_os.makedirs("outputs", exist_ok=True)
del _analyst_os
import pandas as pd
import matplotlib
try:
    get_ipython().run_line_magic("matplotlib", "inline")
except Exception:
    pass
import matplotlib.pyplot as plt
plt.rcParams["figure.dpi"] = 100
plt.rcParams["savefig.dpi"] = 100
plt.rcParams["svg.hashsalt"] = "jupyter-analyst"
try:
    from matplotlib_inline.backend_inline import set_matplotlib_formats
    set_matplotlib_formats("png")
except Exception:
    pass
"""

REAP_CHILDREN = """\
import os as _analyst_os
try:
    while _analyst_os.waitpid(-1, _analyst_os.WNOHANG)[0]:
        pass
except ChildProcessError:
    pass
del _analyst_os
"""
