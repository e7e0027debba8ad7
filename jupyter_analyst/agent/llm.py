"""The model: streamed chat completions through the ``openai`` SDK, any compatible server.

Servers disagree on how they stream tool calls: some send a call's id only in its first
chunk, some repeat it, some change it halfway, some never send one. Calls are therefore
assembled by their ``index`` and reconciled by id (the first id seen wins).

This is where the model's words enter the engine, so its text, tool names and call ids are
made valid Unicode here, once (see ``_text.py``); argument text is left as sent, for the
argument normaliser to judge.

The SDK is imported when the first client is made: a process that has asked no model yet
(a server that has run no turn, the scripted model's server, the CLI's other commands) does
not pay for it.
"""

from __future__ import annotations

import inspect
import os
import ssl
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .._text import valid_text
from ..errors import ConfigError, ModelError

if TYPE_CHECKING:
    import openai
    from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall

#: The model name the offline scripted model (``jupyter_analyst.testing``) answers to; every
#: surface labels what it says as scripted.
SCRIPTED_MODEL = "jupyter-analyst-scripted"

TextSink = Callable[[str], Awaitable[None] | None]


class ToolCall(BaseModel):
    """One tool call as the model sent it (arguments still raw text)."""

    id: str
    name: str
    arguments: str


class ModelReply(BaseModel):
    """One complete reply: its text and its tool calls."""

    text: str
    tool_calls: list[ToolCall]
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None


@dataclass
class _Partial:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


class ToolCallAssembler:
    """Builds whole tool calls from streamed deltas.

    >>> a = ToolCallAssembler()
    >>> a.feed([{"index": 0, "id": "call_1", "function": {"name": "run_sql", "arguments": '{"sql": '}}])
    >>> a.feed([{"index": 0, "id": "other", "function": {"arguments": '"SELECT 1"}'}}])
    >>> a.calls()
    [ToolCall(id='call_1', name='run_sql', arguments='{"sql": "SELECT 1"}')]
    """

    def __init__(self) -> None:
        self._by_index: dict[int, _Partial] = {}
        self._index_of_id: dict[str, int] = {}
        self._last_index: int | None = None

    def feed(self, deltas: Iterable[ChoiceDeltaToolCall | dict[str, Any]] | None) -> None:
        """Add the ``delta.tool_calls`` items of one streamed chunk."""
        for delta in deltas or ():
            index = _get(delta, "index")
            call_id = _get(delta, "id") or ""
            if index is None:
                # No index: a known id says where it belongs, a new id opens a call, and
                # neither continues the call being streamed.
                if call_id and call_id in self._index_of_id:
                    index = self._index_of_id[call_id]
                elif call_id or self._last_index is None:
                    index = max(self._by_index, default=-1) + 1
                else:
                    index = self._last_index
            index = int(index)
            partial = self._by_index.setdefault(index, _Partial())
            self._last_index = index
            if call_id:
                if not partial.id:
                    partial.id = call_id
                # A changed id is not adopted, but later deltas that carry it still land here.
                self._index_of_id.setdefault(call_id, index)
            function = _get(delta, "function")
            if function is not None:
                name = _get(function, "name")
                if name:
                    # Most servers send the name once, some repeat it whole, a few send it in pieces.
                    partial.name = name if not partial.name or partial.name == name else partial.name + name
                arguments = _get(function, "arguments")
                if arguments:
                    partial.arguments.append(arguments)

    def calls(self) -> list[ToolCall]:
        """The assembled calls in index order.

        A call that never got an id gets ``call_<index>``, and an id already taken by an
        earlier call gets a suffix: every call is answered under an id of its own. A call
        without a name is kept (named ``""``) so that the model is told so; only an entry
        that carried nothing at all is dropped.
        """
        out = []
        used = {p.id for p in self._by_index.values() if p.id}
        taken: set[str] = set()
        for index in sorted(self._by_index):
            partial = self._by_index[index]
            if not (partial.name.strip() or partial.id or partial.arguments):
                continue
            call_id = valid_text(partial.id)
            if not call_id or call_id in taken:
                call_id = call_id or f"call_{index}"
                while call_id in used or call_id in taken:
                    call_id += "_"
            taken.add(call_id)
            out.append(ToolCall(id=call_id, name=valid_text(partial.name.strip()), arguments="".join(partial.arguments)))
        return out


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


def _sdk() -> Any:
    """The ``openai`` SDK, imported on first use (see the module's docstring)."""
    import openai

    return openai


class LLMClient:
    """Streamed chat completions against one OpenAI-compatible endpoint."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
    ) -> None:
        self.model = model
        self.timeout = timeout
        openai = _sdk()
        try:
            self._client = openai.AsyncOpenAI(
                base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries,
                http_client=openai.DefaultAsyncHttpxClient(
                    timeout=timeout, verify=_tls(base_url or os.environ.get("OPENAI_BASE_URL")),
                ),
            )
        except openai.OpenAIError as exc:
            raise ConfigError(
                f"the model client cannot be set up: {exc}",
                hint="set OPENAI_API_KEY (any value for a local server that needs none) or pass --api-key",
            ) from exc

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
    ) -> ModelReply:
        """One streamed completion; text pieces go to ``on_text`` as they arrive, and the
        name of each tool the model starts to call to ``on_tool`` (before its arguments),
        so that what the call needs can be got ready while the arguments stream.

        Raises:
            ModelError: the endpoint could not be reached or answered with an error.
        """
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            kwargs["tools"] = tools
        openai = _sdk()
        text: list[str] = []
        assembler = ToolCallAssembler()
        finish: str | None = None
        usage: dict[str, Any] | None = None
        try:
            stream = await self._client.chat.completions.create(**kwargs)
            try:
                async for chunk in stream:
                    if chunk.usage is not None:
                        usage = chunk.usage.model_dump()
                    for choice in chunk.choices or ():
                        if choice.index:  # only the first choice is asked for (n=1)
                            continue
                        delta = choice.delta
                        if delta is not None and delta.content:
                            piece = valid_text(delta.content)
                            text.append(piece)
                            if on_text is not None:
                                maybe = on_text(piece)
                                if inspect.isawaitable(maybe):
                                    await maybe
                        if delta is not None and delta.tool_calls:
                            assembler.feed(delta.tool_calls)
                            if on_tool is not None:
                                for call in delta.tool_calls:
                                    name = _get(_get(call, "function"), "name")
                                    if name:
                                        on_tool(valid_text(name))
                        if choice.finish_reason:
                            finish = choice.finish_reason
            finally:
                # Cancelled or failed midway, the connection is released rather than left open.
                await stream.close()
        except openai.APIStatusError as exc:
            raise ModelError(
                f"model endpoint {self.base_url} answered {exc.status_code}: {_message(exc)}",
                hint="check the model name, the API key and OPENAI_BASE_URL",
            ) from exc
        except openai.APITimeoutError as exc:
            raise ModelError(
                f"model endpoint {self.base_url} did not answer within {self.timeout:g} s",
                hint="the server may be overloaded; try again, or raise the timeout",
            ) from exc
        except openai.APIConnectionError as exc:
            raise ModelError(
                f"cannot reach the model endpoint {self.base_url}: {exc}",
                hint="is the server running? set OPENAI_BASE_URL, or try `jupyter analyst demo`",
            ) from exc
        except openai.OpenAIError as exc:
            raise ModelError(f"the model call to {self.base_url} failed: {exc}") from exc
        return ModelReply(text="".join(text), tool_calls=assembler.calls(), finish_reason=finish, usage=usage)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(exc.message)
