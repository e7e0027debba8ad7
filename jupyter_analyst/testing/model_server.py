"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1.

It speaks enough of the API for the real ``openai`` SDK: ``POST /v1/chat/completions``
(streamed as server-sent events, or not) with tool calls, and ``GET /v1/models``. It never
calls a real model: it replays a :class:`Script`.

It can also behave as real servers do when they disappoint a client (see
:class:`ScriptedModelServer`'s ``rejects`` and ``strict_routes``, :meth:`drop_streams`, and
the provider fields of a script's :class:`Step`): each such mode is how a provider really
answers, byte for byte where it matters to a client.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from ..agent import SCRIPTED_MODEL
from .script import Script, Step, load_script

MODEL_NAME = SCRIPTED_MODEL

#: Requests some servers refuse, with the 400 each answers: a gateway on an older API that
#: knows no ``stream_options`` (Azure's wording), a chat template without a system role
#: (Gemma's), vLLM started without ``--enable-auto-tool-choice``.
Rejection = Literal["stream_options", "system_role", "auto_tool_choice"]
REJECTIONS: dict[str, str] = {
    "stream_options": "Unrecognized request argument supplied: stream_options",
    "system_role": "System role not supported",
    "auto_tool_choice": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
}


def _rejection(rejects: frozenset[str], body: dict[str, Any]) -> str | None:
    """What a server with these refusals answers to ``body`` (``None``: it accepts it)."""
    if "stream_options" in rejects and "stream_options" in body:
        return REJECTIONS["stream_options"]
    messages = body.get("messages") or []
    if "system_role" in rejects and any(isinstance(m, dict) and m.get("role") == "system" for m in messages):
        return REJECTIONS["system_role"]
    if "auto_tool_choice" in rejects and body.get("tools"):
        return REJECTIONS["auto_tool_choice"]
    return None


def _pieces(text: str, count: int = 3) -> list[str]:
    """``text`` in about ``count`` pieces, so that clients see it arrive in parts."""
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _split_arguments(text: str, size: int = 3) -> list[str]:
    r"""Argument text in small pieces, cut right after every backslash so escapes straddle chunks.

    >>> _split_arguments(r'{"a": "x\"y"}')
    ['{"a', '": ', '"x\\', '"y"', '}']
    """
    pieces: list[str] = []
    current = ""
    for char in text:
        current += char
        if len(current) >= size or char == "\\":
            pieces.append(current)
            current = ""
    if current or not pieces:
        pieces.append(current)
    return pieces


def _reasoning_pieces(step: Step) -> list[str]:
    """The reasoning as it streams: a line a delta when it is paced, else a few pieces.

    >>> _reasoning_pieces(Step(reasoning="First.\\nThen.", reasoning_pace_s=1))
    ['First.\\n', 'Then.']
    """
    text = step.reasoning or ""
    return text.splitlines(keepends=True) if step.reasoning_pace_s else _pieces(text)


def _chunks(step: Step) -> list[dict[str, Any]]:
    """The streamed deltas of one reply (without the envelope), with the step's id quirk."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if step.reasoning:
        deltas += [{step.reasoning_field: piece} for piece in _reasoning_pieces(step)]
    if step.content:
        deltas += [{"content": piece} for piece in _pieces(step.content)]
    if step.refusal:
        deltas += [{"refusal": piece} for piece in _pieces(step.refusal)]
    for index, call in enumerate(step.tool_calls):
        call_id = f"call_{uuid.uuid4().hex[:12]}"
        args = call.argument_text()
        if step.quirk == "arguments_object":
            # Ollama: the whole call in one chunk, its arguments an object.
            item = {"index": index, "id": call_id, "type": "function",
                    "function": {"name": call.name, "arguments": call.argument_value(step.quirk)}}
            deltas.append({"tool_calls": [item]})
            continue
        if step.quirk == "split_arguments":
            pieces = _split_arguments(args)
        else:
            half = len(args) // 2
            pieces = [args[:half], args[half:]]
        first: dict[str, Any] = {"index": index, "type": "function", "function": {"name": call.name, "arguments": ""}}
        if step.quirk != "no_id":
            first["id"] = call_id
        deltas.append({"tool_calls": [first]})
        for n, piece in enumerate(pieces):
            item: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
            if step.quirk == "id_every_chunk":
                item["id"] = call_id
            elif step.quirk == "id_changes" and n == len(pieces) - 1:
                item["id"] = f"call_changed_{uuid.uuid4().hex[:8]}"
            deltas.append({"tool_calls": [item]})
    return deltas


def _usage(body: dict[str, Any], step: Step) -> dict[str, int] | None:
    """Token counts estimated at four characters a token: plausible, deterministic, free; the
    step's own when it gives them, none when it says ``"none"``."""
    if step.usage == "none":
        return None
    if step.usage is not None:
        prompt, completion = step.usage.prompt_tokens, step.usage.completion_tokens
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    prompt = len(json.dumps(body.get("messages") or [])) // 4
    said = (step.content or "") + (step.reasoning or "") + (step.refusal or "")
    completion = (len(said) + sum(len(c.argument_text()) for c in step.tool_calls)) // 4
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        model = {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "scripted"}
        if path.endswith("/models"):
            self._json(200, {"object": "list", "data": [model]})
        elif path.endswith(f"/models/{MODEL_NAME}"):
            self._json(200, model)
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("messages", []), list):
            self._json(400, {"error": {"message": "the request body must be a JSON object with a 'messages' list",
                                       "type": "invalid_request_error"}})
            return
        route = self.path.split("?", 1)[0].rstrip("/")
        if not (route == "/v1/chat/completions" if self.server.strict_routes else route.endswith("/chat/completions")):
            if self.server.strict_routes:  # as vLLM and FastAPI servers answer
                self._json(404, {"detail": "Not Found"})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        with self.server.lock:
            self.server.received.append(body)
            self.server.keys.append(self.headers.get("Authorization", ""))
        refusal = _rejection(self.server.rejects, body)
        if refusal is not None:
            self._json(400, {"error": {"message": refusal, "type": "BadRequestError", "code": 400}})
            return
        messages = body.get("messages") or []
        if self.server.script.is_summarizer(messages):
            with self.server.lock:
                self.server.summarizer_requests.append(body)
            # A test holds the summarizer to show that the next turn does not wait for it.
            self.server.summarizer_gate.wait()
            request = " ".join(str(m.get("content") or "") for m in messages if isinstance(m, dict))
            for pattern, held, release in list(self.server.summarizer_holds):
                if re.search(pattern, request):
                    held.set()
                    release.wait()
        else:
            with self.server.lock:
                self.server.requests.append(body)
                count = len(self.server.requests)
            hold = self.server.hold
            if hold is not None and count > hold[0]:
                # A test holds the agent here, mid-turn, to do something to it (kill it...).
                hold[1].set()
                hold[2].wait()
        step = self.server.script.reply_for(messages)
        if step.error is not None:
            # A short retry-after keeps the SDK's retries (same scripted step: replay is stateless) quick.
            self._json(step.error.status, {"error": {"message": step.error.message, "type": "scripted_error"}},
                       headers={"retry-after-ms": "10"})
            return
        if body.get("stream") and not step.ignores_stream:
            self._stream(step, body)
        else:
            self._whole(step, body)

    def _envelope(self, completion_id: str) -> dict[str, Any]:
        return {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()), "model": MODEL_NAME}

    def _stream(self, step: Step, body: dict[str, Any]) -> None:
        completion_id = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        # Chunked, as uvicorn and most servers stream: a cut connection is then visibly
        # incomplete to the client, not a body that simply ended.
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        finish = step.finish_reason()
        events = [{**self._envelope(completion_id), "choices": [{"index": 0, "delta": d, "finish_reason": None}]}
                  for d in _chunks(step)]
        if finish is not None:
            events.append({**self._envelope(completion_id),
                           "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if (body.get("stream_options") or {}).get("include_usage") and (usage := _usage(body, step)) is not None:
            events.append({**self._envelope(completion_id), "choices": [], "usage": usage})
        with self.server.lock:
            drop = self.server.drops > 0
            self.server.drops -= drop
        frames = [f"data: {json.dumps(event)}\n\n".encode() for event in events] + [b"data: [DONE]\n\n"]
        # A paced reasoning: each of its lines after the first comes that long after the last.
        thought = [n for n, event in enumerate(events)
                   if any(step.reasoning_field in choice["delta"] for choice in event["choices"])]
        paced = set(thought[1:]) if step.reasoning_pace_s else set()
        try:
            for n, frame in enumerate(frames):
                if n in paced:
                    time.sleep(step.reasoning_pace_s)
                if drop and n == max(1, len(frames) // 2):
                    # Cut mid-stream, as a proxy's idle timeout or a restarted server does:
                    # no finish reason, no [DONE], no last chunk; the socket closed.
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away mid-stream; nothing to tell it

    def _whole(self, step: Step, body: dict[str, Any]) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": step.content}
        if step.reasoning:
            message[step.reasoning_field] = step.reasoning
        if step.refusal:
            message["refusal"] = step.refusal
        if step.tool_calls:
            message["tool_calls"] = [
                {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                 "function": {"name": c.name, "arguments": c.argument_value(step.quirk)}}
                for c in step.tool_calls
            ]
        self._json(200, {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion", "created": int(time.time()),
            "model": MODEL_NAME,
            "choices": [{"index": 0, "message": message, "finish_reason": step.finish_reason()}],
            **({"usage": usage} if (usage := _usage(body, step)) is not None else {}),
        })


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    script: Script
    requests: list[dict[str, Any]]
    summarizer_requests: list[dict[str, Any]]
    summarizer_gate: threading.Event
    hold: tuple[int, threading.Event, threading.Event] | None
    lock: threading.Lock
    received: list[dict[str, Any]]
    keys: list[str]
    rejects: frozenset[str]
    strict_routes: bool
    drops: int


class ScriptedModelServer:
    """Serves a script as an OpenAI-compatible model; use as a context manager.

    >>> with ScriptedModelServer({"turns": [{"steps": [{"content": "hi"}]}]}) as srv:
    ...     srv.base_url.startswith("http://127.0.0.1:")
    True
    """

    def __init__(self, script: Script | dict[str, Any] | str | Path, *, host: str = "127.0.0.1", port: int = 0,
                 rejects: Iterable[Rejection] = (), strict_routes: bool = False) -> None:
        """``rejects``: the requests it refuses with a 400, as some servers do (:data:`REJECTIONS`);
        ``strict_routes``: only ``/v1/...`` paths exist, as on vLLM or Ollama (else any path
        ending in ``/chat/completions`` is served)."""
        self.script = load_script(script)
        self._httpd = _Server((host, port), _Handler)
        self._httpd.script = self.script
        self._httpd.requests = []
        self._httpd.summarizer_requests = []
        self._httpd.summarizer_gate = threading.Event()
        self._httpd.summarizer_gate.set()
        self._httpd.summarizer_holds = []
        self._httpd.hold = None
        self._httpd.lock = threading.Lock()
        self._httpd.received = []
        self._httpd.keys = []
        self._httpd.rejects = frozenset(rejects)
        self._httpd.strict_routes = strict_routes
        self._httpd.drops = 0
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The ``/v1`` URL to give the SDK."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request body received, in order."""
        with self._httpd.lock:
            return list(self._httpd.requests)

    @property
    def summarizer_requests(self) -> list[dict[str, Any]]:
        """Every request of the end-of-turn summarizer, in order (kept apart from ``requests``)."""
        with self._httpd.lock:
            return list(self._httpd.summarizer_requests)

    @property
    def keys(self) -> list[str]:
        """The ``Authorization`` header of every chat request that reached the route, in order:
        which API key each call was made with."""
        with self._httpd.lock:
            return list(self._httpd.keys)

    @property
    def received(self) -> list[dict[str, Any]]:
        """Every chat request that reached the route, refused ones included, in order."""
        with self._httpd.lock:
            return list(self._httpd.received)

    def drop_streams(self, count: int = 1) -> None:
        """Cut the next ``count`` streamed replies halfway: the socket closes with no finish."""
        with self._httpd.lock:
            self._httpd.drops = count

    def hold_summarizer(self) -> threading.Event:
        """Make summarizer requests wait until the returned event is set."""
        self._httpd.summarizer_gate.clear()
        return self._httpd.summarizer_gate

    def hold_summarizer_of(self, pattern: str) -> tuple[threading.Event, threading.Event]:
        """Make the summarizer requests whose text matches ``pattern`` (a regular expression)
        wait, the others going on: one turn's summarizer answers late, the next one's on time.

        Returns ``(held, release)``: ``held`` is set once such a request waits, and setting
        ``release`` lets it (and later ones) through.
        """
        held, release = threading.Event(), threading.Event()
        with self._httpd.lock:
            self._httpd.summarizer_holds.append((pattern, held, release))
        return held, release

    def hold_requests(self, after: int) -> tuple[threading.Event, threading.Event]:
        """Make agent requests after the first ``after`` (counted from the start) wait.

        Returns ``(held, release)``: ``held`` is set once a request waits, and setting
        ``release`` lets it (and later ones) through.
        """
        held, release = threading.Event(), threading.Event()
        self._httpd.hold = (after, held, release)
        return held, release

    def start(self) -> ScriptedModelServer:
        """Serve in a daemon thread."""
        if self._thread is None:
            # A short poll interval makes stop() quick (shutdown waits for the next poll).
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="scripted-model", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._httpd.summarizer_gate.set()  # never leave a request hanging
        for _pattern, _held, release in self._httpd.summarizer_holds:
            release.set()
        if self._httpd.hold is not None:
            self._httpd.hold[2].set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=10)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> ScriptedModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
