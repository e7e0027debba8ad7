"""The ``clarify`` tool: the turn ends with a question to the user and its candidate answers.

The candidates are kept in the agent state as an open question; the user's next prompt
that names one of them resolves it (see memory/observations.py).
"""

from __future__ import annotations

from typing import Any

from ...agent_state import Addition, Item, StateDelta
from ...errors import InvalidArguments
from ...events import ToolCallStarted, ToolResult
from ..spec import CallHost, ToolSpec
from ..spec import StepOutcome
from .result_models import ResultModel


async def ask_user(host: CallHost, args: dict[str, Any]) -> StepOutcome:
    """Keep the candidate interpretations as an open question and end the turn with it."""
    call = host.call
    question = str(args.get("question") or "").strip()
    candidates = list(args.get("candidates") or [])
    if not question:
        error = InvalidArguments("clarify needs the 'question' to ask", reason="empty_payload")
        await host.guard("invalid_arguments", error.message)
        refused = StepOutcome(status="refused", result={"error": error.to_dict()})
        # Every call has its result event, refused ones too.
        await host.emit(ToolResult(call_id=call.id, tool=call.name, status="refused", result=refused.result))
        return refused
    # A short id the summarizer can echo (``q-t4``: the question turn 4 asked); the call it
    # came from is kept to find it again when the next turn answers it.
    item = Item(id=f"q-t{host.turn_number}", kind="question", text=question, candidates=candidates,
                ref={"turn": host.turn_number, "call": call.id})
    await host.remember(StateDelta(add=[Addition(section="items", value=item.model_dump())]))
    await host.guard("clarification_asked", question)
    text = question_text(question, candidates)
    outcome = StepOutcome(status="ok", result={"asked": question, "candidates": candidates, "question_for_user": text})
    await host.emit(ToolCallStarted(call_id=call.id, tool=call.name, arguments=args))
    await host.emit(ToolResult(call_id=call.id, tool=call.name, status="ok", result=outcome.result))
    return outcome


def question_text(question: str, candidates: list[str]) -> str:
    """The question as the user reads it, with the candidates numbered.

    >>> print(question_text("Which year?", ["2024", "2025"]))
    Which year?
    <BLANKLINE>
    1. 2024
    2. 2025
    """
    options = "\n".join(f"{n}. {c}" for n, c in enumerate(candidates, start=1))
    return f"{question}\n\n{options}" if options else question


class ClarifyResult(ResultModel):
    """The question the turn ends with, and its candidate answers."""

    asked: str
    candidates: list[str]
    question_for_user: str
    """The question as the user reads it, the candidates numbered."""


CLARIFY = ToolSpec(
    name="clarify",
    description="Ask the user to choose between interpretations; the turn ends with the question.",
    properties={
        "question": {"type": "string", "description": "one short question"},
        "candidates": {"type": "array", "items": {"type": "string"}, "description": "the interpretations, short phrases"},
    },
    required=("question", "candidates"),
    payload="question",
    aliases={"options": "candidates", "choices": "candidates", "interpretations": "candidates"},
    drive=ask_user,
    asks=True,
    result_model=ClarifyResult,
)
