"""A model's reply: its answer text and tool calls, and the assembly of calls from a stream.

Servers disagree on how they stream tool calls: some send a call's id only in its first
chunk, some repeat it, some change it halfway, some never send one. Calls are therefore
assembled by their ``index`` and reconciled by id (the first id seen wins), and their names
and ids made valid Unicode here (argument text is left as sent, for the argument normaliser
to judge).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..._text import valid_text

if TYPE_CHECKING:
    from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall


class ToolCall(BaseModel):
    """One tool call as the model sent it (arguments still raw text)."""

    id: str
    name: str
    arguments: str
    cut_short: str | None = None
    """Why the reply that carried it may have been cut (its arguments then incomplete)."""


class ModelReply(BaseModel):
    """One complete reply: its answer text and its tool calls.

    ``text`` is the answer only: a reasoning model's monologue is in ``reasoning`` (never
    shown as the answer, never sent back), and calls the model wrote as text are in
    ``tool_calls`` (``calls_in_text``).
    """

    text: str
    tool_calls: list[ToolCall]
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    reasoning: str = ""
    refusal: str = ""
    """What the model said when it declined (``delta.refusal``)."""
    calls_in_text: bool = False

    @property
    def cut_short(self) -> str | None:
        """Why the reply may be incomplete, in words; ``None`` when it ended as replies do.

        >>> ModelReply(text="a", tool_calls=[], finish_reason="length").cut_short
        'the model reached its output token limit'
        >>> ModelReply(text="a", tool_calls=[], finish_reason="stop").cut_short is None
        True
        """
        match self.finish_reason:
            case "length":
                return "the model reached its output token limit"
            case "content_filter":
                return "the provider's content filter stopped the reply"
            case None:
                return "the reply ended without saying it was finished"
        return None


@dataclass
class _Partial:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def attr_or_key(obj: Any, key: str) -> Any:
    """A field of a streamed object, as the SDK's object or as a plain dict."""
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


class ToolCallAssembler:
    """Builds whole tool calls from streamed deltas.

    >>> a = ToolCallAssembler()
    >>> a.feed([{"index": 0, "id": "call_1", "function": {"name": "run_sql", "arguments": '{"sql": '}}])
    >>> a.feed([{"index": 0, "id": "other", "function": {"arguments": '"SELECT 1"}'}}])
    >>> a.calls()
    [ToolCall(id='call_1', name='run_sql', arguments='{"sql": "SELECT 1"}', cut_short=None)]
    """

    def __init__(self) -> None:
        self._by_index: dict[int, _Partial] = {}
        self._index_of_id: dict[str, int] = {}
        self._last_index: int | None = None

    def feed(self, deltas: Iterable[ChoiceDeltaToolCall | dict[str, Any]] | None) -> None:
        """Add the ``delta.tool_calls`` items of one streamed chunk."""
        for delta in deltas or ():
            index = attr_or_key(delta, "index")
            call_id = attr_or_key(delta, "id") or ""
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
            function = attr_or_key(delta, "function")
            if function is not None:
                name = attr_or_key(function, "name")
                if name:
                    # Most servers send the name once, some repeat it whole, a few send it in pieces.
                    partial.name = name if not partial.name or partial.name == name else partial.name + name
                arguments = attr_or_key(function, "arguments")
                if isinstance(arguments, dict | list):
                    # Ollama sends the arguments as a JSON object, not as text.
                    arguments = json.dumps(arguments, ensure_ascii=False)
                if arguments and isinstance(arguments, str):
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
