"""``%%ask`` through a Jupyter server's analyst API instead of the local engine.

When the kernel's notebook is served by a Jupyter server with the extension, a turn asked
from a cell should run where the sidebar sees it: on the server's threads, with the
server's model and configured sources. This client speaks the REST + event-stream API
under ``{url}analyst/api/`` with the standard library only (the kernel may have nothing
else): it picks the thread, posts the turn, hands each streamed event to the cell's
progress display, then downloads the datasets' Parquet bytes and checks them against
their fingerprints before anything is bound.

The server is named with ``--server URL`` (``--token T``) or ``$JUPYTER_ANALYST_SERVER_URL``
(``$JUPYTER_ANALYST_TOKEN``): a kernel the server starts is not told the server's address.
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from http.client import HTTPResponse
from typing import TYPE_CHECKING, Any

from ..step_kinds import is_query_step
from ..errors import AnalystError, ConfigError, StorageError

if TYPE_CHECKING:
    import pandas as pd

    from ..events import Event
    from ..turns import TurnSummary
    from ..artifacts import Artifact
    from .magic_session import AskResult

#: The server ``%%ask`` uses when no ``--server`` is given (unset: the local engine).
SERVER_URL_ENV = "JUPYTER_ANALYST_SERVER_URL"
#: The server's token when no ``--token`` is given.
TOKEN_ENV = "JUPYTER_ANALYST_TOKEN"

#: A bound on one read from the server (a limit, not a wait): a turn's stream sends a
#: heartbeat every 15 seconds, so a read this long means the server is gone.
READ_LIMIT_S = 120.0

TOKEN_HINT = (f"pass --token T or set ${TOKEN_ENV} to the server's token "
              "(`jupyter server list` shows it in the URL)")


class ServerError(ConfigError):
    """The Jupyter server could not be used for a turn: unreachable, refusing the token,
    without the extension, or refusing the request (its own message and hint)."""

    reason = "server_error"


def server_of(url: str | None, token: str | None) -> AnalystServer | None:
    """The server named by the options, else by the environment; ``None``: use the local engine."""
    chosen = url or os.environ.get(SERVER_URL_ENV)
    if not chosen:
        return None
    return AnalystServer(chosen, token if token is not None else os.environ.get(TOKEN_ENV))


class AnalystServer:
    """One Jupyter server's analyst API, called from a cell (blocking, in the cell's thread)."""

    def __init__(self, url: str, token: str | None = None) -> None:
        parts = urllib.parse.urlsplit(url.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ServerError(f"{url!r} is not a Jupyter server URL", reason="invalid_server_url",
                              hint="give the server's http(s) URL, e.g. http://127.0.0.1:8888/")
        #: The server's URL with its base path, ending in ``/`` (as ``{url}analyst/api/`` needs).
        self.url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + "/", "", ""))
        self.api = self.url + "analyst/api/"
        self.token = token or None

    # ------------------------------------------------------------------ HTTP

    def _open(self, method: str, path: str, body: Any = None, *, accept: str = "application/json",
              api: bool = True) -> HTTPResponse:
        """One request to the analyst API (``api``), else to the server's own REST API."""
        headers = {"Accept": accept}
        if self.token:
            headers["Authorization"] = f"token {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request((self.api if api else self.url) + path, data=data, method=method, headers=headers)
        try:
            return urllib.request.urlopen(request, timeout=READ_LIMIT_S)
        except urllib.error.HTTPError as exc:
            with exc:
                raise self._refused(exc.code, exc.read()) from None
        except (urllib.error.URLError, OSError) as exc:
            why = getattr(exc, "reason", exc)
            raise ServerError(f"cannot reach the Jupyter server at {self.url}: {why}", reason="server_unreachable",
                              hint=f"is it running? check the URL (--server or ${SERVER_URL_ENV})") from None

    def _refused(self, status: int, raw: bytes) -> AnalystError:
        """The error of a refused request: the API's ``{message, reason, hint}`` when it sent one."""
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        body = body if isinstance(body, dict) else {}
        if status in (401, 403):
            return ServerError(f"the Jupyter server at {self.url} refused the request ({status}): "
                               + ("no token was given" if not self.token else "the token is not accepted"),
                               reason="forbidden", hint=TOKEN_HINT)
        if status == 404 and not body.get("reason"):
            return ServerError(f"the Jupyter server at {self.url} has no analyst API (404 for {self.api})",
                               reason="no_analyst_api",
                               hint="enable the extension: jupyter server extension enable jupyter_analyst.server")
        message = body.get("message") or f"the server answered {status}"
        return ServerError(f"the Jupyter server refused: {message}", reason=body.get("reason") or f"http_{status}",
                           hint=body.get("hint"))

    def call(self, method: str, path: str, body: Any = None, *, api: bool = True) -> Any:
        """One request; its JSON answer."""
        with self._open(method, path, body, api=api) as response:
            return json.loads(response.read())

    # ------------------------------------------------------------------ the API

    def check_model(self) -> None:
        """Refuse before anything is made when the server has no model (``no_model``)."""
        model = self.call("GET", "config")["model"]
        if not model.get("configured"):
            raise ServerError(f"the Jupyter server at {self.url} has no model configured", reason="no_model",
                              hint=model.get("hint"))

    def sessions(self) -> list[Any]:
        """The server's notebook sessions (``GET api/sessions``); none when it will not say:
        which notebook a kernel belongs to only adds context to a turn, never stops one."""
        try:
            found = self.call("GET", "api/sessions", api=False)
        except (AnalystError, ValueError):
            return []
        return found if isinstance(found, list) else []

    def thread(self, thread_id: str) -> dict[str, Any]:
        """The caller's thread (``thread_not_found`` for another's or a wrong id)."""
        return self.call("GET", f"threads/{urllib.parse.quote(thread_id, safe='')}")

    def new_thread(self, source: str | None) -> dict[str, Any]:
        """A new thread on a configured source (by name; the server's default when ``None``)."""
        return self.call("POST", "threads", {"source": source} if source else {})

    def turn(self, thread_id: str, prompt: str, *, source: str | None, rerun: bool,
             on_event: Callable[[Event], None], notebook: str | None = None) -> list[Event]:
        """Run a turn on the server and stream its events to ``on_event``; the turn's events.
        ``notebook`` (a path relative to the server's root) is the notebook it works beside.

        Interrupting the cell (``KeyboardInterrupt``) cancels the turn on the server.
        """
        from ..events import TurnEnded, TurnStarted

        body: dict[str, Any] = {"prompt": prompt, "rerun": rerun}
        if source:
            body["source"] = source
        if notebook:
            body["notebook"] = notebook
        seen: list[Event] = []
        turn_id: str | None = None
        response = self._open("POST", f"threads/{urllib.parse.quote(thread_id, safe='')}/turns", body,
                              accept="text/event-stream")
        try:
            with response:
                for event in self._events(response):
                    # A summarizer of an earlier turn may write to the stream: only this turn's.
                    if turn_id is None and isinstance(event, TurnStarted):
                        turn_id = event.turn_id
                    if event.turn_id != turn_id:
                        continue
                    seen.append(event)
                    on_event(event)
                    if isinstance(event, TurnEnded):
                        return seen
        except KeyboardInterrupt:
            self.cancel(thread_id)
            raise
        except (OSError, ValueError) as exc:  # the connection broke mid-stream
            raise ServerError(f"the stream of the turn from {self.url} broke: {exc}", reason="stream_broken",
                              hint="the turn may still be running: the sidebar shows it") from None
        raise ServerError(f"the server's stream ended before the turn did ({self.url})", reason="stream_ended",
                          hint="the turn may still be running: the sidebar shows it")

    def _events(self, response: HTTPResponse) -> Iterator[Event]:
        """The events of an SSE response as its frames arrive (``parse_events`` on each frame)."""
        from ..events import parse_event
        from ..events import parse_events

        frame: list[str] = []
        for raw in response:
            line = raw.decode("utf-8").rstrip("\r\n")
            if line:
                frame.append(line)
                continue
            text, frame = "\n".join(frame), []
            for data in parse_events(text + "\n\n"):
                if "event: error" in text.splitlines():
                    # The turn's task failed past its events (see TurnsHandler).
                    raise ServerError(f"the turn failed on the server: {data.get('message')}",
                                      reason=data.get("reason") or "turn_failed")
                yield parse_event(data)

    def cancel(self, thread_id: str) -> None:
        """Stop the thread's running turn (best effort: the cell is being interrupted)."""
        try:
            self.call("POST", f"threads/{urllib.parse.quote(thread_id, safe='')}/cancel", {})
        except AnalystError:
            pass

    # ------------------------------------------------------------------ proposals

    def proposals(self, thread_id: str) -> list[dict[str, Any]]:
        """The thread's proposals, each change with its status (``GET .../proposals``)."""
        return self.call("GET", f"threads/{urllib.parse.quote(thread_id, safe='')}/proposals")["proposals"]

    def decide(self, decision: str, thread_id: str, proposal_id: str, cells: list[str] | None) -> dict[str, Any]:
        """Accept or reject changes of a proposal on the server, which writes the notebook
        (checkpointed first) through its contents manager; the proposal as it is then."""
        path = (f"threads/{urllib.parse.quote(thread_id, safe='')}/proposals/"
                f"{urllib.parse.quote(proposal_id, safe='')}/{decision}")
        return self.call("POST", path, {"cell_ids": cells or "all"})

    def revert(self, thread_id: str, turn_id: str) -> dict[str, Any]:
        """Restore the notebook from the checkpoint taken before the turn's first accepted change."""
        path = f"threads/{urllib.parse.quote(thread_id, safe='')}/turns/{urllib.parse.quote(turn_id, safe='')}/revert"
        return self.call("POST", path, {})

    def artifact(self, artifact_id: str) -> Artifact:
        """One artifact's metadata."""
        from ..artifacts import Artifact

        return Artifact.model_validate(self.call("GET", f"artifacts/{urllib.parse.quote(artifact_id, safe='')}"))

    def content(self, artifact: Artifact) -> bytes:
        """An artifact's bytes, refused unless they hash to its fingerprint."""
        with self._open("GET", f"artifacts/{urllib.parse.quote(artifact.artifact_id, safe='')}/content",
                        accept="*/*") as response:
            data = response.read()
        actual = "sha256:" + hashlib.sha256(data).hexdigest()
        if actual != artifact.fingerprint:
            raise StorageError(f"the bytes of artifact {artifact.artifact_id} ({artifact.name}) downloaded from "
                               f"{self.url} hash to {actual}, not its fingerprint {artifact.fingerprint}",
                               reason="blob_corrupt", hint="nothing was bound; ask again to download it again")
        return data

    def dataset(self, artifact: Artifact) -> pd.DataFrame:
        """A dataset artifact's DataFrame, from its checked Parquet bytes."""
        import pyarrow as pa

        from ..kernel import read_dataset

        # The kernels' own reader (decimals as floats), here over bytes in memory.
        return read_dataset(pa.BufferReader(self.content(artifact)))  # type: ignore[arg-type]


