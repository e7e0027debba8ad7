"""``python -m jupyter_analyst.server.openapi --write``: see ``command``."""

from .command import main

raise SystemExit(main())
