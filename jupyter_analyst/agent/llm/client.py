"""The model: streamed chat completions through the ``openai`` SDK, any compatible server.

This is where the model's words enter the engine, so its text is made valid Unicode here,
once (see ``_text.py``); tool calls are assembled from the stream in ``reply.py``.

The SDK is imported when the first client is made, or ahead of it by a turn about to need
it (``sdk.py``): a process that has asked no model yet (a server that has run no turn, the
scripted model's server, the CLI's other commands) does not pay for it.
"""

from __future__ import annotations

import inspect
import json
import os
import ssl
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from ..._clock import new_id
from ..._text import valid_text
from ...errors import ConfigError, ModelError
from .provider_errors import (
    TIMEOUT_VARIABLE, chat_completions_base, rejects_stream_options, rejects_system_role, status_hint, timeout_hint,
)
from .reply import ModelReply, ToolCall, ToolCallAssembler, attr_or_key
from .reply_text import AnswerStream, split_reply
from .sdk import sdk
from .wire import fold_system_messages, is_timeout, is_transport_error, reasoning_of

if TYPE_CHECKING:
    import openai

#: The model name the offline scripted model (``jupyter_analyst.testing``) answers to; every
#: surface labels what it says as scripted.
SCRIPTED_MODEL = "jupyter-analyst-scripted"

TextSink = Callable[[str], Awaitable[None] | None]


@cache
def _tls(base_url: str | None) -> ssl.SSLContext:
    """The TLS settings of the model clients of one endpoint, made once per process.

    The SDK's HTTP client would load the certificate bundle anew for each client (50 ms of
    CPU, on the event loop, twice per turn with the summarizer); this is the same default
    context (the bundled CAs, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``), shared. A plain
    ``http://`` endpoint (a local vLLM, Ollama) needs no certificates at all: its context
    trusts none, so that a redirect to ``https://`` fails verification instead of skipping it.
    """
    if base_url is not None and base_url.lower().startswith("http://"):
        return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, against no authority
    try:  # the openai SDK's HTTP library: httpx2 in recent releases, httpx before
        from httpx2 import create_ssl_context
    except ImportError:
        from httpx import create_ssl_context
    return create_ssl_context()


#: What the model is told after an empty reply, once, before the reply counts as a failure.
EMPTY_REPLY_NUDGE = (
    "Your last reply was empty. Answer the question in plain text, or call one of the tools "
    "with the API's tool calls."
)
EMPTY_REPLY_NUDGE_NO_TOOLS = "Your last reply was empty. Answer the question in plain text now."


def _default_timeout() -> float:
    """The timeout of one model call: ``ANALYST_MODEL_TIMEOUT`` seconds, else 120."""
    raw = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    try:
        value = float(raw) if raw else 120.0
    except ValueError:
        raise ConfigError(f"{TIMEOUT_VARIABLE}={raw!r} is not a number of seconds",
                          hint=f"set {TIMEOUT_VARIABLE} to the seconds one model call may take, e.g. 300") from None
    if not value > 0:
        raise ConfigError(f"{TIMEOUT_VARIABLE} must be positive, not {raw}")
    return value


class _Dropped(Exception):
    """The connection broke after the stream had started (not retried by the SDK)."""


@dataclass
class _Shown:
    """The answer text already given to ``on_text``, across the attempts of one completion:
    an attempt that replays it (after a dropped stream) shows only what is new."""

    sink: TextSink | None
    text: str = ""

    async def show(self, visible: str) -> None:
        """``visible``: the attempt's answer text so far."""
        if self.sink is None or len(visible) <= len(self.text) or not visible.startswith(self.text):
            return
        piece, self.text = visible[len(self.text):], visible
        maybe = self.sink(piece)
        if inspect.isawaitable(maybe):
            await maybe


