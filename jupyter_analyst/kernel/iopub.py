"""The kernel's output messages, read as untrusted input: shapes checked, sizes capped as they come.

Everything on the kernel's IOPub channel can be written by the model's code, which runs in
the kernel and holds the session key: any message type, any JSON in any field, displays of
any size, a traceback of 30 MB. So each message is checked before it is used, and what an
execution keeps is capped *while its messages arrive*:

* a message whose frames, header or content do not have the protocol's shape (a content that
  is not an object, a ``text`` that is not a string, an image that is not base64 of a PNG,
  an SVG that is not text) is dropped, and the execution's notes say how many were;
* displays and results count against the step's byte and figure caps as they arrive
  (:class:`OutputCaps`); one past a cap is dropped before its content is even parsed, and
  the notes say how many and how large. So the host holds at most the caps' worth of a
  step's output, never what the kernel chose to send;
* streams keep ``text_cap`` characters each (the rest is counted); an error's name, value
  and traceback share one such cap;
* the number of outputs kept is capped too, so a million one-character messages cost no
  more than one.

The notes go into the step's stderr output, so the model and the audit notebook both see
what was dropped. No message reaches this code past ``SandboxPolicy.message_mb``: a relay
between the kernel's sockets and the host's cuts it while it streams (relay.py).
"""

from __future__ import annotations

import binascii
import hmac
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError

from .figure_names import figure_label
from .outputs import MB, OutputCaps

DELIM = b"<IDS|MSG>"
#: The most bytes a message's header, parent header or metadata may have.
HEADER_BYTES = 64 * 1024
#: The most outputs (streams, displays, errors) one execution keeps.
MAX_OUTPUTS = 2_000
#: The longest exception name kept.
ENAME_CHARS = 200
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean(text: str) -> str:
    """Text safe to store and encode: a lone surrogate (valid in JSON, not in UTF-8) becomes U+FFFD.

    >>> clean("a\\ud800b")
    'a\\ufffdb'
    """
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


# ------------------------------------------------------------------ one message


@dataclass
class Inbound:
    """One message from the kernel: its type, its parent's id, and its content, parsed on demand.

    ``content()`` checks the signature and parses the JSON; ``None`` when either fails, or
    when the content is not a JSON object. ``size`` is the content's bytes (with buffers),
    known before it is parsed.
    """

    kind: str
    parent: str | None
    size: int
    _raw: Any = None
    _parsed: Any = None
    _check: Any = None

    def content(self) -> dict[str, Any] | None:
        if self._parsed is None and self._raw is not None:
            raw, self._raw = self._raw, None
            if self._check is not None and not self._check(raw):
                return None
            try:
                self._parsed = json.loads(str(raw, "utf-8"))  # one copy: the text
            except (ValueError, UnicodeDecodeError, RecursionError):
                return None
        return self._parsed if isinstance(self._parsed, dict) else None

    @classmethod
    def from_dict(cls, msg: Any) -> Inbound | None:
        """A message a client already parsed (a gateway's, over its websocket); ``None`` when
        its envelope is not a message's."""
        if not isinstance(msg, Mapping):
            return None
        header, parent = msg.get("header"), msg.get("parent_header")
        kind = msg.get("msg_type") or (header.get("msg_type") if isinstance(header, Mapping) else None)
        if not isinstance(kind, str):
            return None
        content = msg.get("content")
        return cls(kind=kind, parent=_parent_id(parent), size=_size_of(content), _parsed=content)


def decode(frames: list[Any], session: Any) -> Inbound | None:
    """A message from its ZMQ frames (``zmq.Frame`` or bytes); ``None`` when it is malformed.

    Only the header and the parent header are parsed here; the content waits until it is
    wanted (and within its caps), and its signature is checked then.
    """
    at = next((i for i, f in enumerate(frames) if len(f) == len(DELIM) and bytes(f) == DELIM), None)
    if at is None or len(frames) < at + 6:
        return None
    signature, header_b, parent_b, metadata_b, content_b = (memoryview(f) for f in frames[at + 1: at + 6])
    if max(len(header_b), len(parent_b), len(metadata_b)) > HEADER_BYTES:
        return None
    try:
        header, parent = json.loads(bytes(header_b)), json.loads(bytes(parent_b))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(header, dict) or not isinstance(header.get("msg_type"), str):
        return None
    size = len(content_b) + sum(len(f) for f in frames[at + 6:])
    auth = getattr(session, "auth", None)

    def signed(content: Any) -> bool:
        if auth is None:
            return True
        mac = auth.copy()
        for part in (header_b, parent_b, metadata_b, content):
            mac.update(part)
        return hmac.compare_digest(mac.hexdigest().encode(), bytes(signature))

    return Inbound(kind=header["msg_type"], parent=_parent_id(parent), size=size, _raw=content_b, _check=signed)


