"""What an endpoint's refusal means, said in one line with a hint that matches its cause.

"check the model name, the API key and OPENAI_BASE_URL" after every error sends the user
looking in three places when the server already said which one it was: a base URL without
``/v1`` (the server has no such route), a vLLM started without auto tool choice, a chat
template with no system role, a gateway that knows no ``stream_options``, a proxy whose
server behind it is down. Each cause gets its own hint here; which of them the client works
around by itself (the system role, ``stream_options``) is decided in llm.py.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

#: The timeout of one model call, in seconds (default 120): the variable named in hints.
TIMEOUT_VARIABLE = "ANALYST_MODEL_TIMEOUT"

_NO_SYSTEM_ROLE = re.compile(r"system role (is )?not supported|roles? must alternate", re.I)
_STREAM_OPTIONS = re.compile(r"stream_options", re.I)
_AUTO_TOOL_CHOICE = re.compile(r"enable-auto-tool-choice|auto\W+tool choice", re.I)


def rejects_system_role(status: int, message: str) -> bool:
    """Whether the endpoint says the chat template has no system role (Gemma's and a few
    others'): vLLM answers 400, llama.cpp 500 (the template raised).

    >>> rejects_system_role(500, "System role not supported"), rejects_system_role(400, "bad model")
    (True, False)
    """
    return status in (400, 422, 500) and bool(_NO_SYSTEM_ROLE.search(message))


def rejects_stream_options(status: int, message: str) -> bool:
    """Whether a 400 refuses the ``stream_options`` parameter (an older gateway or server).

    >>> rejects_stream_options(400, "Unrecognized request argument supplied: stream_options")
    True
    """
    return status in (400, 422) and bool(_STREAM_OPTIONS.search(message))


def status_hint(status: int, message: str, base_url: str, model: str) -> str:
    """The hint for an endpoint that answered ``status`` with ``message``.

    >>> status_hint(404, "Not Found", "http://localhost:8000", "m")
    'OPENAI_BASE_URL usually ends in /v1: try http://localhost:8000/v1'
    >>> status_hint(404, "model 'qwen' not found", "http://localhost:11434/v1", "qwen")
    "the server has no model 'qwen': pass --model (or set OPENAI_MODEL) to one that http://localhost:11434/v1/models lists"
    >>> status_hint(502, "Bad Gateway", "https://proxy/v1", "m")
    'a proxy in front of the model server answered 502: the server behind it is down, restarting or still loading the model; try again in a minute'
    """
    path = urlsplit(base_url).path.rstrip("/")
    if status == 400 and _AUTO_TOOL_CHOICE.search(message):
        return ("vLLM needs tool calling switched on: start it with --enable-auto-tool-choice and the "
                "--tool-call-parser of your model (hermes for Qwen, llama3_json for Llama 3.x, ...)")
    if status in (400, 422, 500) and _NO_SYSTEM_ROLE.search(message):
        return "the model's chat template accepts no system message; use a template or model that does"
    if status in (401, 403):
        return "the API key was refused: set OPENAI_API_KEY to a key this endpoint accepts"
    if status == 404:
        lowered = message.lower()
        if "model" in lowered and ("not found" in lowered or "does not exist" in lowered):
            return (f"the server has no model {model!r}: pass --model (or set OPENAI_MODEL) to one that "
                    f"{base_url}/models lists")
        if not path.endswith("/v1") and not re.search(r"/v\d+(beta)?$|/openai$|/api$", path):
            return f"OPENAI_BASE_URL usually ends in /v1: try {base_url}/v1"
        return f"the endpoint has no chat completions route: check OPENAI_BASE_URL ({base_url})"
    if status in (502, 503, 504):
        return (f"a proxy in front of the model server answered {status}: the server behind it is down, "
                "restarting or still loading the model; try again in a minute")
    if status == 429:
        return "rate-limited or out of quota: wait and try again, or check the account's plan and billing"
    return "check the model name, the API key and OPENAI_BASE_URL"


def timeout_hint(timeout: float) -> str:
    """The hint for a server that did not answer in time.

    >>> timeout_hint(120)
    'the server may be overloaded or still loading the model; try again, or allow it longer with ANALYST_MODEL_TIMEOUT=300 (seconds)'
    """
    return ("the server may be overloaded or still loading the model; try again, or allow it longer with "
            f"{TIMEOUT_VARIABLE}={max(300, int(timeout * 2.5) // 60 * 60)} (seconds)")


def chat_completions_base(base_url: str) -> str:
    """A base URL with the ``/chat/completions`` people paste from a curl example taken off,
    since the SDK adds it.

    >>> chat_completions_base("http://localhost:8000/v1/chat/completions/")
    'http://localhost:8000/v1'
    >>> chat_completions_base("http://localhost:8000/v1")
    'http://localhost:8000/v1'
    """
    trimmed = base_url.rstrip("/")
    return trimmed.removesuffix("/chat/completions") if trimmed.endswith("/chat/completions") else base_url