class ServerThreads:
    """The kernel's current thread on each server (apart from the local workspace's)."""

    def __init__(self) -> None:
        self.current: dict[str, str] = {}

    def target(self, server: AnalystServer, *, thread: str | None, source: str | None) -> tuple[str, str | None]:
        """The thread a turn runs on, and the source its request names.

        ``--thread`` is checked on the server; ``--source`` (a configured name) without it
        keeps the current thread when that thread is on it, else starts a new thread there;
        neither: the current thread, else a new one on the server's default source.
        """
        if thread:
            server.thread(thread)
            return thread, source
        current = self.current.get(server.api)
        if current is not None and (source is None or server.thread(current).get("source") == source):
            return current, None
        return server.new_thread(source)["thread_id"], None

    def ask(self, server: AnalystServer, prompt: str, *, thread: str | None, source: str | None, rerun: bool,
            on_event: Callable[[Event], None], notebook: str | None = None) -> AskResult:
        """One turn on the server, which makes its thread the current one there; ``notebook``
        as for :meth:`AnalystServer.turn`."""
        from ..events import ArtifactRecorded, ToolResult
        from .magic_session import AskResult

        server.check_model()
        thread_id, turn_source = self.target(server, thread=thread, source=source)
        self.current[server.api] = thread_id
        events = server.turn(thread_id, prompt, source=turn_source, rerun=rerun, on_event=on_event, notebook=notebook)
        summary = summarize(events)
        fetched = {
            e.result["dataset"]: e.artifact_ids[0]
            for e in events
            if isinstance(e, ToolResult) and is_query_step(e.tool) and e.status == "ok" and e.artifact_ids
        }
        recorded = list(dict.fromkeys(e.artifact_id for e in events if isinstance(e, ArtifactRecorded)))
        made = {a: server.artifact(a) for a in dict.fromkeys([*recorded, *fetched.values()])}
        return AskResult(summary=summary, datasets={n: made[a] for n, a in fetched.items()},
                         artifacts=[made[a] for a in recorded])


