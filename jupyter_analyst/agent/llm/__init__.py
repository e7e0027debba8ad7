"""The model endpoint: one client for any OpenAI-compatible server, as servers really behave.

``client.py`` streams a chat completion (retries, fallbacks, a dropped stream asked again);
``reply.py`` is the reply and the assembly of its tool calls from the stream;
``reply_text.py`` finds calls written as text and a reasoning model's monologue in the answer;
``provider_errors.py`` turns a provider's errors into hints by cause; ``wire.py`` holds the
request-shaping fallbacks and the recognition of the HTTP library's errors; ``sdk.py``
imports the ``openai`` SDK once, ahead of the first client when a turn asks.
"""

from .client import SCRIPTED_MODEL, LLMClient
from .reply import ToolCall
from .reply_text import split_reply
from .sdk import start_import as start_sdk_import

__all__ = [
    "SCRIPTED_MODEL", "LLMClient", "ToolCall", "split_reply", "start_sdk_import",
]
