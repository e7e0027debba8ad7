"""The API's OpenAPI 3.1 description: :func:`build` makes it from the routes it is handed
(``build(routes(""))``), :func:`render` writes it as YAML, :func:`for_server` narrows it to
one server's sources. ``python -m jupyter_analyst.server.openapi --write`` writes the
shipped ``openapi.yaml`` (see ``command``)."""

from .document import SPEC_FILE, api_paths, build, for_server, reason_codes, render
from .operations import OPERATIONS, Operation

__all__ = ["OPERATIONS", "SPEC_FILE", "Operation", "api_paths", "build", "for_server", "reason_codes", "render"]
