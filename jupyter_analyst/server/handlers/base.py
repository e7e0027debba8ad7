"""What every handler of the API shares: the service, the caller's identity, typed bodies and
query parameters, ownership checks (404 for anyone else's thread or artifact) and JSON errors.

Every handler is authenticated and authorized (resource ``analyst``); threads and
artifacts belong to the user who made them, and anyone else gets 404. Business logic
stays in the engine: handlers parse, check ownership, call, and serialise.
"""

from __future__ import annotations

import json
from http.client import responses
from typing import TYPE_CHECKING, Any

from jupyter_server.base.handlers import APIHandler
from tornado import web

from ...artifacts import ArtifactNotFound
from ...errors import AnalystError, ConfigError
from ...store import Thread, ThreadBusy
from ..contents import refuse_links
from ..inputs import ApiLimits, BodyBuffer, Input, InvalidRequest, parse_body, parse_fields
from ..methods import declared_methods

if TYPE_CHECKING:
    from ..service import ThreadService

AUTH_RESOURCE = "analyst"


class ApiError(web.HTTPError):
    """An :class:`AnalystError` answered with an HTTP status, its body ``{message, reason, hint, ...}``."""

    def __init__(self, status: int, error: AnalystError) -> None:
        # Tornado formats the log line with %: a client's text must not be read as a format.
        super().__init__(status, error.message.replace("%", "%%"), reason=error.reason)
        self.error = error


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
        """409 for a path in the user's folder that goes through a link (see contents.py): a
        body naming what the folder does not hold, as the API answers it; 404 is about the URL's
        own resource (the thread)."""
        try:
            refuse_links(self.contents_manager, path)
        except ConfigError as exc:
            raise self.refuse(exc, 409) from None

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
