"""What of a model's text is its answer: the monologue and the calls written as text taken out.

Local models do not always use the API's fields. A reasoning model (Qwen3, DeepSeek-R1,
QwQ) writes its monologue in the content between ``<think>`` and ``</think>``; with a chat
template that opens the block itself, only the closing tag reaches the client. A model whose
server does not parse tool calls (vLLM without ``--tool-call-parser``, llama.cpp without
``--jinja``) writes them as text: ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``
in the Hermes and Qwen templates, a bare ``{"name": ..., "parameters": ...}`` object (after
an optional ``<|python_tag|>``) in Llama 3's. Left in the text, the monologue becomes the
answer and is sent back on every later turn, and a call becomes an answer made of markup.

:func:`split_reply` reads a whole reply; :class:`AnswerStream` decides, while the text
streams, which part may be shown to the user now.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
PYTHON_TAG = "<|python_tag|>"
_TAGS = (THINK_OPEN, THINK_CLOSE, CALL_OPEN, CALL_CLOSE)
_BLOCK = re.compile(r"<think>(.*?)(?:</think>|\Z)|<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)


@dataclass
class TextCall:
    """A tool call the model wrote as text: its name and its arguments as JSON text."""

    name: str
    arguments: str


@dataclass
class SplitReply:
    """A reply's text taken apart."""

    answer: str
    thinking: str = ""
    calls: list[TextCall] = field(default_factory=list)


