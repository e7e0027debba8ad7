"""The REST + event-stream API under ``{base_url}analyst/api/``.

Every handler is authenticated and authorized (resource ``analyst``); threads and
artifacts belong to the user who made them, and anyone else gets 404. Business logic
stays in the engine: handlers parse, check ownership, call, and serialise.
"""

from __future__ import annotations

import asyncio
import json
import mimetypes
from importlib import resources
from typing import Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from ..artifacts import ArtifactNotFound
from ..errors import AnalystError, ConfigError
from . import sse
from .service import ThreadBusy, ThreadService

AUTH_RESOURCE = "analyst"


class AnalystHandler(APIHandler):
    """Shared parts: the service, the caller's identity, JSON bodies and errors."""

    auth_resource = AUTH_RESOURCE

    @property
    def service(self) -> ThreadService:
        return self.settings["jupyter_analyst"]

    @property
    def user_name(self) -> str:
        """Who owns what this request makes or reads.

        Jupyter's default identity provider makes a fresh anonymous user for every
        token-authenticated request without a cookie; on such a single-user server the
        token holder is one owner, ``local`` (as on the command line). Multi-user
        providers (JupyterHub's, custom ones) give stable user names, which are used.
        """
        if type(self.identity_provider).__module__.startswith("jupyter_server.auth"):
            return "local"
        user = self.current_user
        return getattr(user, "username", None) or str(user)

    def body(self) -> dict[str, Any]:
        """The JSON request body (400 when it is not an object)."""
        if not self.request.body:
            return {}
        try:
            data = json.loads(self.request.body)
        except json.JSONDecodeError as exc:
            raise web.HTTPError(400, f"the body is not JSON: {exc}", reason="invalid_json") from exc
        if not isinstance(data, dict):
            raise web.HTTPError(400, "the body must be a JSON object", reason="invalid_json")
        return data

    def owned_thread(self, thread_id: str):
        """The caller's thread, or 404 (also for another user's)."""
        try:
            return self.service.thread(thread_id, self.user_name)
        except ConfigError as exc:
            raise web.HTTPError(404, f"unknown thread {thread_id!r}", reason="thread_not_found") from exc

    def owned_artifact(self, artifact_id: str):
        """The caller's artifact, or 404."""
        try:
            artifact = self.service.workspace.artifacts.get(artifact_id)
            self.service.thread(artifact.thread_id, self.user_name)
        except (ArtifactNotFound, ConfigError) as exc:
            raise web.HTTPError(404, f"unknown artifact {artifact_id!r}", reason="artifact_not_found") from exc
        return artifact

    def reply(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(data, default=str))


class SourcesHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The configured data sources (names and kinds; never credentials)."""
        items = [{"name": name, "kind": "url" if "://" in spec else "path"} for name, spec in self.service.sources.items()]
        self.reply({"sources": items})


class ThreadsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The caller's threads, newest first."""
        threads = self.service.workspace.store.list_threads(user=self.user_name)
        self.reply({"threads": [t.model_dump() for t in threads]})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        """A new thread: ``{source?, title?}``."""
        body = self.body()
        thread = self.service.create_thread(self.user_name, body.get("source"), body.get("title"))
        self.reply(thread.model_dump(), status=201)


class ThreadHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """A thread, its turns, and whether a turn is running."""
        thread = self.owned_thread(thread_id)
        store = self.service.workspace.store
        self.reply({
            **thread.model_dump(),
            "turns": [t.model_dump() for t in store.turns(thread_id)],
            "active": self.service.is_active(thread_id),
            "last_seq": store.last_seq(thread_id),
        })


class TurnsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Start a turn ``{prompt, source?, rerun?}`` and stream its events."""
        thread = self.owned_thread(thread_id)
        body = self.body()
        prompt = body.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise web.HTTPError(400, "'prompt' must be a non-empty string", reason="empty_prompt")
        with self.service.listen(thread_id) as queue:
            before = self.service.workspace.store.last_seq(thread_id)
            try:
                task = self.service.start_turn(thread, prompt, source=body.get("source"), rerun=bool(body.get("rerun")))
            except ThreadBusy as exc:
                raise web.HTTPError(409, exc.message, reason=exc.reason) from exc
            except AnalystError as exc:
                raise web.HTTPError(400, exc.message, reason=exc.reason) from exc
            sse.start(self)
            backlog = self.service.workspace.store.events(thread_id, after=before)
            await sse.relay(self, backlog, queue, follow=True)
        # The turn's last events are out; its notebook and kernel are being finished. The
        # response ends when they are, so what the client asks next is already there.
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            self.write(sse.error_frame(getattr(exc, "reason", "turn_failed"), str(exc)))
        self.finish()


class EventsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """Events after ``?after=N`` (or ``Last-Event-ID``); a stream with ``Accept: text/event-stream``."""
        self.owned_thread(thread_id)
        raw = self.get_argument("after", None) or self.request.headers.get("Last-Event-ID") or "0"
        try:
            after = int(raw)
        except ValueError as exc:
            raise web.HTTPError(400, f"'after' must be a number, not {raw!r}", reason="invalid_after") from exc
        store = self.service.workspace.store
        if "text/event-stream" not in self.request.headers.get("Accept", ""):
            self.reply({"events": [e.model_dump() for e in store.events(thread_id, after=after)]})
            return
        with self.service.listen(thread_id) as queue:
            backlog = store.events(thread_id, after=after)
            sse.start(self)
            await sse.relay(self, backlog, queue, follow=self.service.is_active(thread_id))
        self.finish()


class CancelHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Stop the running turn; what it completed is kept."""
        self.owned_thread(thread_id)
        cancelled = await self.service.cancel(thread_id)
        self.reply({"cancelled": cancelled})


class ThreadArtifactsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The thread's artifact inventory."""
        self.owned_thread(thread_id)
        items = self.service.workspace.artifacts.list(thread_id, type=self.get_argument("type", None))
        self.reply({"artifacts": [a.model_dump() for a in items]})


class StateHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The thread's agent state: never shown in the chat, served when asked for."""
        self.owned_thread(thread_id)
        state = self.service.workspace.store.agent_state(thread_id)
        self.reply(state.model_dump(mode="json"))


class ArtifactHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, artifact_id: str) -> None:
        """One artifact's metadata."""
        self.reply(self.owned_artifact(artifact_id).model_dump())


class ArtifactContentHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, artifact_id: str) -> None:
        """An artifact's bytes, with its content type."""
        artifact = self.owned_artifact(artifact_id)
        path = self.service.artifact_path(artifact_id)
        self.set_header("Content-Type", artifact.mime or mimetypes.guess_type(artifact.name)[0] or "application/octet-stream")
        self.set_header("Content-Disposition", f'inline; filename="{artifact.name.rsplit("/", 1)[-1]}"')
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                self.write(chunk)
                await self.flush()
        self.finish()


class NotebookHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The thread's audit notebook (404 before its first turn)."""
        self.owned_thread(thread_id)
        path = self.service.workspace.notebook_path(thread_id)
        if not path.exists():
            raise web.HTTPError(404, "the thread has no notebook yet", reason="notebook_not_found")
        self.set_header("Content-Type", "application/x-ipynb+json")
        self.finish(path.read_bytes())


class OpenAPIHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The OpenAPI description of this API."""
        self.set_header("Content-Type", "application/yaml")
        self.finish((resources.files("jupyter_analyst.server") / "openapi.yaml").read_text())


_ID = r"(?P<{}>[A-Za-z0-9_-]+)"


def routes(base: str) -> list[tuple[str, type]]:
    """URL patterns under ``{base}analyst/api/``."""
    api = base.rstrip("/") + "/analyst/api"
    thread = _ID.format("thread_id")
    artifact = _ID.format("artifact_id")
    return [
        (f"{api}/sources", SourcesHandler),
        (f"{api}/openapi.yaml", OpenAPIHandler),
        (f"{api}/threads", ThreadsHandler),
        (f"{api}/threads/{thread}", ThreadHandler),
        (f"{api}/threads/{thread}/turns", TurnsHandler),
        (f"{api}/threads/{thread}/events", EventsHandler),
        (f"{api}/threads/{thread}/cancel", CancelHandler),
        (f"{api}/threads/{thread}/artifacts", ThreadArtifactsHandler),
        (f"{api}/threads/{thread}/notebook", NotebookHandler),
        (f"{api}/threads/{thread}/state", StateHandler),
        (f"{api}/artifacts/{artifact}", ArtifactHandler),
        (f"{api}/artifacts/{artifact}/content", ArtifactContentHandler),
    ]
