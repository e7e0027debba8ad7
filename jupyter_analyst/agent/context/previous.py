"""What the previous turn left for this one: how it ended, which steps finished, what its
answer offered to do next, the question it asked.

"continue", "yes, do that" and "the second one" only make sense with these, and the
history that carries them is the first thing a small budget drops: so they are stated in
the agent-state section, where nothing cuts them (see sections.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..spec import failed_mark, spec_of

if TYPE_CHECKING:
    from ...agent_state import Item
    from ...store import Turn

#: The longest offer of next steps quoted from an answer.
OFFER_CHARS = 400

_OFFER = re.compile(
    r"\b(i can|i could|we could|we can|you could|you may want|you might want|would you like|do you want|"
    r"shall i|should i|shall we|want me to|if you (?:want|like|wish|prefer|need)|if (?:useful|helpful|needed)|"
    r"happy to|let me know|i(?:'d| would) (?:suggest|recommend)|(?:a |the |one |possible |natural |logical )?"
    r"next steps?\b|follow[- ]ups?\b|to go further)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def offered_next(answer: str) -> str:
    """The sentences of an answer's last paragraph that offer a next step, or ``""``.

    >>> offered_next("North leads with 1,200.\\n\\nI can split it by month next, or chart it. Want that?")
    'I can split it by month next, or chart it. Want that?'
    >>> offered_next("North leads with 1,200.")
    ''
    >>> offered_next("LGA leads.\\n\\nNext below the cut is BOS with 459.")  # a statement, not an offer
    ''
    >>> offered_next("LGA leads.\\n\\nNext step, if useful: split it by carrier.")
    'Next step, if useful: split it by carrier.'
    >>> offered_next("LGA leads.\\n\\nThe next step joins weather on origin and hour.")
    'The next step joins weather on origin and hour.'
    >>> offered_next("LGA leads.\\n\\nA follow-up could compare 2014.")
    'A follow-up could compare 2014.'
    """
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", answer.strip()) if p.strip()]
    if not paragraphs:
        return ""
    sentences = [s.strip() for s in _SENTENCE.split(paragraphs[-1]) if s.strip()]
    first = next((n for n, s in enumerate(sentences) if _OFFER.search(s)), None)
    if first is None:
        return ""
    text = " ".join(sentences[first:])
    return text if len(text) <= OFFER_CHARS else text[: OFFER_CHARS - 1] + "…"


def finished_steps(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The steps of a turn that have a result, in order, each in a few words (as each
    call's tool names them: its spec's ``finished``).

    >>> import jupyter_analyst.agent.tools  # the built-in tools
    >>> call = {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "run_sql",
    ...     "arguments": '{"name": "revenue", "sql": "SELECT 1"}'}}]}
    >>> finished_steps([call, {"role": "tool", "tool_call_id": "c1", "content": '{"dataset": "revenue", "rows": 4}'}])
    ['run_sql `revenue`']
    >>> finished_steps([call])
    []
    >>> plan = {"role": "assistant", "tool_calls": [{"id": "p1", "function": {"name": "plan", "arguments": "{}"}}]}
    >>> ran = '{"steps": [{"id": "q1", "tool": "run_sql", "status": "ok"}, {"id": "p", "tool": "run_python", "status": "ok"}]}'
    >>> finished_steps([plan, {"role": "tool", "tool_call_id": "p1", "content": ran}])
    ['run_sql q1 of the plan', 'run_python p of the plan']
    """
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    steps: list[str] = []
    for message in messages:
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except json.JSONDecodeError:
                arguments = {}
            calls[str(call.get("id"))] = (str(function.get("name")), arguments if isinstance(arguments, dict) else {})
        if message.get("role") == "tool" and message.get("tool_call_id") in calls:
            name, arguments = calls[message["tool_call_id"]]
            try:
                result = json.loads(message.get("content") or "{}")
            except json.JSONDecodeError:
                result = {}
            result = result if isinstance(result, dict) else {}
            # A call is one step, or several (a plan's, each that ran), as its tool names them.
            spec = spec_of(name)
            steps += (spec.finished(arguments, result) if spec is not None and spec.finished is not None
                      else [name + failed_mark(result)])
    return steps


def previous_turn_line(turn: Turn | None, messages: Sequence[dict[str, Any]], question: Item | None) -> str:
    """How the previous turn ended, as the model reads it at the start of the next one.

    >>> from jupyter_analyst.store import Turn
    >>> t = Turn(turn_id="t", thread_id="th", number=2, prompt="p", status="interrupted", started_at="")
    >>> previous_turn_line(t, [], None)
    'Previous turn (2): interrupted before any step finished; it gave no answer (the steps that finished are kept).'
    >>> call = {"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "run_python", "arguments": "{}"}}]}
    >>> done = t.model_copy(update={"status": "completed", "answer": "Done. I can chart it next."})
    >>> previous_turn_line(done, [call, {"role": "tool", "tool_call_id": "c1", "content": "{}"}], None)
    'Previous turn (2): completed in 1 step. Its answer offered: "I can chart it next."'
    >>> previous_turn_line(done.model_copy(update={"status": "step_limited"}), [], None)
    'Previous turn (2): ran out of steps: its step budget was spent before it finished, and its answer says what was left unfinished. Its answer offered: "I can chart it next."'
    >>> previous_turn_line(t.model_copy(update={"status": "no_answer"}), [], None)
    "Previous turn (2): ended without an answer before any step finished: the model's last reply said nothing."
    >>> previous_turn_line(t.model_copy(update={"status": "budget_exhausted"}), [], None)
    'Previous turn (2): stopped before any step finished: a spending budget was reached; it gave no answer.'
    """
    if turn is None:
        return ""
    head = f"Previous turn ({turn.number}):"
    steps = finished_steps(messages)
    done = f"after step {len(steps)} ({steps[-1]})" if steps else "before any step finished"
    if turn.status == "needs_input" and question is not None:
        options = f" (candidates: {' | '.join(question.candidates)})" if question.candidates else ""
        return (f"{head} waiting for the user's answer to the question it asked: {quoted(question.text)}{options}. "
                "The user's message in this turn is the answer to it.")
    if turn.status in ("interrupted", "running"):
        return f"{head} interrupted {done}; it gave no answer (the steps that finished are kept)."
    if turn.status == "error":
        return f"{head} ended with an error {done}."
    if turn.status == "no_answer":
        return f"{head} ended without an answer {done}: the model's last reply said nothing."
    if turn.status == "budget_exhausted":
        return f"{head} stopped {done}: a spending budget was reached; it gave no answer."
    count = f" in {len(steps)} step{'' if len(steps) == 1 else 's'}" if steps else ""
    if turn.status == "step_limited":
        line = f"{head} ran out of steps{count}: its step budget was spent before it finished, and its answer " \
               "says what was left unfinished."
    else:
        line = f"{head} completed{count}."
    offer = offered_next(turn.answer or "")
    return line + (f" Its answer offered: {quoted(offer)}" if offer else "")


def quoted(text: str) -> str:
    """``text`` in double quotes, the quotes inside it escaped: where it ends stays plain.

    >>> print(quoted('What would "how are we doing" measure?'))
    "What would \\"how are we doing\\" measure?"
    """
    return json.dumps(text, ensure_ascii=False)
