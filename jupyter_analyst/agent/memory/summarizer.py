"""The end-of-turn summarizer: one cheaper model call, after ``done``, that returns deltas.

When a turn has finished (its answer shown, ``turn_ended`` sent), a separate model call
reads the agent state and the turn and proposes changes to the state: assumptions, items,
hypotheses, never free text. Once the thread has more unsummarized turns, or characters,
than the budget allows, the same call also folds the older turns into the rolling summary,
keeping ids, names, user decisions and step results.

It runs off the hot path: the next turn can start while it is still waiting for the
model, and its delta is applied in one transaction on top of whatever the next turn has
changed meanwhile (a late summary never replaces a newer one that covers more turns). A
failure (no answer, not JSON, an invalid delta), and a summarizer stopped before its reply
was applied (the command's wait ran out, the server shut down), is recorded as a
``memory`` event and changes nothing: nothing it decides is lost without a word.

The prompt and the reading of the reply are pure; the state and the messages are read and
the delta applied through the thread's :class:`ThreadMemory`, never the store itself.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import TYPE_CHECKING, Any

from ..._text import find_lone_surrogate, head_and_tail, row_count
from ...agent_state import (
    AgentState,
    Item,
    RollingSummary,
    StateDelta,
    StatePatch,
    parse_delta,
)
from ...errors import AnalystError
from ...events import MemoryUpdated
from ...ledger import Price, Usage
from ..context import ContextBudget, answers_only, compact_value, offered_next, turn_span, well_formed
from ..llm import split_reply
from ..meter import counted, estimate, served_usage
from ..spec import spec_of
from ..tools import MAX_ARGUMENT_DEPTH, nested_deeper_than, strip_fence
from .observations import QUESTION_TURNS, stamped
from .thread_memory import ThreadMemory

if TYPE_CHECKING:
    from ...store import Turn
    from ..eventlog import EventWriter
    from ..llm import LLMClient

log = logging.getLogger(__name__)

#: Starts the summarizer's messages, so that any server (and the scripted model) can tell
#: its calls from the agent's.
MARKER = "[summarizer]"
#: The finished turn, and the turns handed over for folding, at most (characters): the
#: summarizer is meant for a cheaper model, and reads results in one line each.
TURN_CHARS = 4_000
FOLD_CHARS = 8_000

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
  note once the user has moved on from it; discard a question the user has not taken up
  within {QUESTION_TURNS} turns (the state lists each item's turn).
Already recorded, never add them: datasets, tables and artifacts (from tool results), the
questions the agent asked with clarify, the next steps the last answer offered (shown with
the previous turn), and anything the state already lists (update it instead). Return {{}}
when nothing changed.
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


def _state_view(state: AgentState) -> str:
    """The parts of the state the summarizer may change, one line each (ids first: updates name them)."""
    lines = ["assumptions:"] + [f"- {a.id} [{a.confidence:.1f}] {a.hypothesis[:200]}"
                                for a in list(state.assumptions.values())[-30:]]
    lines += ["hypotheses:"] + [f"- {h.id}: {h.text[:200]}" for h in list(state.hypotheses.values())[-30:]]
    lines += ["items:"]
    for item in list(state.items.values())[-30:]:
        turn = f", {_raised(item)}" if _raised(item) else ""
        resolution = f" -> {item.resolution[:100]}" if item.resolution else ""
        lines.append(f"- {item.id} ({item.kind}, {item.status}{turn}): {item.text[:200]}{resolution}")
    datasets = [e.name for e in state.entities.values() if e.kind == "dataset"][-30:]
    lines.append("datasets (recorded already): " + (", ".join(datasets) or "none"))
    return "\n".join(lines)


def _raised(item: Item) -> str:
    """The turn an item was raised in, in words (a question's: the turn that asked it), or ``""``.

    >>> _raised(Item(id="q", kind="question", text="Which?", ref={"turn": 3}))
    'asked in turn 3'
    """
    turn = item.ref.get("turn")
    if not isinstance(turn, int):
        return ""
    return f"asked in turn {turn}" if item.kind == "question" else f"turn {turn}"


def result_line(tool: str, content: str) -> str:
    """A tool result in a line or a few: what it made, found, listed, asked or said, never
    its rows; an error's end kept (the exception); printed output kept as lines, its head
    and tail (a printed table is read by its lines).

    >>> result_line("run_sql", '{"dataset": "rev", "artifact_id": "art_1", "rows": 4, "columns": [{"name": "r"}], "sample": [[1]]}')
    'rev art_1: 4 rows; columns r'
    >>> result_line("run_sql", '{"dataset": "rev", "artifact_id": "art_1", "rows": 4, "intent_note": "from t; 4 rows"}')
    'rev art_1: from t; 4 rows'
    >>> result_line("run_python", '{"error": {"message": "KeyError: x"}}')
    'error: KeyError: x'
    >>> result_line("list_artifacts", '{"artifacts": [{"id": "art_1", "name": "delays.png"}]}')
    'lists "delays.png" (art_1)'
    >>> result_line("plan", '{"steps": [{"id": "q1", "result": {"dataset": "d", "rows": 2}}]}')
    'q1: d: 2 rows'
    >>> result_line("find", '{"query": "rev", "matches": [{"kind": "column", "name": "orders.revenue"}]}')
    'found orders.revenue (column)'
    >>> print(result_line("run_python", '{"stdout": "   a  b\\\\n0  1  2\\\\n"}'))
    printed:
         a  b
      0  1  2
    """
    try:
        result = json.loads(content or "{}")
    except json.JSONDecodeError:
        return head_and_tail(content, 300)
    return _result_text(tool, result) if isinstance(result, dict) else head_and_tail(str(result), 300)


#: The most characters of printed output the summarizer reads (its head and tail, whole lines).
PRINTED_CHARS = 600


def _result_text(tool: str, result: dict[str, Any]) -> str:
    error = result.get("error")
    if error:
        return "error: " + head_and_tail(str(error.get("message") if isinstance(error, dict) else error), 300)
    steps = result.get("steps")
    if isinstance(steps, list):  # a plan: each step's result in its own words
        return "; ".join(f"{s.get('id')}: {_result_text(s.get('tool') or '', s['result'])}" for s in steps[:8]
                         if isinstance(s, dict) and isinstance(s.get("result"), dict))
    parts = []
    if result.get("dataset"):
        made = f"{result['dataset']} {result.get('artifact_id') or ''}".strip()
        if result.get("intent_note"):  # it says the rows and what the columns hold: said once
            parts.append(f"{made}: {result['intent_note']}")  # fitted as it was made: never cut again
        else:
            parts.append(f"{made}: {result.get('rows')} rows")
            names = [c.get("name") if isinstance(c, dict) else str(c) for c in result.get("columns") or ()]
            if names:
                parts.append("columns " + ", ".join(str(n) for n in names[:12]))
    if result.get("asked"):  # clarify: the question, and the candidates it offered
        candidates = [str(c) for c in result.get("candidates") or ()]
        parts.append(f'asked "{str(result["asked"])[:200]}"'
                     + (f" (candidates: {' | '.join(candidates[:8])})" if candidates else ""))
    if isinstance(result.get("matches"), list):
        parts.append(_found(result["matches"]))
    artifacts = [_artifact(a) for a in result.get("artifacts") or () if isinstance(a, dict)]
    if artifacts:
        spec = spec_of(tool)
        verb = "lists" if spec is None or not spec.step else "reused" if result.get("reused") else "made"
        parts.append(f"{verb} " + ", ".join(str(a) for a in artifacts[:8]))
    if not parts and not result.get("stdout") and not result.get("result"):
        parts.append(_plain(compact_value(result)) or "nothing to show")
    output = result.get("stdout") or result.get("result")
    if isinstance(output, str) and output.strip():
        printed = head_and_tail("\n".join(line.rstrip() for line in output.strip("\n").splitlines()), PRINTED_CHARS)
        parts.append("printed:\n" + "\n".join("  " + line for line in printed.splitlines()))
    return "; ".join(parts)


def _artifact(entry: dict[str, Any]) -> str:
    """An artifact a step made or listed, by what it is and its name, then its id: the
    summary can say what a chart shows, and keep the id a later turn cites.

    >>> _artifact({"id": "art_1", "name": "Delays by month.png", "type": "image"}), _artifact({"id": "art_2"})
    ('image "Delays by month.png" (art_1)', 'art_2')

    A dataset its name no longer holds, or that other names hold too, says so:

    >>> _artifact({"id": "art_1", "name": "rev", "type": "dataset", "replaced_by": "art_3", "in_kernel_as": ["total"]})
    'dataset "rev" (art_1, replaced by art_3, in the kernel as total)'
    >>> _artifact({"id": "art_1", "name": "rev", "type": "dataset", "in_kernel": False})
    'dataset "rev" (art_1, not in the kernel)'
    """
    ident, name = entry.get("id"), entry.get("name")
    if not name:
        return str(ident)
    kind = f"{entry['type']} " if entry.get("type") else ""
    named = f"{kind}{json.dumps(str(name)[:120], ensure_ascii=False)}"
    notes = [str(ident)] if ident else []
    if entry.get("replaced_by"):
        notes.append(f"replaced by {str(entry['replaced_by'])[:60]}")
    names = entry.get("in_kernel_as")
    if isinstance(names, list):
        notes.append("in the kernel as " + ", ".join(str(n)[:60] for n in names[:4]) if names else "not in the kernel")
    elif entry.get("in_kernel") is False:
        notes.append("not in the kernel")
    return f"{named} ({', '.join(notes)})" if notes else named


def _found(matches: list[Any]) -> str:
    """What a ``find`` found, by name and kind (an id where it has one); when nothing fit
    well, said so: what it returned then shares only letters with what was asked.

    >>> _found([{"kind": "dataset", "name": "rev", "id": "art_1", "score": 1.0}]), _found([])
    ('found rev art_1 (dataset)', 'found nothing')
    >>> _found([{"kind": "dataset", "name": "rev", "id": "art_1", "score": 1.0, "in_kernel": False}])
    'found rev art_1 (dataset, not in the kernel)'
    >>> _found([{"kind": "column", "name": "flights.arr_time", "score": 0.56, "weak": True}])
    'found no good match (weak match: flights.arr_time (column))'
    """
    names = [f"{m.get('name')}{' ' + str(m['id']) if m.get('id') else ''} ({m.get('kind')}"
             f"{', not in the kernel' if m.get('in_kernel') is False else ''})"
             for m in matches[:12] if isinstance(m, dict)]
    more = f", and {len(matches) - 12} more" if len(matches) > 12 else ""
    if names and all(isinstance(m, dict) and m.get("weak") for m in matches):
        return f"found no good match (weak match: {', '.join(names)})"
    return "found " + ", ".join(names) + more if names else "found nothing"


def _plain(value: Any) -> str:
    """A compacted result in words: ``key value`` parts, lists by their items' names, never JSON.

    >>> _plain({"tables": [{"name": "orders", "rows": 5}, {"name": "regions"}], "note": "two"})
    'tables orders (5 rows), regions; note two'
    >>> _plain({"name": "events", "rows": 12000000, "rows_estimated": True})
    'events (about 12,000,000 rows (estimate))'
    """
    if isinstance(value, dict):
        if "name" in value or "id" in value:
            label = " ".join(str(value[k]) for k in ("name", "id") if value.get(k))
            rows = value.get("rows")
            return label + (f" ({row_count(rows, value.get('rows_estimated') is True)})" if isinstance(rows, int) else "")
        text = "; ".join(f"{key} {_plain(item)}" for key, item in value.items() if item not in (None, "", [], {}))
    elif isinstance(value, list):
        text = ", ".join(_plain(item) for item in value)
    else:
        text = str(value)
    return head_and_tail(text, 300)


def call_line(tool: str, arguments: str) -> str:
    """A call in a few words, never its arguments cut mid-token: what a query makes, a
    plan's goal and steps, the first line of Python code; its result line says the rest.

    >>> call_line("run_sql", '{"sql": "SELECT 1", "name": "rev"}')
    '[run_sql → rev]'
    >>> call_line("plan", '{"goal": "monthly delays", "stages": [{"steps": [{"id": "q1"}, {"id": "c1"}]}]}')
    '[plan "monthly delays": q1, c1]'
    >>> call_line("run_python", '{"code": "# chart\\\\nfig, ax = plt.subplots()\\\\nax.plot(x)"}')
    '[run_python: fig, ax = plt.subplots() …]'
    >>> call_line("find", '{"query": "carrier delay", "with_code": false}'), call_line("describe_table", "not json")
    ('[find "carrier delay"]', '[describe_table]')
    >>> call_line("list_artifacts", '{"type": "image", "with_code": true}'), call_line("describe_table", '{"table": "t"}')
    ('[list_artifacts type image with_code]', '[describe_table "t"]')
    """
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        args = {}
    args = args if isinstance(args, dict) else {}
    spec = spec_of(tool)
    if spec is not None and spec.summarized is not None and (named := spec.summarized(args)) is not None:
        return f"[{named}]"
    # Any other call in words: what it looks for (quoted), then its options as "key value".
    words = [json.dumps(str(value)[:120], ensure_ascii=False) if key in _PAYLOADS
             else key if value is True else f"{key} {value}"
             for key, value in sorted(args.items(), key=lambda kv: kv[0] not in _PAYLOADS)
             if value not in (None, "", [], {}, False) and isinstance(value, str | int | float | bool)]
    return f"[{tool} {' '.join(words)}]" if words else f"[{tool}]"


#: The argument a call is about (a search's words, a table's name), said first and quoted.
_PAYLOADS = frozenset({"query", "table"})


def _transcript(
    turns: dict[int, list[dict[str, Any]]], *, with_tools: bool, cap: int, offers: dict[int, str] | None = None
) -> str:
    """The turns as lines. A clarify call and its result are left out: the answer that
    follows asks the question, with its candidates. ``offers``: by turn, what the answer
    before it offered, said beside a short reply ("continue", "yes") that takes it up."""
    lines: list[str] = []
    for number in sorted(turns):
        messages = well_formed(turns[number]) if with_tools else answers_only(turns[number])
        lines.append(f"--- turn {number}")
        names: dict[str, str] = {}
        for message in messages:
            calls = message.get("tool_calls") or []
            for call in calls:
                names[str(call.get("id"))] = call["function"]["name"]
            if message.get("role") == "tool":
                tool = names.get(str(message.get("tool_call_id")), "tool")
                if not _asks(tool):
                    lines.append(f"result of {tool}: {result_line(tool, message.get('content') or '')}")
                continue
            body = message.get("content") or ""
            shown = [c for c in calls if not _asks(c["function"]["name"])]
            if calls and not shown and not body:
                continue
            body += " ".join(call_line(c["function"]["name"], c["function"].get("arguments") or "") for c in shown)
            offer = (offers or {}).get(number)
            if message["role"] == "user" and offer and len(body) <= SHORT_REPLY:
                body += f" (the previous answer had offered: {json.dumps(offer, ensure_ascii=False)})"
            lines.append(f"{message['role']}: {body}")
    text = "\n".join(lines)
    return text if len(text) <= cap else "[... earlier part cut]\n" + text[-cap:]


#: A user's message this short may take up what the previous answer offered ("continue", "yes, do that").
SHORT_REPLY = 60


def _offers(memory: ThreadMemory, numbers: list[int]) -> dict[int, str]:
    """By turn, what the answer of the turn before offered to do next (where it offered something)."""
    offers = {}
    for number in numbers:
        before = memory.turn(number - 1) if number > 1 else None
        offer = offered_next(before.answer or "") if before is not None else ""
        if offer:
            offers[number] = offer
    return offers


def summarizer_messages(
    memory: ThreadMemory, turn: Turn, state: AgentState, budget: ContextBudget, fold_through: int
) -> list[dict[str, Any]]:
    """The request: the state, the finished turn, and (when folding) the turns to fold."""
    this_turn = memory.turn_messages(turns=1, after_turn=turn.number - 1, before_turn=turn.number + 1)
    parts = [
        f"{MARKER} Agent state:\n{_state_view(state)}",
        f"The turn that just finished ({turn_span(turn.number, turn.number)}):\n"
        + _transcript(this_turn, with_tools=True, cap=TURN_CHARS, offers=_offers(memory, [turn.number])),
    ]
    system = INSTRUCTIONS
    if fold_through:
        older = memory.turn_messages(
            turns=fold_through - state.summary.through_turn,
            after_turn=state.summary.through_turn, before_turn=fold_through + 1,
        )
        system += FOLD_INSTRUCTIONS.format(chars=budget.summary_chars)
        through = state.summary.through_turn
        if state.summary.text:  # none yet: nothing to say
            parts.append(f"Previous summary ({turn_span(1, through)}):\n{state.summary.text}")
        parts.append(
            f"{turn_span(through + 1, fold_through).capitalize()} to fold into the summary:\n"
            + _transcript(older, with_tools=True, cap=FOLD_CHARS, offers=_offers(memory, sorted(older)))
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


def _same_text(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def without_duplicates(delta: StateDelta, state: AgentState, *, turn_number: int) -> StateDelta:
    """The delta without additions the state already holds (an item or hypothesis with the
    same words, whatever its id: a clarify question is recorded when it is asked), and with
    each new item stamped with the turn it was raised in (an ignored question is closed some
    turns later, see observations.py).

    >>> from jupyter_analyst.agent_state import Addition, Item
    >>> s = AgentState(items={"question:c1": Item(id="question:c1", kind="question", text="Which revenue?")})
    >>> d = StateDelta(add=[Addition(section="items", value={"id": "q9", "kind": "question", "text": "which revenue"}),
    ...                     Addition(section="items", value={"id": "t1", "kind": "task", "text": "chart it"})])
    >>> [(a.value["id"], a.value["ref"]) for a in without_duplicates(d, s, turn_number=3).add]
    [('t1', {'turn': 3})]
    """
    known = {_same_text(i.text) for i in state.items.values()} | {_same_text(h.text) for h in state.hypotheses.values()}
    kept = []
    for addition in delta.add:
        value = dict(addition.value)
        if addition.section in ("items", "hypotheses"):
            text = _same_text(str(value.get("text") or ""))
            if text in known and value.get("id") not in state.section(addition.section):
                continue
            known.add(text)
        kept.append(addition.model_copy(update={"value": value}))
    return stamped(delta.model_copy(update={"add": kept}), turn_number)


def _summary_note(delta: StateDelta, fold_through: int, through: int) -> str | None:
    """What became of the rolling summary the call was asked for, when not what was asked
    (said, never silently dropped); ``through``: the turn the state's summary runs through now."""
    if not fold_through:
        return None
    if delta.patch.summary is None:
        # The rest of its reply is applied; the next turn asks for the summary again.
        return (f"it was asked to fold {turn_span(1, fold_through)} into the rolling summary and wrote none: "
                + (f"the summary still runs through turn {through}" if through else "there is no summary yet")
                + "; the next turn asks again")
    if through > fold_through:
        return (f"its summary of {turn_span(1, fold_through)} was not applied: the one of "
                f"{turn_span(1, through)}, written meanwhile, covers more")
    return None


async def summarize_turn(
    memory: ThreadMemory,
    turn: Turn,
    llm: LLMClient,
    *,
    budget: ContextBudget,
    events: EventWriter,
    price: Price | None = None,
) -> MemoryUpdated:
    """Ask the summarizer about one finished turn and apply its delta; returns the event,
    stored and handed on by ``events``. What its call cost (at ``price``, the summarizer
    model's) is added to the turn's ledger and said in the event."""
    state = AgentState()
    applying: asyncio.Future[AgentState] | None = None
    usage: Usage | None = None
    try:
        # The store is read and written off the event loop, which a server's other turns and streams share.
        state = await asyncio.to_thread(memory.state)
        fold_through = await asyncio.to_thread(needs_fold, memory, state, turn.number, budget)
        messages = await asyncio.to_thread(summarizer_messages, memory, turn, state, budget, fold_through)
        usage = Usage(calls=1)  # sent: a call, with no tokens until a reply says how many
        reply = await llm.complete(messages, [])
        usage = Usage(calls=1, **counted(served_usage(reply.usage), prompt_estimate=estimate(len(json.dumps(messages))),
                                         reply_chars=len(reply.text), price=price).model_dump())
        delta = parse_reply(reply.text, fold_through=fold_through, summary_chars=budget.summary_chars)
        delta = without_duplicates(delta, state, turn_number=turn.number)
        # A thread's work cannot be stopped: once begun, the change is awaited to its end.
        applying = asyncio.ensure_future(asyncio.to_thread(memory.apply, delta, origin="summarizer", turn_id=turn.turn_id))
        new_state = await asyncio.shield(applying)
        event = MemoryUpdated(
            origin="summarizer", status="applied", version=new_state.version, changes=delta.counts(),
            summarized_through=new_state.summary.through_turn,
            message=_summary_note(delta, fold_through, new_state.summary.through_turn),
        )
    except AnalystError as exc:
        log.warning("agent-state summary of turn %s failed: %s", turn.turn_id, exc)
        event = MemoryUpdated(
            origin="summarizer", status="failed", message=str(exc),
            summarized_through=state.summary.through_turn,
        )
    except asyncio.CancelledError:
        # Stopped from outside (the command's wait ran out, the server shut down): said in
        # the thread's events, then the cancellation goes on.
        if applying is not None:  # its change was being written: it is, and said so
            new_state = await applying
            event = MemoryUpdated(origin="summarizer", status="applied", version=new_state.version,
                                  summarized_through=new_state.summary.through_turn)
        else:
            event = MemoryUpdated(
                origin="summarizer", status="failed", summarized_through=state.summary.through_turn,
                message=f"stopped before its reply was applied (turn {turn.number} had ended and the process "
                        "did not wait longer): the agent state has nothing of this summary",
            )
        await events.append(event.model_copy(update={"thread_id": turn.thread_id, "turn_id": turn.turn_id}))
        raise
    if usage is not None:
        await asyncio.to_thread(memory.add_summarizer_usage, turn.turn_id, usage)
    stored = await events.append(event.model_copy(update={"thread_id": turn.thread_id, "turn_id": turn.turn_id,
                                                          "usage": usage}))
    return stored  # type: ignore[return-value]


def _asks(tool: str) -> bool:
    """Whether ``tool``'s call asked the user a question: left out, the answer asks it."""
    spec = spec_of(tool)
    return spec is not None and spec.asks
