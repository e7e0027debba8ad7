"""``python -m jupyter_analyst.cli ...``: the console script, run by the interpreter."""

import sys

from .console import main

sys.exit(main())
