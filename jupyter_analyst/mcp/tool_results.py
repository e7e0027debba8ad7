"""A :class:`~.engine.Reply` as an MCP tool result, the same in this product's server and in
Jupyter's (whose tools return it as it is): the text once (never the text and the facts
JSON-encoded together), the facts as structured content, ``isError`` when the step failed, a
chart's PNG as an image, and every artifact as a resource link with its MIME type.
"""

from __future__ import annotations

import base64

from mcp_types import CallToolResult, ContentBlock, ImageContent, ResourceLink, TextContent

from .analyst_tools import Reply


def tool_result(reply: Reply) -> CallToolResult:
    content: list[ContentBlock] = [TextContent(type="text", text=reply.text)]
    content += [ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime)
                for data, mime in reply.images]
    content += [ResourceLink(type="resource_link", uri=view["uri"], name=view["name"], mime_type=view["mime"],
                             size=view["size"], description=f"{view['type']} of thread {reply.data.get('thread')}")
                for view in reply.data.get("artifacts") or []]
    return CallToolResult(content=content, structured_content=reply.data, is_error=reply.error)
