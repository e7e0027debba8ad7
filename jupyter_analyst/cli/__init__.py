"""``jupyter analyst ...`` (also ``jupyter-analyst``): a thin layer over the public functions.

``main`` is the console script (``jupyter_analyst.cli:main``); ``jupyter analyst`` finds it
as the ``jupyter-analyst`` executable on the PATH. Importing this package imports no engine:
each command loads what it runs on (see ``commands``).
"""

from .console import main

__all__ = ["main"]
