"""The context pack: a bounded prompt for every model call.

What goes in, in order: the system message (rules, schema, rolling summary, pinned pasted
texts, the attached notebook, the agent state: the same on every call of a turn), then the
recent turns, then the turn being answered.

- The current turn is sent whole: its tool results are what the model is working from.
- The previous ``tool_output_turns - 1`` turns keep their tool calls, with results in a
  compact form (ids, names, shapes, the data-intent note; never rows of a table).
- Older turns keep only the user's words and the final answer; turns folded into the
  rolling summary are not sent at all.
- When the total is over the token budget, whole turns are dropped, oldest first.

Token counts are estimated at four characters per token: exact counts need the model's
tokenizer, which differs per server and is not needed to keep a prompt bounded.

:class:`ContextPack` makes the messages of each model call of one turn: the sections (see
sections.py) from the environment and the agent state, the earlier turns read once.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

from ... import _clock
from ..._text import head_and_tail, model_json
from ...events import ContextUsage
from ...sql import model_spec, source_outline
from ..spec import spec_of
from .previous import previous_turn_line
from .sections import CHAT_RULES, INVENTORY_LIMIT, TWO_KERNELS, system_text

if TYPE_CHECKING:
    from ...agent_state import AgentState, Item
    from ...store import Turn
    from ..environment import ThreadEnvironment


class PackedMemory(Protocol):
    """What a context pack reads of a turn's memory (``memory.TurnMemory``, in the room
    above, which packs never import): the agent state, the turn before, the earlier turns."""

    state: AgentState
    previous: Turn | None
    previous_messages: list[dict[str, Any]]

    def asked_before(self) -> Item | None: ...

    def earlier_turns(self, turns: int) -> dict[int, list[dict[str, Any]]]: ...

#: Keys of a tool result that carry rows or long text, left out of compact results.
_BULKY = {"sample", "stdout", "stderr", "result", "tables", "artifacts", "matches", "cells"}
_TEXT_CAP = 200
#: Text kept whole or longer than the rest: what a result says of itself, a dataset's
#: description where the system message does not hold it (fitted to its own budget when it
#: was made: never cut again), and an error (its traceback's line, the exception and the
#: hint are what the model acts on).
_TEXT_CAPS: dict[str, int | None] = {"shown": None, "message": 600, "intent_note": None}
_LIST_CAP = 12


class ContextBudget(BaseModel):
    """How much of the thread each model call may carry."""

    tokens: int = Field(default=16_000, ge=1_000)
    """The whole prompt, estimated."""
    recent_turns: int = Field(default=8, ge=1)
    """Earlier turns sent as messages (after the rolling summary)."""
    recent_messages: int = Field(default=40, ge=2)
    """Messages of earlier turns, at most."""
    tool_output_turns: int = Field(default=3, ge=1, le=3)
    """Turns, counting the current one, whose tool calls and (compact) results are sent."""
    summary_chars: int = Field(default=4_000, ge=200)
    """The rolling summary, and pasted texts kept verbatim, at most."""
    state_chars: int = Field(default=4_000, ge=200)
    """The agent-state section, at most."""
    notebook_chars: int = Field(default=6_000, ge=200)
    """The outline of the user's notebook the thread is attached to, at most."""
    summarize_turns: int = Field(default=20, ge=2)
    """Fold older turns into the summary once this many are not summarized..."""
    summarize_chars: int = Field(default=5_000, ge=500)
    """...or once their messages hold this many characters."""


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is (four characters each).

    >>> estimate_tokens("x" * 10)
    3
    """
    return math.ceil(len(text) / 4)


def _message_chars(message: dict[str, Any]) -> int:
    size = len(message.get("content") or "")
    for call in message.get("tool_calls") or ():
        size += len(call.get("function", {}).get("arguments", "")) + 40
    return size


def compact_value(value: Any, depth: int = 0) -> Any:
    """A result cut down to ids, names and shapes.

    >>> compact_value({"dataset": "r", "rows": 4, "sample": [{"a": 1}], "columns": [{"name": "a", "type": "INT"}]})
    {'dataset': 'r', 'rows': 4, 'columns': ['a']}
    >>> compact_value({"steps": [{"id": "q1", "result": {"dataset": "r", "sample": [{"a": 1}]}}]})
    {'steps': [{'id': 'q1', 'result': {'dataset': 'r'}}]}

    A result says what it still holds once its rows are cut, and long text keeps its end
    (an error's last line, the last printed table):

    >>> compact_value({"dataset": "r", "rows": 30, "data": [[n] for n in range(30)], "shown": "all 30 rows"})["shown"]
    'the first 12 of 30 rows (an earlier result, shortened here; the DataFrame `r` holds them all)'
    >>> compact_value({"message": "x" * 300 + "KeyError: 'regoin'"})["message"][-18:]
    "KeyError: 'regoin'"

    A question asked is said once by the call's arguments, and the answer that follows shows
    it as the user read it: its result says only that it was asked.

    >>> compact_value({"asked": "Which?", "candidates": ["a", "b"], "question_for_user": "Which?\\n\\n1. a\\n2. b"})
    {'asked': True}
    """
    if isinstance(value, dict) and depth == 0 and "question_for_user" in value and "asked" in value:
        return {"asked": True}
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in _BULKY and depth == 0:
                out.update(_bulky_summary(key, item))
                continue
            if key == "steps" and depth == 0 and isinstance(item, list):  # a plan's: each step's result compacted
                out[key] = [{**s, "result": compact_value(s["result"])} if isinstance(s, dict) and "result" in s
                            else compact_value(s, depth + 1) for s in item]
                continue
            if key == "columns" and isinstance(item, list):
                out[key] = [c.get("name") if isinstance(c, dict) else c for c in item][:40]
                continue
            if key in _TEXT_CAPS and isinstance(item, str):
                out[key] = item if _TEXT_CAPS[key] is None else head_and_tail(item, _TEXT_CAPS[key])
                continue
            out[key] = compact_value(item, depth + 1)
        data = value.get("data")
        if isinstance(data, list) and len(data) > _LIST_CAP and "shown" in value:
            total = value.get("rows") if isinstance(value.get("rows"), int) else len(data)
            holder = f"the DataFrame `{value['dataset']}`" if value.get("dataset") else "the dataset"
            out["shown"] = (f"the first {_LIST_CAP} of {total:,} rows (an earlier result, shortened here; "
                            f"{holder} holds them all)")
        return out
    if isinstance(value, list):
        shown = [compact_value(v, depth + 1) for v in value[:_LIST_CAP]]
        return shown + [f"... {len(value) - _LIST_CAP} more"] if len(value) > _LIST_CAP else shown
    if isinstance(value, str) and len(value) > _TEXT_CAP:
        return head_and_tail(value, _TEXT_CAP)
    return value


#: What an earlier list's entries keep: what names them, and which names hold a dataset (two
#: datasets of one name read alike without it).
_LISTED_KEPT = ("id", "name", "type", "kind", "rows", "replaced_by", "in_kernel_as", "in_kernel")


def _bulky_summary(key: str, item: Any) -> dict[str, Any]:
    if key == "sample":
        return {}
    if key in ("stdout", "stderr", "result") and isinstance(item, str):
        return {key: head_and_tail(item, _TEXT_CAP)} if item else {}
    if key in ("artifacts", "matches", "tables", "cells") and isinstance(item, list):
        names = [
            {k: v for k, v in entry.items() if k in _LISTED_KEPT}
            if isinstance(entry, dict) else entry
            for entry in item[:_LIST_CAP]
        ]
        extra = [f"... {len(item) - _LIST_CAP} more"] if len(item) > _LIST_CAP else []
        return {key: names + extra}
    return {}


def compact_tool_message(message: dict[str, Any], system: str = "") -> dict[str, Any]:
    """A tool message with its result in compact form; a dataset the ``system`` message
    describes already is pointed to there (see :func:`pointed`), before anything is cut."""
    try:
        result = json.loads(message.get("content") or "{}")
    except json.JSONDecodeError:
        return {**message, "content": compact_value(message.get("content") or "")}
    return {**message, "content": model_json(compact_value(pointed(result, system) if system else result))}


def pointed(value: Any, system: str) -> Any:
    """``value`` with a dataset's description (its ``intent_note``) replaced by a pointer
    where ``system`` gives that same whole description of that same artifact: a dataset is
    described once in a request. The comparison is on the whole description, before any
    cut (a cut copy never matches, and would be sent beside the whole one). Where the system
    message does not hold it (its line was cut to fit, the name now holds a newer artifact),
    the result keeps its own.

    >>> result = {"dataset": "rev", "artifact_id": "art_1", "intent_note": "from t; 4 rows"}
    >>> pointed(result, "- `rev` art_1: from t; 4 rows")["intent_note"]
    'described in the system message (`rev`)'
    >>> pointed(result, "- `rev` art_2: from u; 9 rows")["intent_note"]
    'from t; 4 rows'

    A dataset the system message lists under another name now is pointed to by that name:

    >>> pointed(result, "- `total` art_1: from t; 4 rows\\n- `rev` art_2: from u; 9 rows")["intent_note"]
    'described in the system message (`total`)'
    """
    if isinstance(value, list):
        return [pointed(v, system) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: pointed(v, system) for k, v in value.items()}
    note, artifact_id = value.get("intent_note"), value.get("artifact_id")
    if isinstance(note, str) and note and isinstance(artifact_id, str) and f"{artifact_id}: {note}" in system:
        # Under the name the system message lists it by now, which may not be the result's
        # own (the rows fetched again into another name; the name fetched into again).
        listed = re.search(rf"`([^`\n]+)` \(?{re.escape(artifact_id)}: {re.escape(note)}", system)
        out["intent_note"] = f"described in the system message (`{listed.group(1) if listed else artifact_id}`)"
    return out


def answers_only(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A turn without its tool calls: the user's words and the final answer."""
    return [
        m for m in messages
        if m.get("role") == "user" or (m.get("role") == "assistant" and not m.get("tool_calls"))
    ]


@dataclass
class PackedTurn:
    number: int
    messages: list[dict[str, Any]]

    @property
    def chars(self) -> int:
        return sum(_message_chars(m) for m in self.messages)


def well_formed(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages without half of a tool exchange (a turn cut off mid-step leaves a call
    without its result), which chat APIs reject.

    >>> call = {"role": "assistant", "tool_calls": [{"id": "c1"}]}
    >>> [m["role"] for m in well_formed([{"role": "user"}, call])]
    ['user']
    """
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    out: list[dict[str, Any]] = []
    open_calls: set[str] = set()
    for message in messages:
        calls = message.get("tool_calls") or []
        if calls:
            ids = {c.get("id") for c in calls}
            if not ids <= answered:
                continue
            open_calls = set(ids)  # type: ignore[arg-type]
        elif message.get("role") == "tool":
            if message.get("tool_call_id") not in open_calls:
                continue
        out.append(message)
    return out


def _asks(tool: object) -> bool:
    """Whether a call of ``tool`` asked the user a question (its spec's ``asks``)."""
    spec = spec_of(tool) if isinstance(tool, str) else None
    return spec is not None and spec.asks


def without_asked(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages without a ``clarify`` exchange that the turn's answer says again: the
    answer asks the question with its numbered candidates, as the user read it, and the next
    turn's system message quotes it; the call and its ``{"asked": true}`` would make three.

    >>> import jupyter_analyst.agent.tools  # the built-in tools, clarify among them
    >>> call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "clarify"}}]}
    >>> asked = [{"role": "user"}, call, {"role": "tool", "tool_call_id": "c1"}, {"role": "assistant", "content": "1. a"}]
    >>> [m["role"] for m in without_asked(asked)], len(without_asked(asked[:3]))
    (['user', 'assistant'], 3)
    """
    if not messages or messages[-1].get("role") != "assistant" or messages[-1].get("tool_calls"):
        return list(messages)  # no answer says the question again
    dropped = {c.get("id") for m in messages for c in m.get("tool_calls") or ()
               if m.get("role") == "assistant" and not m.get("content")
               and all(_asks((x.get("function") or {}).get("name")) for x in m["tool_calls"])}
    return [m for m in messages
            if not (m.get("tool_calls") and {c.get("id") for c in m["tool_calls"]} <= dropped)
            and not (m.get("role") == "tool" and m.get("tool_call_id") in dropped)]


def shape_prior(turns: dict[int, list[dict[str, Any]]], budget: ContextBudget, system: str = "") -> list[PackedTurn]:
    """Earlier turns in their sent form: compact tool results for the most recent, answers
    only for older ones, and at most ``recent_messages`` messages in all. A dataset the
    ``system`` message describes is pointed to there (said once in a request)."""
    numbers = sorted(turns)
    with_tools = set(numbers[-(budget.tool_output_turns - 1):]) if budget.tool_output_turns > 1 else set()
    shaped = []
    for number in numbers:
        messages = turns[number]
        if number in with_tools:
            messages = [compact_tool_message(m, system) if m.get("role") == "tool" else m
                        for m in well_formed(without_asked(messages))]
        else:
            messages = answers_only(messages)
        shaped.append(PackedTurn(number, messages))
    kept: list[PackedTurn] = []
    count = 0
    for turn in reversed(shaped):
        if count + len(turn.messages) > budget.recent_messages:
            break
        kept.insert(0, turn)
        count += len(turn.messages)
    return kept


def assemble(
    *,
    sections: dict[str, str],
    prior: list[PackedTurn],
    current: Sequence[dict[str, Any]],
    budget: ContextBudget,
    call: int,
    summarized_through: int,
    started: float | None = None,
) -> tuple[list[dict[str, Any]], ContextUsage]:
    """The messages of one call, within the token budget, and what they cost."""
    started = time.perf_counter() if started is None else started
    system = "".join(sections.values())
    fixed = estimate_tokens(system) + sum(estimate_tokens(json.dumps(m, default=str)) for m in current)
    kept = list(prior)
    history_tokens = [math.ceil(t.chars / 4) + 4 * len(t.messages) for t in kept]
    dropped = 0
    while kept and fixed + sum(history_tokens) > budget.tokens:
        kept.pop(0)
        history_tokens.pop(0)
        dropped += 1
    messages = [{"role": "system", "content": system}]
    for turn in kept:
        messages.extend(turn.messages)
    messages.extend(current)
    parts = {name: estimate_tokens(text) for name, text in sections.items()}
    parts["history"] = sum(history_tokens)
    parts["current"] = fixed - estimate_tokens(system)
    report = ContextUsage(
        call=call,
        tokens=sum(parts.values()),
        budget=budget.tokens,
        parts=parts,
        messages=len(messages),
        turns=[t.number for t in kept],
        dropped_turns=dropped,
        summarized_through=summarized_through,
        assembly_ms=round((time.perf_counter() - started) * 1000, 3),
    )
    return messages, report


#: The system message's sections whose numbers the model was given, not ones it stated
#: before (see :meth:`ContextPack.given`).
GIVEN_SECTIONS = ("rules", "team", "pinned", "notebook")


class ContextPack:
    """The prompts of one turn: a bounded set of messages for each model call."""

    def __init__(
        self, environment: ThreadEnvironment, memory: PackedMemory, *, budget: ContextBudget, active_ttl_s: float
    ) -> None:
        self.environment = environment
        self.memory = memory
        self.budget = budget
        self.active_ttl_s = active_ttl_s
        # The turn's date, as it began: "this year" or "last month" count from it on every
        # call of the turn, even one after midnight. Prompt text only: no step key reads it.
        self.began = _clock.now()
        self._earlier: dict[int, list[dict[str, Any]]] = {}
        self._prior: list[PackedTurn] = []
        self._sections: dict[str, str] | None = None
        self._described: list[PackedTurn] | None = None

    def load(self) -> None:
        """Read the earlier turns to send (once per turn, after the memory is opened).
        Blocking: call it off the event loop."""
        self._earlier = self.memory.earlier_turns(self.budget.recent_turns)
        self._prior = shape_prior(self._earlier, self.budget)
        self._described = None

    def _system(self) -> dict[str, str]:
        """The system message's sections, made at the turn's first call and the same on all
        its calls: a provider's prompt cache keeps the whole prefix, and what the turn's own
        steps established is in their results, which follow."""
        if self._sections is None:
            source, state, memory = self.environment.source, self.memory.state, self.memory
            artifacts, thread_id = self.environment.artifacts, self.environment.thread_id
            previous = previous_turn_line(memory.previous, memory.previous_messages, memory.asked_before())
            notebook = ""
            if self.environment.attached is not None:
                from ...notebooks import context_section

                notebook = context_section(self.environment.attached, self.budget.notebook_chars)
                if self.environment.proposals is not None and not self.environment.attached.problem:
                    notebook += TWO_KERNELS + "\n"
                if self.environment.proposal_notes:
                    notebook += self.environment.proposal_notes + "\n"
            self._sections = system_text(
                dialect=source.dialect,
                # The source's name, never its path: the model provider sees what the model is sent.
                source_label=f"{source.kind} {model_spec(source.spec)}",
                source_spec=model_spec(source.spec),
                schema=source.schema(),
                outline=source_outline(source),
                artifacts=artifacts.recent(thread_id, INVENTORY_LIMIT),
                artifact_total=artifacts.count(thread_id),
                state=state,
                ttl_s=self.active_ttl_s,
                state_chars=self.budget.state_chars,
                summary_chars=self.budget.summary_chars,
                previous=previous,
                notebook=notebook,
                team=self.environment.team.prompt_section() if self.environment.team is not None else "",
                today=self.began.date(),
            )
        return self._sections

    def given(self) -> str:
        """What the system message states as fact rather than as the model's earlier words: the
        rules with the data source's tables and their row counts, the team's context, texts the
        user pasted, the attached notebook. Not the rolling summary nor the agent state, which
        carry earlier answers' numbers (an unsupported one would then support itself). Blocking
        on the turn's first call: call it off the event loop."""
        sections = self._system()
        return "\n".join(sections.get(name, "") for name in GIVEN_SECTIONS)

    def messages(
        self, call: int, current: Sequence[dict[str, Any]], *, chat: bool = False
    ) -> tuple[list[dict[str, Any]], ContextUsage]:
        """The messages of model call number ``call`` and what they cost. Blocking (it reads
        the source's schema and the inventory): call it off the event loop."""
        started = time.perf_counter()
        state = self.memory.state
        if chat:
            sections = {"rules": CHAT_RULES.format(source=model_spec(self.environment.source.spec))}
            prior = [PackedTurn(t.number, answers_only(t.messages)) for t in self._prior]
        else:
            sections = self._system()
            if self._described is None:  # the same system message on every call: shaped once
                self._described = shape_prior(self._earlier, self.budget, "".join(sections.values()))
            prior = self._described
        return assemble(
            sections=sections, prior=prior, current=current, budget=self.budget, call=call,
            summarized_through=state.summary.through_turn, started=started,
        )