def summarize(events: list[Event]) -> TurnSummary:
    """The turn's summary, as the local engine returns it, from its streamed events."""
    from ..events import AnswerReady, ArtifactRecorded, StateChanged, TextDelta, TurnEnded, TurnStarted
    from ..turns import TurnSummary

    started = next(e for e in events if isinstance(e, TurnStarted))
    ended = next(e for e in events if isinstance(e, TurnEnded))
    answers = [e.text for e in events if isinstance(e, AnswerReady)]
    created = {e.artifact_id for e in events if isinstance(e, ArtifactRecorded) and e.created}
    reused = {e.artifact_id for e in events if isinstance(e, ArtifactRecorded) and not e.created}
    counters = ended.counters
    return TurnSummary(
        thread_id=started.thread_id,
        turn_id=started.turn_id,
        status=ended.status,
        message=ended.message if ended.status != "completed" else None,
        answer=answers[-1] if answers else "".join(e.text for e in events if isinstance(e, TextDelta)),
        model=started.model,
        transitions=[e.to_state for e in events if isinstance(e, StateChanged)],
        tool_calls={k: counters.get(k, 0) for k in ("executed", "reused", "blocked")},
        artifacts={"created": len(created), "reused": len(reused - created)},
        counters=counters,
        ledger=ended.ledger,
        citations=ended.citations,
        unsupported=ended.unsupported,
        error=None if ended.status in ("completed", "needs_input") else {"reason": f"turn_{ended.status}",
                                                        "message": ended.message or f"the turn ended: {ended.status}"},
    )
