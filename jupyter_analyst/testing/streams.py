"""Reading an event stream as a client does, each frame timed as it arrives (tests and
benchmarks against servers in other processes)."""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Frame:
    """One SSE frame: its ``id:`` line, its event, and the client's clock at its arrival."""

    id: str | None
    event: dict[str, Any]
    arrived: float
    """``time.time()`` when the frame's blank line was read."""


class StreamRefused(Exception):
    """The server answered the stream's request with an error status."""

    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"{status}: {body[:300]!r}")
        self.status = status
        self.body = body


def read_stream(url: str, *, method: str = "GET", headers: dict[str, str] | None = None, body: Any = None,
                on_frame: Callable[[Frame], None] | None = None, timeout: float = 300.0,
                give_up_after: float | None = None) -> list[Frame]:
    """The frames of the stream at ``url`` until the server ends it (``StreamRefused`` on a
    non-2xx answer); ``on_frame`` sees each one as it arrives.

    ``give_up_after`` seconds, the frames so far are returned even if the stream goes on
    (checked as lines arrive: heartbeats keep a quiet stream's socket from timing out).
    """
    give_up = None if give_up_after is None else time.monotonic() + give_up_after
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    frames: list[Frame] = []
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers={"Accept": "text/event-stream", "Content-Type": "application/json", **(headers or {})})
        resp = conn.getresponse()
        if resp.status >= 300:
            raise StreamRefused(resp.status, resp.read())
        frame_id: str | None = None
        data: list[str] = []
        while line := resp.readline():
            text = line.decode().rstrip("\r\n")
            if text.startswith("data: "):
                data.append(text[6:])
            elif text.startswith("id: "):
                frame_id = text[4:]
            elif not text:
                if data:
                    frame = Frame(frame_id, json.loads("\n".join(data)), time.time())
                    frames.append(frame)
                    if on_frame is not None:
                        on_frame(frame)
                frame_id, data = None, []
            if give_up is not None and time.monotonic() > give_up:
                break
    finally:
        conn.close()
    return frames
