"""A :class:`~.engine.Reply` as an MCP tool result, the same in this product's server and in
Jupyter's (whose tools return it as it is): the text once (never the text and the facts
JSON-encoded together), the facts as structured content, ``isError`` when the step failed, a
chart's PNG as an image, and every artifact that has a resource URI as a resource link with its
MIME type.

Jupyter's MCP server reads no resources: there a result names each artifact by the tool call
that fetches it (:func:`fetched_by`), and that call gives the artifact's bytes in the result
itself (:func:`artifact_result`).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from typing import Any

from mcp_types import (
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from .._text import how_many
from .analyst_tools import ARTIFACT_SCHEME, NOTEBOOK_SCHEME, Reply

_ARTIFACT_URI = re.compile(re.escape(ARTIFACT_SCHEME) + r"(sha256:[0-9a-f]+)")
_NOTEBOOK_URI = re.compile(re.escape(NOTEBOOK_SCHEME) + r"(thr_[A-Za-z0-9]+)")
#: MIME types whose bytes are sent as text when embedded (the rest base64).
_TEXTUAL = re.compile(r"^(text/|application/(json|x-ipynb\+json|xml)\b)")


def tool_result(reply: Reply) -> CallToolResult:
    content: list[ContentBlock] = [TextContent(type="text", text=reply.text)]
    content += [ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime)
                for data, mime in reply.images]
    content += [ResourceLink(type="resource_link", uri=view["uri"], name=view["name"], mime_type=view["mime"],
                             size=view["size"], description=f"{view['type']} of thread {reply.data.get('thread')}")
                for view in reply.data.get("artifacts") or [] if "uri" in view]
    return CallToolResult(content=content, structured_content=reply.data, is_error=reply.error)


def fetch_call(tool: str, fingerprint: str) -> str:
    """The call of ``tool`` that fetches the artifact ``fingerprint``, as a result's text names it.

    >>> fetch_call("analyst_get_artifact", "sha256:ab")
    'analyst_get_artifact {"fingerprint": "sha256:ab"}'
    """
    return f"{tool} {json.dumps({'fingerprint': fingerprint})}"


def fetched_by(reply: Reply, tool: str, notebook: Callable[[str], str | None]) -> Reply:
    """``reply`` for a host that reads no resources: each artifact named by the call of
    ``tool`` that fetches it (in the text; in the facts, ``fetch`` instead of ``uri``), each
    audit notebook by ``notebook(thread)`` (how that host names the file, or ``None``).

    >>> reply = Reply("- revenue (dataset): analyst://artifact/sha256:ab", {"artifacts": [
    ...     {"name": "revenue", "fingerprint": "sha256:ab", "uri": "analyst://artifact/sha256:ab"}],
    ...     "notebook": "analyst://notebook/thr_1"})
    >>> shown = fetched_by(reply, "get", lambda thread: f"{thread}.ipynb")
    >>> shown.text
    '- revenue (dataset): get {"fingerprint": "sha256:ab"}'
    >>> shown.data["artifacts"][0]["fetch"], "uri" in shown.data["artifacts"][0], shown.data["notebook"]
    ({'tool': 'get', 'arguments': {'fingerprint': 'sha256:ab'}}, False, 'thr_1.ipynb')
    """
    def said(text: str) -> str:
        text = _ARTIFACT_URI.sub(lambda m: fetch_call(tool, m.group(1)), text)
        return _NOTEBOOK_URI.sub(lambda m: notebook(m.group(1)) or f"the audit notebook of {m.group(1)}", text)

    def named(value: Any) -> Any:
        if isinstance(value, dict):
            uri = value.get("uri")
            if isinstance(uri, str) and (found := _ARTIFACT_URI.fullmatch(uri)):
                value = {k: v for k, v in value.items() if k != "uri"}
                value["fetch"] = {"tool": tool, "arguments": {"fingerprint": found.group(1)}}
            return {k: named(v) for k, v in value.items()}
        if isinstance(value, list):
            return [named(v) for v in value]
        if isinstance(value, str) and (found := _NOTEBOOK_URI.fullmatch(value)):
            return notebook(found.group(1))
        return said(value) if isinstance(value, str) else value

    return Reply(said(reply.text), named(reply.data), error=reply.error, images=reply.images)


def artifact_result(view: dict[str, Any], data: bytes) -> CallToolResult:
    """An artifact's bytes in a result: a PNG chart as an image, text as text, the rest
    (Parquet...) base64, each with its MIME type; ``view`` its facts (name, type, size...)."""
    mime = view["mime"].split(";")[0].strip()
    text = f"{view['name']} ({view['type']}, {mime}, {how_many(view['size'], 'byte')}), {view['fingerprint']}"
    uri = ARTIFACT_SCHEME + view["fingerprint"]
    block: ContentBlock
    if mime == "image/png":
        block = ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime)
    elif _TEXTUAL.match(mime):
        block = EmbeddedResource(type="resource", resource=TextResourceContents(
            uri=uri, mime_type=view["mime"], text=data.decode("utf-8", errors="replace")))
    else:
        block = EmbeddedResource(type="resource", resource=BlobResourceContents(
            uri=uri, mime_type=view["mime"], blob=base64.b64encode(data).decode("ascii")))
    facts = {k: v for k, v in view.items() if k != "uri"}
    return CallToolResult(content=[TextContent(type="text", text=text), block], structured_content=facts)
