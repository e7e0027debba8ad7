"""What an evaluation records: each turn and task as it ended, the run's settings and totals."""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel

from ..ledger import CountedBy, Saved, Usage
from .scoring import Failure

class TurnResult(BaseModel):
    """One question asked and scored."""

    question: str
    answer: str = ""
    """The model's whole reply."""
    given: str | None = None
    """What was read from it as the answer."""
    gold: Any = None
    tolerance: float = 0.0
    correct: bool = False
    failure: Failure | None = None
    status: str = ""
    error: str | None = None
    usage: Usage = Usage()
    """The turn's model calls, tokens and cost (its ledger's)."""
    saved: Saved = Saved()
    """What its reused steps saved (its ledger's)."""
    steps_executed: int = 0
    steps_reused: int = 0
    time_s: float = 0.0


class TaskResult(BaseModel):
    """One task as it ended: correct when every one of its turns is."""

    id: str
    correct: bool
    given: Any
    gold: Any
    failure: Failure | None = None
    model_calls: int
    prompt_tokens: int
    completion_tokens: int
    tokens_counted_by: CountedBy
    cost_usd: float | None = None
    """What its model calls cost, where the model has a price (``None``: tokens only)."""
    saved: Saved = Saved()
    """What its reused steps saved."""
    steps_executed: int
    steps_reused: int
    time_s: float
    thread_id: str | None = None
    notebook: str | None = None
    tags: list[str] = []
    turns: list[TurnResult]

    @classmethod
    def of(cls, task_id: str, turns: list[TurnResult], *, tags: list[str], thread_id: str | None,
           notebook: str | None) -> TaskResult:
        """The task from its turns (a follow-up task: the answers and golds of each, in order)."""
        usage, saved = Usage(), Saved()
        for turn in turns:
            usage, saved = usage.plus(turn.usage), saved.plus(turn.saved)
        failed = next((t for t in turns if not t.correct), None)
        single = len(turns) == 1
        return cls(
            id=task_id, correct=failed is None, failure=failed.failure if failed else None,
            given=turns[0].given if single else [t.given for t in turns],
            gold=turns[0].gold if single else [t.gold for t in turns],
            model_calls=usage.calls, prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
            tokens_counted_by=usage.counted_by, cost_usd=usage.cost_usd, saved=saved,
            steps_executed=sum(t.steps_executed for t in turns),
            steps_reused=sum(t.steps_reused for t in turns), time_s=round(sum(t.time_s for t in turns), 3),
            thread_id=thread_id, notebook=notebook, tags=tags, turns=turns,
        )


def totals(tasks: list[TaskResult]) -> dict[str, Any]:
    """The run's totals over its tasks.

    >>> totals([])["accuracy"]
    0.0
    """
    usage, saved = Usage(), Saved()
    for task in tasks:
        usage = usage.plus(Usage(calls=task.model_calls, prompt_tokens=task.prompt_tokens,
                                 completion_tokens=task.completion_tokens, counted_by=task.tokens_counted_by,
                                 cost_usd=task.cost_usd))
        saved = saved.plus(task.saved)
    correct = sum(t.correct for t in tasks)
    return {
        "tasks": len(tasks), "correct": correct, "accuracy": round(correct / len(tasks), 4) if tasks else 0.0,
        "model_calls": usage.calls, "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens, "tokens_counted_by": usage.counted_by,
        "cost_usd": usage.cost_usd, "saved": saved.model_dump(mode="json"),
        "steps_executed": sum(t.steps_executed for t in tasks), "steps_reused": sum(t.steps_reused for t in tasks),
        "time_s": round(sum(t.time_s for t in tasks), 3),
        "failures": dict(sorted(Counter(t.failure for t in tasks if t.failure).items())),
    }
