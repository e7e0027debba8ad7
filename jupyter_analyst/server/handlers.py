"""The REST + event-stream API under ``{base_url}analyst/api/``.

Every handler is authenticated and authorized (resource ``analyst``); threads and
artifacts belong to the user who made them, and anyone else gets 404. Business logic
stays in the engine: handlers parse, check ownership, call, and serialise.
"""

from __future__ import annotations

import asyncio
import json
import mimetypes
from http.client import responses
from importlib import resources
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web

from ..artifacts import ArtifactNotFound
from ..errors import AnalystError, ConfigError, StorageError
from ..notebooks.outline import AttachedNotebook
from .contents import refuse_links
from ..store import Thread
from . import sse
from .inputs import (
    ApiLimits, ArtifactsQuery, BodyBuffer, CancelTurn, EventsQuery, Input, InvalidRequest, NewThread, NewTurn,
    PreviewQuery, parse_body, parse_fields,
)
from ..store import ThreadBusy
from .service import ThreadService

AUTH_RESOURCE = "analyst"


class ApiError(web.HTTPError):
    """An :class:`AnalystError` answered with an HTTP status, its body ``{message, reason, hint, ...}``."""

    def __init__(self, status: int, error: AnalystError) -> None:
        # Tornado formats the log line with %: a client's text must not be read as a format.
        super().__init__(status, error.message.replace("%", "%%"), reason=error.reason)
        self.error = error


#: The methods an API path may declare (OPTIONS is Jupyter's CORS answer, on every path).
METHODS = ("get", "post", "put", "patch", "delete")


def declared_methods(handler: type[web.RequestHandler]) -> list[str]:
    """The HTTP methods ``handler`` answers (those it defines, not Tornado's 405 stubs)."""
    return [m for m in METHODS if getattr(handler, m) is not getattr(web.RequestHandler, m)]


def status_of(error: AnalystError) -> int:
    """The HTTP status of a refusal: the request's own 4xx, 409 for a busy thread, else 400."""
    if isinstance(error, InvalidRequest):
        return error.status
    if isinstance(error, ThreadBusy):
        return 409
    return 400


