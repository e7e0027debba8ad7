"""The end-of-turn summarizer: one cheaper model call, after ``done``, that returns deltas.

When a turn has finished (its answer shown, ``turn_ended`` sent), a separate model call
reads the agent state and the turn and proposes changes to the state: assumptions, items,
hypotheses, never free text. Once the thread has more unsummarized turns, or characters,
than the budget allows, the same call also folds the older turns into the rolling summary,
keeping ids, names, user decisions and step results.

It runs off the hot path: the next turn can start while it is still waiting for the
model, and its delta is applied in one transaction on top of whatever the next turn has
changed meanwhile. A failure (no answer, not JSON, an invalid delta) is recorded as a
``memory`` event and changes nothing.

The prompt and the reading of the reply are pure; the state and the messages are read and
the delta applied through the thread's :class:`ThreadMemory`, never the store itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from ..._text import find_lone_surrogate
from ...agent_state import (
    AgentState,
    RollingSummary,
    StateDelta,
    StatePatch,
    parse_delta,
)
from ...errors import AnalystError
from ...events import MemoryUpdated
from ..context import ContextBudget, answers_only, compact_tool_message, well_formed
from ..tools import MAX_ARGUMENT_DEPTH, nested_deeper_than, strip_fence
from ..reply_text import split_reply
from .thread_memory import ThreadMemory

if TYPE_CHECKING:
    from ...store import Turn
    from ..eventlog import EventWriter
    from ..llm import LLMClient

log = logging.getLogger(__name__)

#: Starts the summarizer's messages, so that any server (and the scripted model) can tell
#: its calls from the agent's.
MARKER = "[summarizer]"
#: The turns handed to the summarizer for folding, at most (characters).
FOLD_CHARS = 24_000

INSTRUCTIONS = f"""\
{MARKER} You maintain the structured memory of a data-analysis conversation. You never talk
to the user. Reply with ONE JSON object and nothing else:

{{"add": [{{"section": S, "value": {{...}}}}],
 "update": [{{"section": S, "id": ID, "patch": {{...}}}}],
 "remove": [{{"section": S, "id": ID}}],
 "summary": "only when asked for"}}

Sections and their values:
- "assumptions": {{"id", "hypothesis", "confidence" (0..1), "evidence": [..]}}; to retire one,
  update its confidence to 0 (they are never deleted).
- "hypotheses": {{"id", "text"}}: tentative ideas about the data worth testing.
- "items": {{"id", "kind": "task"|"note"|"idea"|"question", "text", "status":
  "active"|"resolved"|"discarded"}}: resolve items the turn settled; resolve a pasted-text
  note once the user has moved on from it.