def _parent_id(parent: Any) -> str | None:
    if isinstance(parent, Mapping):
        msg_id = parent.get("msg_id")
        return msg_id if isinstance(msg_id, str) else None
    return None


def _size_of(value: Any, depth: int = 0) -> int:
    """Roughly the bytes ``value`` takes as JSON (strings, keys and containers counted)."""
    if isinstance(value, str):
        return len(value)
    if depth > 50:
        return 0
    if isinstance(value, Mapping):
        return sum(len(str(k)) + _size_of(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple):
        return sum(_size_of(v, depth + 1) for v in value)
    return 8


# ------------------------------------------------------------------ contents


class _Content(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Stream(_Content):
    name: Literal["stdout", "stderr"]
    text: StrictStr


class Display(_Content):
    data: dict[StrictStr, Any]
    metadata: dict[StrictStr, Any] = {}
    execution_count: StrictInt | None = None


class Error(_Content):
    ename: StrictStr
    evalue: StrictStr
    traceback: list[StrictStr] = []


class Status(_Content):
    execution_state: StrictStr


class Input(_Content):
    execution_count: StrictInt | None = None


def parse(model: type[_Content], message: Inbound) -> Any:
    """The message's content as ``model``; ``None`` when it does not have that shape."""
    content = message.content()
    if content is None:
        return None
    try:
        return model.model_validate(content)
    except ValidationError:
        return None


def state_of(message: Inbound) -> str | None:
    """The execution state a ``status`` message reports (``None`` for anything else)."""
    if message.kind != "status":
        return None
    status = parse(Status, message)
    return status.execution_state if status is not None else None


# ------------------------------------------------------------------ one execution


class Capped:
    """A text buffer that keeps at most ``cap`` characters and counts the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0

    def add(self, text: str) -> str:
        room = self.cap - self.size
        kept = text[: max(room, 0)]
        self.dropped += len(text) - len(kept)
        if kept:
            self.parts.append(kept)
            self.size += len(kept)
        return kept

    def text(self) -> str:
        out = "".join(self.parts)
        if self.dropped:
            out += f"\n[output truncated: {self.dropped} characters not shown]"
        return out


class ErrorInfo(BaseModel):
    """An exception raised by the code (its text capped: see :class:`Collector`)."""

    ename: str
    evalue: str
    traceback: list[str] = []

    def short(self, lines: int = 6) -> str:
        """The error and the last lines of its traceback, without colour codes."""
        tail = [t for t in self.traceback[-lines:] if t.strip()]
        head = f"{self.ename}: {self.evalue}"
        return head if not tail else head + "\n" + "\n".join(tail)


@dataclass
class Collector:
    """What one execution's messages add up to, within its caps.

    Args:
        text_cap: characters kept of stdout, of stderr, and of the errors together.
        caps: the step's caps; displays count against ``step_bytes`` (in base64, as they
            come: 4/3 of it) and figures against ``step_files``.
    """

    text_cap: int
    caps: OutputCaps
    stdout: Capped = field(init=False)
    stderr: Capped = field(init=False)
    errors: Capped = field(init=False)
    outputs: list[dict[str, Any]] = field(default_factory=list)
    images: list[tuple[str, bytes]] = field(default_factory=list)
    figure_labels: list[str] = field(default_factory=list)
    """Each image's label from its display's metadata (``figure_names.py``; empty: none)."""
    result: str | None = None
    error: ErrorInfo | None = None
    execution_count: int | None = None
    display_bytes: int = 0
    dropped_displays: int = 0
    dropped_bytes: int = 0
    malformed: dict[str, int] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    dropped_outputs: int = 0
    on_stream: Callable[[str, str], None] | None = None
    """Told each piece of stdout or stderr as it comes (``name``, cleaned text), before the
    caps: whoever shows a running step live bounds what it shows itself."""

    def __post_init__(self) -> None:
        self.stdout, self.stderr, self.errors = Capped(self.text_cap), Capped(self.text_cap), Capped(self.text_cap)
        self._last_stream: dict[str, int] = {}

    @property
    def display_cap(self) -> int:
        return self.caps.step_bytes * 4 // 3

    def take(self, message: Inbound) -> None:
        """Add one message of this execution (a status or an input is the caller's)."""
        kind = message.kind
        if kind == "stream":
            self._stream(message)
        elif kind in ("display_data", "update_display_data", "execute_result"):
            self._display(message)
        elif kind == "error":
            self._error(message)
        elif kind == "execute_input":
            parsed = parse(Input, message)
            if parsed is None:
                self._malformed(kind)
            elif parsed.execution_count is not None:
                self.execution_count = parsed.execution_count

    def _malformed(self, kind: str) -> None:
        self.malformed[kind] = self.malformed.get(kind, 0) + 1

    def _stream(self, message: Inbound) -> None:
        parsed = parse(Stream, message)
        if parsed is None:
            self._malformed("stream")
            return
        text = clean(parsed.text)
        if self.on_stream is not None and text:
            self.on_stream("stdout" if parsed.name == "stdout" else "stderr", text)
        kept = (self.stdout if parsed.name == "stdout" else self.stderr).add(text)
        if kept:
            self.append_stream(parsed.name, kept)

    def append_stream(self, name: str, text: str) -> None:
        """Add ``text`` to the outputs' stream ``name`` (after the last output when it is
        that stream, else as a new output, or the last one of that name past the cap)."""
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last.get("output_type") == "stream" and last.get("name") == name:
            last["text"] += text
        elif len(self.outputs) < MAX_OUTPUTS:
            self._last_stream[name] = len(self.outputs)
            self.outputs.append({"output_type": "stream", "name": name, "text": text})
        elif name in self._last_stream:
            self.outputs[self._last_stream[name]]["text"] += text
        else:
            self.dropped_outputs += 1

    def _display(self, message: Inbound) -> None:
        # Decided on the size the message has, before its content is parsed.
        if (self.display_bytes + message.size > self.display_cap or len(self.outputs) >= MAX_OUTPUTS):
            self.dropped_displays += 1
            self.dropped_bytes += message.size
            return
        parsed = parse(Display, message)
        if parsed is None:
            self._malformed(message.kind)
            return
        self.display_bytes += message.size
        data: dict[str, Any] = {}
        for mime, value in parsed.data.items():
            if mime == "image/png":
                self._png(value, parsed.metadata.get(mime))
            elif mime == "image/svg+xml":
                self._svg(value, parsed.metadata.get(mime))
            else:
                kept = _bundle_value(mime, value)
                if kept is None:
                    self.refused.append(f"a display's {clean(mime)[:80]} that is neither text nor JSON")
                else:
                    data[clean(mime)] = kept
        metadata = {clean(k): v for k, v in parsed.metadata.items() if _size_of(v) < HEADER_BYTES}
        if message.kind == "execute_result":
            plain = data.get("text/plain")
            self.result = plain if isinstance(plain, str) else self.result
            self.execution_count = parsed.execution_count
            self.outputs.append({"output_type": "execute_result", "data": data, "metadata": metadata,
                                 "execution_count": parsed.execution_count})
        elif data:
            self.outputs.append({"output_type": "display_data", "data": data, "metadata": metadata})

    def _figure(self, mime: str, content: bytes, metadata: Any = None) -> None:
        if len(self.images) >= self.caps.step_files:
            self.dropped_displays += 1
            self.dropped_bytes += len(content)
            return
        self.images.append((mime, content))
        self.figure_labels.append(figure_label(metadata))

    def _png(self, value: Any, metadata: Any = None) -> None:
        self._take_figure("image/png", value, metadata)

    def _svg(self, value: Any, metadata: Any = None) -> None:
        self._take_figure("image/svg+xml", value, metadata)

    def _take_figure(self, mime: str, value: Any, metadata: Any = None) -> None:
        content, refusal = figure_of(mime, value)
        if content is None:
            self.refused.append(refusal or f"a display's {mime} that is not one")
        else:
            self._figure(mime, content, metadata)

    def _error(self, message: Inbound) -> None:
        parsed = parse(Error, message)
        if parsed is None:
            self._malformed("error")
            return
        ename = clean(parsed.ename)[:ENAME_CHARS]
        # The value and the traceback share the cap; the value takes at most half of it.
        value = clean(parsed.evalue)
        half = max(self.errors.cap - self.errors.size, 0) // 2
        evalue = self.errors.add(value[:half])
        self.errors.dropped += len(value) - len(value[:half])
        # The end of a traceback is where the error is: kept first, from the last line up.
        kept: list[str] = []
        for line in reversed(parsed.traceback):
            if self.errors.size >= self.errors.cap:
                self.errors.dropped += len(line)
                continue
            part = self.errors.add(clean(line))
            if part:
                kept.append(part)
        kept.reverse()
        if self.errors.dropped:
            note = f"[error truncated: {self.errors.dropped} characters not shown]"
            if kept:
                kept.insert(0, note)
            else:
                evalue += "\n" + note
        self.error = ErrorInfo(ename=ename, evalue=evalue, traceback=[_ANSI.sub("", t) for t in kept])
        if len(self.outputs) < MAX_OUTPUTS:
            self.outputs.append({"output_type": "error", "ename": ename, "evalue": evalue, "traceback": kept})

    def notes(self) -> list[str]:
        """What was dropped or refused, one line each (empty when nothing was)."""
        out = []
        if self.dropped_displays:
            out.append(f"{self.dropped_displays} display(s) ({_mb(self.dropped_bytes)}) past the step's cap of "
                       f"{_mb(self.caps.step_bytes)} in {self.caps.step_files} figures were not kept")
        for kind, n in sorted(self.malformed.items()):
            out.append(f"{n} malformed {clean(kind)[:40]} message(s) from the kernel were ignored")
        for what in sorted(set(self.refused)):
            n = self.refused.count(what)
            out.append(f"{what} was refused" + (f" ({n} times)" if n > 1 else ""))
        if self.dropped_outputs:
            out.append(f"{self.dropped_outputs} output(s) past the {MAX_OUTPUTS} an execution keeps were not kept")
        return out

    def finish(self, extra_notes: list[str] = ()) -> list[str]:
        """Close the streams (saying what was cut) and add the notes to stderr; the notes."""
        for name, sink in (("stdout", self.stdout), ("stderr", self.stderr)):
            if sink.dropped:
                self.append_stream(name, f"\n[output truncated: {sink.dropped} characters not shown]")
        notes = [*self.notes(), *extra_notes]
        if notes:
            self.append_stream("stderr", "".join(f"[{n}]\n" for n in notes))
        return notes


def figure_of(mime: str, value: Any) -> tuple[bytes | None, str | None]:
    """A display's figure as bytes, or why it is none: a PNG is base64 text of a PNG, an SVG
    is text (or a list of lines).

    >>> figure_of("image/png", "iVBORw0KGgo=")
    (b'\\x89PNG\\r\\n\\x1a\\n', None)
    >>> figure_of("image/png", "not base64!"), figure_of("image/svg+xml", {"x": 1})
    ((None, 'a PNG whose base64 does not decode'), (None, 'an SVG that is not text'))
    """
    if mime == "image/png":
        if not isinstance(value, str):
            return None, "a PNG that is not base64 text"
        try:
            # From the text itself, without an ASCII copy first; line breaks are skipped.
            content = binascii.a2b_base64(value)
        except (binascii.Error, ValueError):
            return None, "a PNG whose base64 does not decode"
        if not content.startswith(PNG_SIGNATURE):
            return None, "an image/png that is not a PNG"
        return content, None
    text = _text(value)
    if text is None:
        return None, "an SVG that is not text"
    return clean(text).encode(), None


def displayed_images(data: Mapping[str, Any]) -> list[tuple[str, bytes]]:
    """The figures of one display's mime bundle, as ``(mime, bytes)``, taken as the agent's
    steps take them (:class:`Collector`), so that ``verify``'s re-runs find the same bytes."""
    found = []
    for mime, value in data.items():
        if mime in ("image/png", "image/svg+xml"):
            content, _ = figure_of(mime, value)
            if content is not None:
                found.append((mime, content))
    return found


def _text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "".join(value)
    return None


def _bundle_value(mime: str, value: Any) -> Any:
    """A display's value as a notebook keeps it: text, or JSON for a ``+json`` type."""
    text = _text(value)
    if text is not None:
        return clean(text)
    if mime.endswith("json") and isinstance(value, dict | list):
        return value
    return None


def _mb(size: int) -> str:
    return f"{size / MB:.0f} MB" if size >= MB else f"{size} bytes"