def split_reply(text: str, tools: Collection[str] = ()) -> SplitReply:
    """The answer, the monologue and the calls written as text of a whole reply.

    A bare JSON object is read as a call only when the whole answer is such objects, each
    naming one of ``tools`` (an answer that merely shows JSON stays an answer).

    >>> split_reply("<think>The user wants a sum.</think>The total is 42.")
    SplitReply(answer='The total is 42.', thinking='The user wants a sum.', calls=[])
    >>> split_reply("weighing it up</think>\\n\\nYes.").answer
    'Yes.'
    >>> r = split_reply('Let me look.\\n<tool_call>\\n{"name": "run_sql", "arguments": {"sql": "SELECT 1"}}\\n</tool_call>')
    >>> r.answer, r.calls
    ('Let me look.', [TextCall(name='run_sql', arguments='{"sql": "SELECT 1"}')])
    >>> split_reply('<|python_tag|>{"name": "list_tables", "parameters": {}}', ["list_tables"]).calls
    [TextCall(name='list_tables', arguments='{}')]
    >>> split_reply('{"name": "x", "parameters": {}}', ["list_tables"]).answer
    '{"name": "x", "parameters": {}}'
    """
    thinking: list[str] = []
    calls: list[TextCall] = []
    head, closed, tail = text.partition(THINK_CLOSE)
    if closed and THINK_OPEN not in head:
        # The template opened the block: everything before the first close is the monologue.
        thinking.append(head)
        text = tail

    def take(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            thinking.append(match.group(1))
        else:
            calls.append(_call_from_block(match.group(2)))
        return ""

    answer = _BLOCK.sub(take, text).strip()
    if not calls and tools:
        bare = _bare_calls(answer, tools)
        if bare:
            calls, answer = bare, ""
    return SplitReply(answer=answer, thinking="\n".join(t.strip() for t in thinking if t.strip()), calls=calls)


def _call_from_block(block: str) -> TextCall:
    """The call inside ``<tool_call>...</tool_call>``; unreadable JSON stays as the arguments,
    so that the model is told its call was not valid JSON.

    >>> _call_from_block('{"name": "run_python", "arguments": "{\\\\"code\\\\": \\\\"1\\\\"}"}')
    TextCall(name='run_python', arguments='{"code": "1"}')
    >>> _call_from_block('{"name": "run_sql", "arguments": {"sql": "SELECT')
    TextCall(name='run_sql', arguments='{"name": "run_sql", "arguments": {"sql": "SELECT')
    """
    block = block.strip()
    try:
        value = json.loads(block)
    except ValueError:
        named = re.search(r'"name"\s*:\s*"([^"\\]{1,200})"', block)
        return TextCall(name=named.group(1) if named else "", arguments=block)
    if isinstance(value, dict):
        call = _as_call(value)
        if call is not None:
            return call
    return TextCall(name="", arguments=block)


def _as_call(value: dict[str, Any]) -> TextCall | None:
    """``{"name": ..., "arguments" | "parameters": ...}`` as a call, else ``None``."""
    name = value.get("name")
    if not isinstance(name, str) or not set(value) <= {"name", "arguments", "parameters", "type", "id"}:
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    return TextCall(name=name, arguments=text)


def _bare_calls(answer: str, tools: Collection[str]) -> list[TextCall]:
    """The calls an answer made only of ``{"name": ..., "parameters": ...}`` objects holds
    (separated by blanks or ``;``), each naming a tool; else none."""
    rest = answer.removeprefix(PYTHON_TAG).strip()
    if not rest.startswith("{"):
        return []
    decoder = json.JSONDecoder()
    calls: list[TextCall] = []
    while rest:
        try:
            value, end = decoder.raw_decode(rest)
        except ValueError:
            return []
        call = _as_call(value) if isinstance(value, dict) else None
        if call is None or call.name not in tools:
            return []
        calls.append(call)
        rest = rest[end:].lstrip().lstrip(";").lstrip()
        rest = rest.removeprefix(PYTHON_TAG).lstrip()
    return calls


class AnswerStream:
    """Which part of the text streamed so far may be shown as the answer.

    Shown text is never taken back: what could still turn out to be a monologue or a call
    (a tag cut between two chunks, a reply that begins like a bare JSON call) waits until
    it is known.

    >>> s = AnswerStream()
    >>> [s.feed(p) for p in ["<thi", "nk>hmm</th", "ink>The ", "answer <tool", "_call>{}</tool_call>."]]
    ['', '', 'The ', 'answer ', '.']
    >>> s.thinking
    True
    >>> s = AnswerStream(); s.feed('{"name": "list_tables"'), s.finish()
    ('', '{"name": "list_tables"')
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._shown = 0
        self._visible = ""
        #: Whether the model has been seen thinking (a ``<think>`` block in the text).
        self.thinking = False

    @property
    def visible(self) -> str:
        """The answer text that may be shown so far."""
        return self._visible

    def feed(self, piece: str) -> str:
        """The new text that may be shown after ``piece``."""
        self._text.append(piece)
        return self._advance(final=False)

    def finish(self) -> str:
        """What was held back and turned out to be answer text, at the end of the reply."""
        return self._advance(final=True)

    def _advance(self, *, final: bool) -> str:
        text = "".join(self._text)
        if THINK_OPEN in text or THINK_CLOSE in text:
            self.thinking = True
        visible = _visible(text, final=final)
        if not visible.startswith(self._visible):
            return ""  # a later tag changed what came before (an orphan </think>): shown stays shown
        new, self._visible = visible[len(self._visible):], visible
        return new


def _visible(text: str, *, final: bool) -> str:
    """The answer text of a partial reply that is safe to show.

    >>> _visible("Hello <to", final=False), _visible("Hello <to", final=True)
    ('Hello ', 'Hello <to')
    >>> _visible("<think>still thinking", final=False)
    ''
    """
    head, closed, tail = text.partition(THINK_CLOSE)
    if closed and THINK_OPEN not in head:
        text = tail
    visible = _BLOCK.sub("", text).lstrip()  # the blank line after a monologue is not the answer's
    if final:
        return visible.strip() and visible
    # An open block's start was cut by the regex to the end; a tag cut in two waits.
    for tag in _TAGS:
        for size in range(len(tag) - 1, 0, -1):
            if visible.endswith(tag[:size]):
                visible = visible[: -size]
                break
    lead = visible.lstrip()
    if lead.startswith("{") or (lead and lead[: len(PYTHON_TAG)] == PYTHON_TAG[: len(lead)]):
        return ""  # perhaps a bare JSON call: known at the end
    return visible
