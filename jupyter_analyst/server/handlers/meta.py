"""The API's own resources: what the server is set up with (its model, its sources), the
OpenAPI description it serves, and the JSON 404 of any other path."""

from __future__ import annotations

from importlib import resources

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...errors import ConfigError
from .base import AnalystHandler


class ConfigHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """What a client shows of the server's set-up: the model (never its key), the
        source names, the limits of a request.

        A client asks this first (the panel, when it opens): the engine begins loading
        here, off the loop, so that it is ready by the time a turn is asked for."""
        await self.service.engine.ready()
        self.reply(self.service.describe() | {"limits": self.limits.model_dump()})


class SourcesHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The configured data sources (names and kinds; never credentials)."""
        items = [{"name": name, "kind": "url" if "://" in spec else "path"} for name, spec in self.service.sources.items()]
        self.reply({"sources": items})


class OpenAPIHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The OpenAPI description of this API, as this server takes it (its source names)."""
        served = self.settings.get("jupyter_analyst_openapi")
        if served is None:
            # Imported when first asked for, not at the server's start: the description's
            # module imports every reply model (the verify report's among them).
            import yaml

            from ..openapi import for_server, render

            doc = yaml.safe_load((resources.files("jupyter_analyst.server") / "openapi.yaml").read_text())
            catalog = self.service.catalog
            served = render(for_server(doc, None if catalog.allow_any else catalog.names))
            self.settings["jupyter_analyst_openapi"] = served
        self.finish(served, set_content_type="application/yaml")


class NotFoundHandler(AnalystHandler):
    """Any other path under the API: a JSON 404, like the API's own."""

    async def prepare(self) -> None:  # type: ignore[override]
        await super().prepare()
        raise self.refuse(ConfigError(f"no such API path: {self.request.path}", reason="not_found",
                                      hint="see the description at openapi.yaml"), 404)