@dataclass
class _Attempt:
    """What one request brought back, before its text is taken apart."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    assembler: ToolCallAssembler = field(default_factory=ToolCallAssembler)
    finish: str | None = None
    usage: dict[str, Any] | None = None
    streamed: bool = True
    started: bool = False
    """The server answered and the reply began: a broken connection now is a dropped stream."""


class LLMClient:
    """Chat completions against one OpenAI-compatible endpoint, as real servers give them.

    Streamed when the server streams, read whole when a proxy ignores ``stream: true``; the
    monologue of a reasoning model and the calls a model writes as text taken out of the
    answer (reply_text.py); an empty reply answered with one nudge, then a clear failure; a
    connection dropped mid-stream tried once more; a server that refuses a system message
    or ``stream_options`` asked again without them (and from then on).
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
        max_retries: int = 2,
    ) -> None:
        self.model = model
        self.timeout = _default_timeout() if timeout is None else timeout
        base_url = chat_completions_base(base_url) if base_url else base_url
        #: Set once the server refused them: every later request goes without.
        self.fold_system = False
        self.stream_options = True
        openai = sdk()
        try:
            self._client = openai.AsyncOpenAI(
                base_url=base_url, api_key=api_key, timeout=self.timeout, max_retries=max_retries,
                http_client=openai.DefaultAsyncHttpxClient(
                    timeout=self.timeout, verify=_tls(base_url or os.environ.get("OPENAI_BASE_URL")),
                ),
            )
        except openai.OpenAIError as exc:
            raise ConfigError(
                f"the model client cannot be set up: {exc}",
                hint="set OPENAI_API_KEY (any value for a local server that needs none)",
            ) from exc
        if str(self._client.base_url).rstrip("/").endswith("/chat/completions"):  # from OPENAI_BASE_URL
            self._client = self._client.with_options(base_url=chat_completions_base(str(self._client.base_url)))

    @property
    def base_url(self) -> str:
        """The endpoint, for messages."""
        return str(self._client.base_url).rstrip("/")

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        on_text: TextSink | None = None,
        on_tool: Callable[[str], None] | None = None,
        on_thinking: Callable[[], Awaitable[None] | None] | None = None,
        callable_names: Collection[str] = (),
    ) -> ModelReply:
        """One completion; the answer's text goes to ``on_text`` as it arrives (never the
        monologue, never a call written as text), the name of each tool the model starts to
        call to ``on_tool`` (before its arguments, so that what the call needs can be got
        ready), and ``on_thinking`` is called once when the model is seen thinking.
        ``callable_names``: tools the model may call though this request does not offer them
        (a call written as text that names one is a call, as a native call to it would be).

        Raises:
            ModelError: the endpoint could not be reached, answered with an error, or
                answered with nothing twice.
        """
        names = [attr_or_key(attr_or_key(t, "function"), "name") for t in tools or ()]
        names += [n for n in callable_names if tools and n not in names]
        shown = _Shown(on_text)
        thinking = _Once(on_thinking)
        asked = messages
        dropped = nudged = False
        while True:
            try:
                attempt = await self._attempt(asked, tools, shown, on_tool, thinking)
            except _Dropped as exc:
                if dropped:
                    raise ModelError(
                        f"the connection to the model endpoint {self.base_url} broke twice mid-reply: {exc}",
                        reason="model_connection_dropped",
                        hint="a proxy's idle timeout or an unstable server; try again",
                    ) from exc.__cause__
                dropped = True
                continue
            except _AskAgain:
                continue
            reply = _reply(attempt, names)
            if reply.text or reply.tool_calls or reply.refusal:
                return reply
            if nudged:
                raise ModelError(
                    f"the model {self.model} answered with nothing, twice"
                    f" (finish_reason: {reply.finish_reason or 'none'})",
                    reason="empty_reply",
                    hint=("a model whose tool calls the server does not parse often answers with nothing: "
                          "start llama.cpp with --jinja, vLLM with --enable-auto-tool-choice --tool-call-parser, "
                          "or use a model with tool calling"),
                )
            nudged = True
            asked = [*messages, {"role": "user", "content": EMPTY_REPLY_NUDGE if tools else EMPTY_REPLY_NUDGE_NO_TOOLS}]

    def _request(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": fold_system_messages(messages) if self.fold_system else messages,
            "stream": True,
        }
        if self.stream_options:
            kwargs["stream_options"] = {"include_usage": True}
        if tools:
            kwargs["tools"] = tools
        return kwargs

    async def _attempt(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, shown: _Shown,
        on_tool: Callable[[str], None] | None, thinking: _Once,
    ) -> _Attempt:
        """One request and its reply, read as it streams (or whole)."""
        openai = sdk()
        attempt = _Attempt()
        answer = AnswerStream()
        try:
            stream = await self._client.chat.completions.create(**self._request(messages, tools))
            attempt.started = True
            try:
                response = getattr(stream, "response", None)
                kind = response.headers.get("content-type", "") if response is not None else ""
                if "json" in kind:
                    # A proxy that ignores ``stream: true``: one JSON body, read whole.
                    attempt.streamed = False
                    _read_body(json.loads(await response.aread()), attempt)
                    for call in attempt.assembler.calls():
                        if on_tool is not None and call.name:
                            on_tool(call.name)
                    await _see_text(attempt, answer, shown, thinking)
                    return attempt
                async for chunk in stream:
                    await self._take(chunk, attempt, answer, shown, on_tool, thinking)
            finally:
                # Cancelled or failed midway, the connection is released rather than left open.
                await stream.close()
        except openai.APIStatusError as exc:
            self._fall_back_or_raise(exc)
        except openai.APITimeoutError as exc:
            raise ModelError(
                f"model endpoint {self.base_url} did not answer within {self.timeout:g} s",
                reason="model_timeout", hint=timeout_hint(self.timeout),
            ) from exc
        except openai.APIConnectionError as exc:
            if attempt.started:
                raise _Dropped(str(exc.__cause__ or exc)) from exc
            raise ModelError(
                f"cannot reach the model endpoint {self.base_url}: {exc}",
                hint="is the server running? set OPENAI_BASE_URL, or try `jupyter analyst demo`",
            ) from exc
        except openai.OpenAIError as exc:
            raise ModelError(f"the model call to {self.base_url} failed: {exc}") from exc
        except Exception as exc:
            # openai 1.x and 2.x let the HTTP library's errors out of a stream unwrapped.
            if is_transport_error(exc):
                if is_timeout(exc):
                    raise ModelError(
                        f"model endpoint {self.base_url} stopped sending for {self.timeout:g} s mid-reply",
                        reason="model_timeout", hint=timeout_hint(self.timeout),
                    ) from exc
                raise _Dropped(f"{type(exc).__name__}: {exc}") from exc
            raise
        answer.finish()
        await shown.show(answer.visible)
        return attempt

    async def _take(self, chunk: Any, attempt: _Attempt, answer: AnswerStream, shown: _Shown,
                    on_tool: Callable[[str], None] | None, thinking: _Once) -> None:
        """One streamed chunk into ``attempt``."""
        if getattr(chunk, "usage", None) is not None:
            attempt.usage = chunk.usage.model_dump()
        for choice in chunk.choices or ():
            if choice.index:  # only the first choice is asked for (n=1)
                continue
            delta = choice.delta
            if delta is not None:
                reasoning = reasoning_of(delta)
                if reasoning:
                    attempt.reasoning.append(reasoning)
                    await thinking()
                if delta.content:
                    piece = valid_text(delta.content)
                    attempt.text.append(piece)
                    answer.feed(piece)
                    if answer.thinking:
                        await thinking()
                    await shown.show(answer.visible)
                refusal = attr_or_key(delta, "refusal")
                if isinstance(refusal, str) and refusal:
                    attempt.refusal.append(valid_text(refusal))
                if delta.tool_calls:
                    attempt.assembler.feed(delta.tool_calls)
                    if on_tool is not None:
                        for call in delta.tool_calls:
                            name = attr_or_key(attr_or_key(call, "function"), "name")
                            if name:
                                on_tool(valid_text(name))
            if choice.finish_reason:
                attempt.finish = choice.finish_reason

    def _fall_back_or_raise(self, exc: openai.APIStatusError) -> None:
        """Ask again without what the server refused, if it is safe to go without; else the
        one-line error with the hint that matches the cause."""
        message = _message(exc)
        if not self.fold_system and rejects_system_role(exc.status_code, message):
            self.fold_system = True
            raise _AskAgain from exc
        if self.stream_options and rejects_stream_options(exc.status_code, message):
            self.stream_options = False
            raise _AskAgain from exc
        raise ModelError(
            f"model endpoint {self.base_url} answered {exc.status_code}: {message}",
            hint=status_hint(exc.status_code, message, self.base_url, self.model),
        ) from exc

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()


