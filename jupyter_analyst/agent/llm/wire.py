"""How OpenAI-compatible servers differ on the wire, read in one place: where a reasoning
model's monologue comes, what the HTTP library raises when a stream breaks, a conversation
for a chat template that has no system role."""

from __future__ import annotations

from typing import Any

from ..._text import valid_text


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def reasoning_of(delta: Any) -> str:
    """The monologue a delta carries in a field of its own (vLLM and DeepSeek's
    ``reasoning_content``, OpenRouter and Ollama's ``reasoning``)."""
    for key in ("reasoning_content", "reasoning"):
        value = _get(delta, key)
        if value is None:
            extra = getattr(delta, "model_extra", None) or {}
            value = extra.get(key)
        if isinstance(value, str) and value:
            return valid_text(value)
    return ""


def fold_system_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    r"""The conversation for a chat template with no system role: the system messages'
    text put at the head of the first user message.

    >>> fold_system_messages([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    [{'role': 'user', 'content': 'Be brief.\n\nHi'}]
    """
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
    rest = [m for m in messages if m.get("role") != "system"]
    for i, message in enumerate(rest):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            rest[i] = {**message, "content": f"{system}\n\n{message['content']}" if system else message["content"]}
            return rest
    return [{"role": "user", "content": system}, *rest] if system else rest


def is_transport_error(exc: BaseException) -> bool:
    """An error of the SDK's HTTP library (httpx, or httpx2) about the connection."""
    module = type(exc).__module__ or ""
    return module.split(".")[0] in ("httpx", "httpx2", "httpcore") and type(exc).__name__ not in (
        "HTTPStatusError", "InvalidURL", "UnsupportedProtocol")


def is_timeout(exc: BaseException) -> bool:
    return "Timeout" in type(exc).__name__