Do not add datasets, tables or artifacts: they are recorded from tool results already.
Return {{}} when nothing changed.
"""

FOLD_INSTRUCTIONS = """\
Also return "summary": a new rolling summary (at most {chars} characters) of the previous
summary plus the older turns below. Keep artifact ids, dataset and table names, the user's
decisions and each step's result (numbers that answered a question); drop chatter.
"""


def needs_fold(memory: ThreadMemory, state: AgentState, last_turn: int, budget: ContextBudget) -> int:
    """The turn the rolling summary should now run through, or 0 when it need not grow.

    The most recent ``tool_output_turns`` turns are never folded: they are still sent whole.
    """
    through = last_turn - budget.tool_output_turns
    start = state.summary.through_turn
    if through <= start:
        return 0
    pending = last_turn - start
    if pending > budget.summarize_turns:
        return through
    if memory.message_chars(after_turn=start, through_turn=last_turn) > budget.summarize_chars:
        return through
    return 0


def _state_view(state: AgentState) -> dict[str, Any]:
    """The parts of the state the summarizer may change, compactly."""
    return {
        "assumptions": [a.model_dump() for a in state.assumptions.values()][-30:],
        "hypotheses": [h.model_dump() for h in state.hypotheses.values()][-30:],
        "items": [
            {**i.model_dump(exclude={"ref"}), "ref": {k: v for k, v in i.ref.items() if k != "text"}}
            for i in state.items.values()
        ][-30:],
        "datasets": [e.name for e in state.entities.values() if e.kind == "dataset"][-30:],
    }


def _transcript(turns: dict[int, list[dict[str, Any]]], *, with_tools: bool, cap: int) -> str:
    lines: list[str] = []
    for number in sorted(turns):
        messages = well_formed(turns[number]) if with_tools else answers_only(turns[number])
        lines.append(f"--- turn {number}")
        for message in messages:
            if message.get("role") == "tool":
                message = compact_tool_message(message)
            body = message.get("content") or ""
            calls = message.get("tool_calls") or []
            if calls:
                body += " ".join(f"[calls {c['function']['name']} {c['function']['arguments'][:300]}]" for c in calls)
            lines.append(f"{message['role']}: {body}")
    text = "\n".join(lines)
    return text if len(text) <= cap else "[... earlier part cut]\n" + text[-cap:]


def summarizer_messages(
    memory: ThreadMemory, turn: Turn, state: AgentState, budget: ContextBudget, fold_through: int
) -> list[dict[str, Any]]:
    """The request: the state, the finished turn, and (when folding) the turns to fold."""
    this_turn = memory.turn_messages(turns=1, after_turn=turn.number - 1, before_turn=turn.number + 1)
    parts = [
        f"{MARKER} Agent state:\n{json.dumps(_state_view(state), default=str)}",
        f"The turn that just finished:\n{_transcript(this_turn, with_tools=True, cap=8_000)}",
    ]
    system = INSTRUCTIONS
    if fold_through:
        older = memory.turn_messages(
            turns=fold_through - state.summary.through_turn,
            after_turn=state.summary.through_turn, before_turn=fold_through + 1,
        )
        system += FOLD_INSTRUCTIONS.format(chars=budget.summary_chars)
        parts.append(f"Previous summary (turns 1-{state.summary.through_turn}):\n{state.summary.text or '(none)'}")
        parts.append(
            f"Turns {state.summary.through_turn + 1}-{fold_through} to fold into the summary:\n"
            + _transcript(older, with_tools=True, cap=FOLD_CHARS)
        )
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def parse_reply(text: str, *, fold_through: int, summary_chars: int) -> StateDelta:
    """The delta in a summarizer reply (fenced or not, after a reasoning model's
    ``<think>`` block or not); raises on anything else.

    >>> parse_reply('```json\\n{"summary": "s"}\\n```', fold_through=4, summary_chars=100).patch.summary.through_turn
    4
    >>> parse_reply('<think>What changed? {not this}</think>\\n{"summary": "s"}', fold_through=2,
    ...             summary_chars=100).patch.summary.text
    's'
    """
    text = split_reply(text).answer  # the monologue is not the reply
    try:
        data = json.loads(strip_fence(text.strip()) or "{}")
    except json.JSONDecodeError as exc:
        raise AnalystError(f"the summarizer did not reply with JSON: {exc.msg}", reason="summarizer_reply") from exc
    except (ValueError, RecursionError, MemoryError) as exc:  # too deep, a number too long to read...
        raise AnalystError(f"the summarizer's reply could not be read: {type(exc).__name__}",
                           reason="summarizer_reply") from None
    if not isinstance(data, dict):
        raise AnalystError("the summarizer's reply is not a JSON object", reason="summarizer_reply")
    if nested_deeper_than(data, MAX_ARGUMENT_DEPTH):
        raise AnalystError("the summarizer's reply is nested too deeply", reason="summarizer_reply")
    where = find_lone_surrogate(data)
    if where is not None:
        # It could be neither stored nor sent back (see _text.py).
        raise AnalystError(f"the summarizer's reply holds a lone surrogate in {where}", reason="summarizer_reply")
    summary = data.pop("summary", None)
    delta = parse_delta({k: v for k, v in data.items() if k in ("add", "update", "remove")})
    if any(a.section in ("entities", "expectations") for a in delta.add):
        raise AnalystError("the summarizer may not add entities or expectations", reason="summarizer_reply")
    if fold_through and isinstance(summary, str) and summary.strip():
        delta.patch = StatePatch(summary=RollingSummary(text=summary.strip()[:summary_chars], through_turn=fold_through))
    return delta


async def summarize_turn(
    memory: ThreadMemory,
    turn: Turn,
    llm: LLMClient,
    *,
    budget: ContextBudget,
    events: EventWriter,
) -> MemoryUpdated:
    """Ask the summarizer about one finished turn and apply its delta; returns the event,
    stored and handed on by ``events``."""
    # The store is read and written off the event loop, which a server's other turns and streams share.
    state = await asyncio.to_thread(memory.state)
    fold_through = await asyncio.to_thread(needs_fold, memory, state, turn.number, budget)
    messages = await asyncio.to_thread(summarizer_messages, memory, turn, state, budget, fold_through)
    try:
        reply = await llm.complete(messages, [])
        delta = parse_reply(reply.text, fold_through=fold_through, summary_chars=budget.summary_chars)
        new_state = await asyncio.to_thread(memory.apply, delta, origin="summarizer", turn_id=turn.turn_id)
        event = MemoryUpdated(
            origin="summarizer", status="applied", version=new_state.version, changes=delta.counts(),
            summarized_through=new_state.summary.through_turn,
        )
    except AnalystError as exc:
        log.warning("agent-state summary of turn %s failed: %s", turn.turn_id, exc)
        event = MemoryUpdated(
            origin="summarizer", status="failed", message=str(exc),
            summarized_through=state.summary.through_turn,
        )
    stored = await events.append(event.model_copy(update={"thread_id": turn.thread_id, "turn_id": turn.turn_id}))
    return stored  # type: ignore[return-value]