class _AskAgain(Exception):
    """The server refused something the client can do without: ask again."""


class _Once:
    """Calls its callback the first time it is called, never again."""

    def __init__(self, callback: Callable[[], Awaitable[None] | None] | None) -> None:
        self._callback = callback

    async def __call__(self) -> None:
        callback, self._callback = self._callback, None
        if callback is not None:
            maybe = callback()
            if inspect.isawaitable(maybe):
                await maybe


async def _see_text(attempt: _Attempt, answer: AnswerStream, shown: _Shown, thinking: _Once) -> None:
    """The text of a reply read whole, shown as a stream's would have been."""
    if attempt.reasoning:
        await thinking()
    text = "".join(attempt.text)
    answer.feed(text)
    if answer.thinking:
        await thinking()
    answer.finish()
    await shown.show(answer.visible)


def _read_body(body: Any, attempt: _Attempt) -> None:
    """A whole ``chat.completion`` body into ``attempt`` (a proxy ignored ``stream: true``)."""
    if not isinstance(body, dict):
        raise ModelError("the model endpoint answered a streamed request with JSON that is not a completion")
    error = body.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        raise ModelError(f"the model endpoint answered with an error: {message}")
    choices = body.get("choices") or []
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    message = choice.get("message") or {}
    if isinstance(message.get("content"), str):
        attempt.text.append(valid_text(message["content"]))
    for key in ("reasoning_content", "reasoning"):
        if isinstance(message.get(key), str) and message[key]:
            attempt.reasoning.append(valid_text(message[key]))
            break
    if isinstance(message.get("refusal"), str) and message["refusal"]:
        attempt.refusal.append(valid_text(message["refusal"]))
    calls = message.get("tool_calls") or []
    attempt.assembler.feed([{**c, "index": c.get("index", i)} for i, c in enumerate(calls) if isinstance(c, dict)])
    attempt.finish = choice.get("finish_reason")
    usage = body.get("usage")
    attempt.usage = usage if isinstance(usage, dict) else None


def _reply(attempt: _Attempt, tools: list[str]) -> ModelReply:
    """The reply of an attempt: its answer, its calls (those written as text too) and its
    monologue apart."""
    split = split_reply("".join(attempt.text), tools)
    calls = attempt.assembler.calls()
    from_text = not calls and bool(split.calls)
    if from_text:
        calls = [ToolCall(id=new_id("call"), name=valid_text(c.name.strip()), arguments=c.arguments)
                 for c in split.calls]
    thinking = "\n".join(t for t in ("".join(attempt.reasoning).strip(), split.thinking) if t)
    return ModelReply(
        text=split.answer, tool_calls=calls, finish_reason=attempt.finish, usage=attempt.usage,
        reasoning=thinking, refusal="".join(attempt.refusal).strip(), calls_in_text=from_text,
    )


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(exc.message)