@web.stream_request_body
class AnalystHandler(APIHandler):
    """Shared parts: the service, the caller's identity, typed bodies and parameters, JSON errors.

    Bodies are read as they arrive and kept only up to ``c.AnalystApp.max_body_bytes``: a
    larger one is counted, dropped, and answered 413 once it has been read.
    """

    auth_resource = AUTH_RESOURCE
    _buffer: BodyBuffer | None = None

    @property
    def service(self) -> ThreadService:
        return self.settings["jupyter_analyst"]

    @property
    def limits(self) -> ApiLimits:
        return self.settings.get("jupyter_analyst_limits") or ApiLimits()

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

    async def prepare(self) -> None:  # type: ignore[override]
        self._buffer = BodyBuffer(self.limits.max_body_bytes)
        await super().prepare()

    def check_xsrf_cookie(self) -> None:
        """Authentication first, then the XSRF check.

        Jupyter checks a POST's XSRF token before it asks whether anyone is logged in, so a
        request without credentials would be refused 403 for a missing token, where the same
        request as a GET is 401. Without credentials there is nothing to forge: such a request
        is 401 (with ``WWW-Authenticate``), whatever its method. A request that does carry
        credentials goes through Jupyter's check unchanged: a session cookie without its XSRF
        token stays 403, a token needs none.
        """
        if hasattr(self, "_jupyter_current_user") and not self._jupyter_current_user:
            raise web.HTTPError(401)
        super().check_xsrf_cookie()

    def get_login_url(self) -> str:
        """No credentials: 401. Jupyter's API answers 403, which a client cannot tell from
        credentials that are not allowed (those stay 403)."""
        if not self.current_user:
            raise web.HTTPError(401)
        return super().get_login_url()

    def data_received(self, chunk: bytes) -> None:
        """Keep the body's next chunk (counted only, past the limit)."""
        if self._buffer is not None:
            self._buffer.add(chunk)

    def body(self, model: type[Input]) -> Input:
        """The JSON request body as ``model`` (413 when too large, 400 when not what it takes)."""
        try:
            return parse_body(model, self._buffer.body() if self._buffer is not None else b"")
        except InvalidRequest as exc:
            raise self.refuse(exc) from None

    def query(self, model: type[Input], **fallbacks: str | None) -> Input:
        """The query parameters ``model`` names, typed (400 when one is not what it takes);
        ``fallbacks`` are used for parameters absent from the query (e.g. a header)."""
        present = {name: self.get_query_argument(name, strip=False) for name in model.model_fields
                   if name in self.request.query_arguments}
        for name, value in fallbacks.items():
            if name not in present and value:
                present[name] = value
        try:
            return parse_fields(model, present)
        except InvalidRequest as exc:
            raise self.refuse(exc) from None

    def refuse(self, error: AnalystError, status: int | None = None) -> ApiError:
        """The HTTP error answering ``error`` (raise it)."""
        return ApiError(status or status_of(error), error)

    def no_links(self, path: str) -> None:
        """404 for a path in the user's folder that goes through a link (see contents.py)."""
        try:
            refuse_links(self.contents_manager, path)
        except ConfigError as exc:
            raise self.refuse(exc, 404) from None

    def owned_thread(self, thread_id: str) -> Thread:
        """The caller's thread, or 404 (also for another user's)."""
        try:
            return self.service.thread(thread_id, self.user_name)
        except ConfigError:
            raise self.refuse(ConfigError(f"unknown thread {thread_id!r}", reason="thread_not_found",
                                          hint="list your threads with GET threads"), 404) from None

    def owned_artifact(self, artifact_id: str):
        """The caller's artifact, or 404."""
        try:
            artifact = self.service.workspace.artifacts.get(artifact_id)
            self.service.thread(artifact.thread_id, self.user_name)
        except (ArtifactNotFound, ConfigError):
            raise self.refuse(ConfigError(f"unknown artifact {artifact_id!r}", reason="artifact_not_found",
                                          hint="list a thread's artifacts with GET threads/{id}/artifacts"), 404) from None
        return artifact

    def shown(self, thread: Thread) -> dict[str, Any]:
        """A thread as clients see it: its source by configured name, never a server path or URL."""
        return {**thread.model_dump(), "source": self.service.catalog.name_of(thread.source)}

    def reply(self, data: Any, status: int = 200) -> None:
        self.set_status(status)
        self.finish(json.dumps(data, default=str))

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Errors are JSON ``{message, reason, hint}`` (plus what locates them, e.g. ``field``)."""
        error = (kwargs.get("exc_info") or (None, None, None))[1]
        if isinstance(error, ApiError):
            body = error.error.to_dict()
            reply = {"message": body.pop("message"), "reason": body.pop("reason"), "hint": body.pop("hint", None), **body}
        elif isinstance(error, web.HTTPError):  # Jupyter's and Tornado's own: 403, 405...
            reply = {"message": error.log_message or responses.get(status_code, "error"), "reason": error.reason,
                     "hint": None}
        else:  # a bug: nothing of it is shown
            reply = {"message": "Unhandled error", "reason": None, "hint": None, "traceback": ""}
        if status_code == 405:  # what the path does answer (RFC 9110)
            self.set_header("Allow", ", ".join(m.upper() for m in declared_methods(type(self))))
        elif status_code == 401:  # how to authenticate (RFC 9110)
            self.set_header("WWW-Authenticate", 'token realm="jupyter-analyst"')
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(reply, default=str))


class ConfigHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """What a client shows of the server's set-up: the model (never its key), the
        source names, the limits of a request."""
        self.reply(self.service.describe() | {"limits": self.limits.model_dump()})


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
        """The caller's threads, the most recently active first."""
        threads = self.service.workspace.store.list_threads(user=self.user_name)
        self.reply({"threads": [self.shown(t) for t in threads]})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        """A new thread: ``{source?, title?}``, ``source`` a configured source's name."""
        request = self.body(NewThread)
        try:
            thread = self.service.create_thread(self.user_name, request.source, request.title)
        except AnalystError as exc:
            raise self.refuse(exc) from None
        self.reply(self.shown(thread), status=201)


class ThreadHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """A thread, its turns, whether a turn is running, and its live kernel (to attach to)."""
        thread = self.owned_thread(thread_id)
        store = self.service.workspace.store
        self.reply({
            **self.shown(thread),
            "turns": [t.model_dump() for t in store.turns(thread_id)],
            "active": self.service.is_active(thread_id),
            "last_seq": store.last_seq(thread_id),
            "kernel": self.service.kernel_of(thread_id),
        })


class TurnsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Start a turn ``{prompt, source?, rerun?}`` and stream its events."""
        thread = self.owned_thread(thread_id)
        request = self.body(NewTurn)
        try:
            request.check_size(self.limits)
        except InvalidRequest as exc:
            raise self.refuse(exc) from None
        attached = await self.attached_notebook(request.notebook) if request.notebook is not None else None
        with self.service.listen(thread_id) as queue:
            before = self.service.workspace.store.last_seq(thread_id)
            try:
                task = self.service.start_turn(thread, request.prompt, source=request.source, rerun=request.rerun,
                                               attached=attached)
            except AnalystError as exc:
                raise self.refuse(exc) from None
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


    async def attached_notebook(self, path: str) -> AttachedNotebook:
        """The caller's notebook, read through the contents manager (which keeps to the
        server's root and its rules on hidden files), for the turn to work beside. One that
        is not there, goes through a link, or is too large is attached with a note saying so:
        the turn runs, and the model is told."""
        from ..notebooks.outline import MAX_NOTEBOOK_BYTES, attached_text

        cm = self.contents_manager
        try:
            refuse_links(cm, path)
            info = await ensure_async(cm.get(path, content=False, type="notebook"))
            size = info.get("size")
            if isinstance(size, int) and size > MAX_NOTEBOOK_BYTES:
                return AttachedNotebook(path=path, problem=f"it is {size:,} bytes; at most {MAX_NOTEBOOK_BYTES:,} are read")
            # Its text, not the notebook model: the outline needs the JSON alone, and the
            # model's nbformat validation is most of the time a read takes.
            model = await ensure_async(cm.get(path, content=True, type="file", format="text"))
        except ConfigError:
            return AttachedNotebook(path=path, problem="the path goes through a link, which is not followed")
        except web.HTTPError:
            return AttachedNotebook(path=path, problem="there is no such notebook in the user's Jupyter folder")
        return attached_text(path, model["content"]) if isinstance(model.get("content"), str) else \
            AttachedNotebook(path=path, problem="it could not be read as text")


class EventsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """Events after ``?after=N`` (or ``Last-Event-ID``); a stream with ``Accept: text/event-stream``."""
        self.owned_thread(thread_id)
        resume = self.request.headers.get("Last-Event-ID")
        if resume:  # checked even when ?after wins: a client sending nonsense is told so
            try:
                parse_fields(EventsQuery, {"after": resume})
            except InvalidRequest as exc:
                raise self.refuse(InvalidRequest(f"Last-Event-ID: {exc.message}", reason=exc.reason,
                                                 hint="send the `id:` of the last event received")) from None
        after = self.query(EventsQuery, after=resume).after
        store = self.service.workspace.store
        if "text/event-stream" not in self.request.headers.get("Accept", ""):
            self.reply({"events": [e.model_dump() for e in store.events(thread_id, after=after)]})
            return
        with self.service.listen(thread_id) as queue:
            # Whether a turn runs is asked before the backlog is read: a turn that ends in
            # between (in another process, on a shared store) then has its end in the
            # backlog or the queue. Asked after, the stream would stop short of that end.
            follow = self.service.is_following(thread_id)
            backlog = store.events(thread_id, after=after)
            sse.start(self)
            await sse.relay(self, backlog, queue, follow=follow)
        self.finish()


class CancelHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Stop the running turn; what it completed is kept."""
        self.owned_thread(thread_id)
        self.body(CancelTurn)
        cancelled = await self.service.cancel(thread_id)
        self.reply({"cancelled": cancelled})


class ThreadArtifactsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The thread's artifact inventory (``?type=`` keeps one type)."""
        self.owned_thread(thread_id)
        items = self.service.workspace.artifacts.list(thread_id, type=self.query(ArtifactsQuery).type)
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


#: The artifact types a browser may show in place: ones that hold no script. Anything else
#: (HTML, SVG, XML, PDF, unknown bytes) the model's code wrote is downloaded instead.
_SHOWN_INLINE = frozenset({"image/png", "image/jpeg", "image/gif", "text/plain", "text/csv", "application/json"})


def content_disposition(name: str, mime: str) -> str:
    """``inline`` only for a type that holds no script; the file name as RFC 6266 says,
    never able to end the header's quoted string.

    >>> print(content_disposition("outputs/report.html", "text/html"))
    attachment; filename="report.html"; filename*=UTF-8''report.html
    >>> print(content_disposition('outputs/a"b é.png', "image/png"))
    inline; filename="a_b _.png"; filename*=UTF-8''a%22b%20%C3%A9.png
    """
    import re
    from urllib.parse import quote

    base = name.rsplit("/", 1)[-1]
    plain = re.sub(r'[^\x20-\x7e]|["\\]', "_", base)
    how = "inline" if mime in _SHOWN_INLINE else "attachment"
    return f"{how}; filename=\"{plain}\"; filename*=UTF-8''{quote(base, safe='')}"


class ArtifactContentHandler(AnalystHandler):
    @property
    def content_security_policy(self) -> str:
        """The API's own policy (``default-src 'none'``: nothing loads, no script runs) and
        ``sandbox``: a document opened here has an opaque origin, so even a browser that let
        something run would give it neither the server's cookies nor its API."""
        return super().content_security_policy + "; sandbox"

    @web.authenticated
    @authorized
    async def get(self, artifact_id: str) -> None:
        """An artifact's bytes, with its content type.

        The bytes are the model's (its code wrote the file), served from the origin that can
        start kernels: never sniffed as another type, sandboxed by CSP, and downloaded
        rather than shown unless their type holds no script.
        """
        artifact = self.owned_artifact(artifact_id)
        try:
            # Re-hashed before a byte is sent (off the loop: big blobs take a while).
            blob = await asyncio.to_thread(self.service.open_artifact, artifact_id)
        except StorageError as exc:
            raise web.HTTPError(500, exc.message, reason=exc.reason) from exc
        mime = artifact.mime or mimetypes.guess_type(artifact.name)[0] or "application/octet-stream"
        self.set_header("Content-Type", mime)
        self.set_header("Content-Disposition", content_disposition(artifact.name, mime))
        self.set_header("X-Content-Type-Options", "nosniff")
        with blob as fh:
            while chunk := fh.read(1 << 20):
                self.write(chunk)
                await self.flush()
        self.finish(set_content_type=self._headers["Content-Type"])


class ArtifactPreviewHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, artifact_id: str) -> None:
        """An artifact as a notebook output shows it: ``{data: MIME bundle, metadata}``
        (a dataset's first ``?rows=`` rows, an image, the start of a text file)."""
        from ..artifacts.preview import preview

        artifact = self.owned_artifact(artifact_id)
        rows = self.query(PreviewQuery).rows

        def read() -> dict[str, Any]:
            with self.service.open_artifact(artifact_id) as blob:
                return preview(artifact, blob, rows=rows)

        try:
            bundle = await asyncio.to_thread(read)
        except StorageError as exc:
            raise self.refuse(exc, 500) from None
        self.reply(bundle)


class OpenAPIHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The OpenAPI description of this API, as this server takes it (its source names)."""
        served = self.settings.get("jupyter_analyst_openapi")
        if served is None:
            import yaml

            from .openapi import for_server, render

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
