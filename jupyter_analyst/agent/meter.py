"""A turn's cost ledger as it runs: each model call's tokens as they come in, each step's
share of the call that issued it, what reused steps saved (see jupyter_analyst/ledger.py).

A step's share is known only once every step its model call asked for has been executed or
reused (a plan's steps are known when the plan runs): the meter keeps the steps of the
current reply, and :meth:`TurnMeter.settle` divides the call among them and says which
executed steps to record their cost for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..ledger import Ledger, Price, Saved, StepCost, Tokens, Usage

if TYPE_CHECKING:
    from ..store import Turn


class Spending(Protocol):
    """The budgets a turn's model calls are held to (``turns/budget_gate.py``). Blocking: call
    both off the event loop."""

    def reserve(self, turn: Turn, prompt_estimate: int) -> str:
        """Reserve the next model call of ``turn`` (its prompt's estimate) against the budgets:
        the reservation, to settle. Raises ``BudgetExhausted`` (nothing reserved) when a budget
        that applies is spent."""
        ...

    def settle(self, reservation: str, tokens: Tokens | None) -> None:
        """What the reserved call cost (``None``: it failed without a reply, and cost nothing)."""
        ...


class _Costed(Protocol):
    """A step done before: a recorded step, or an outcome of this turn."""

    cost: StepCost | None
    duration_s: float


def estimate(chars: int) -> int:
    """About how many tokens ``chars`` characters are (four characters each), as the context
    pack estimates a prompt.

    >>> estimate(10), estimate(0)
    (3, 0)
    """
    return math.ceil(chars / 4)


def served_usage(usage: dict[str, Any] | None) -> dict[str, int | None] | None:
    """The token counts a model server reported for one call, or ``None`` when it reported
    none (some servers send no usage when streaming).

    >>> served_usage({"prompt_tokens": 812, "completion_tokens": 40, "total_tokens": 852})
    {'prompt_tokens': 812, 'completion_tokens': 40}
    >>> served_usage({"prompt_tokens": None}) is None, served_usage(None) is None
    (True, True)

    A count that is not a whole number of tokens (negative, a boolean) is no count: the
    server's word is taken only where it can be true.

    >>> served_usage({"prompt_tokens": -5, "completion_tokens": 3}) is None
    True
    >>> served_usage({"prompt_tokens": 10, "completion_tokens": True})
    {'prompt_tokens': 10, 'completion_tokens': None}
    """
    prompt = (usage or {}).get("prompt_tokens")
    if not _count(prompt):
        return None
    completion = usage.get("completion_tokens") if usage else None
    return {"prompt_tokens": prompt, "completion_tokens": completion if _count(completion) else None}


def _count(value: Any) -> bool:
    """Whether ``value`` can be a number of tokens."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def counted(served: dict[str, int | None] | None, *, prompt_estimate: int, reply_chars: int,
            price: Price | None) -> Tokens:
    """One model call's tokens: the server's counts (:func:`served_usage`), else estimated
    from the prompt's estimate and the reply's characters; priced when ``price`` is given.

    >>> counted({"prompt_tokens": 100, "completion_tokens": None}, prompt_estimate=90, reply_chars=40, price=None)
    Tokens(prompt_tokens=100, completion_tokens=10, counted_by='mixed', cost_usd=None)
    """
    if served is not None:
        # A server that counts the prompt but not the reply: the reply's tokens are estimated.
        completion = served["completion_tokens"]
        tokens = Tokens(prompt_tokens=served["prompt_tokens"] or 0,
                        completion_tokens=completion if completion is not None else estimate(reply_chars),
                        counted_by="server" if completion is not None else "mixed")
    else:
        tokens = Tokens(prompt_tokens=prompt_estimate, completion_tokens=estimate(reply_chars),
                        counted_by="estimate")
    if price is not None:
        tokens = tokens.model_copy(update={"cost_usd": price.cost(tokens.prompt_tokens, tokens.completion_tokens)})
    return tokens


@dataclass
class TurnMeter:
    """Counts one turn's model calls and steps into its :class:`~jupyter_analyst.ledger.Ledger`."""

    price: Price | None = None
    usage: Usage = field(default_factory=Usage)
    steps: int = 0
    execution_s: float = 0.0
    saved: Saved = field(default_factory=Saved)
    _issuer: tuple[int | None, Tokens] = (None, Tokens())
    """The model call whose reply's steps run now, and its tokens."""
    _executed: list[Any] = field(default_factory=list)
    """(step key, outcome) of the steps of the current reply that ran."""
    _reused: list[_Costed] = field(default_factory=list)
    _order: list[str] = field(default_factory=list)
    """Each step of the current reply in the order asked: ``run`` or ``reused``."""

    def asked(self) -> None:
        """A model call is sent: counted as made, whether or not a reply comes (a call that
        fails gets no reply and no token count: it adds no tokens)."""
        self.usage = self.usage.model_copy(update={"calls": self.usage.calls + 1})

    def call(self, number: int, served: dict[str, int | None] | None, *, prompt_estimate: int,
             reply_chars: int) -> Tokens:
        """Model call ``number``'s reply is in: the server's counts, else the estimate; its tokens."""
        tokens = counted(served, prompt_estimate=prompt_estimate, reply_chars=reply_chars, price=self.price)
        self.usage = self.usage.plus(Usage(**tokens.model_dump()))
        self._issuer = (number, tokens)
        return tokens

    def ran(self, key: str | None, call_id: str, outcome: Any) -> None:
        """A step of the current reply ran (``key`` ``None``: not recorded, not reusable)."""
        self.steps += 1
        self.execution_s = round(self.execution_s + outcome.duration_s, 4)
        self._executed.append((key, call_id, outcome))
        self._order.append("run")

    def reused(self, original: _Costed) -> None:
        """A step of the current reply was reused: ``original`` is the step it reuses."""
        self._reused.append(original)
        self._order.append("reused")

    def settle(self) -> list[tuple[str, str, StepCost]]:
        """The current reply's steps are all done: each executed one's cost (set on its
        outcome too) to be recorded, as ``(step key, call id, cost)``; what the reused ones
        saved is counted."""
        number, tokens = self._issuer
        n = len(self._order)
        shares = tokens.shares(n) if n else []
        costs: list[tuple[str, str, StepCost]] = []
        run_shares = [s for s, how in zip(shares, self._order, strict=True) if how == "run"]
        for (key, call_id, outcome), share in zip(self._executed, run_shares, strict=True):
            cost = StepCost(**share.model_dump(), model_call=number, shared_by=n)
            outcome.cost = cost
            if key is not None:
                costs.append((key, call_id, cost))
        for original in self._reused:
            self.saved = self.saved.reused(original.cost, original.duration_s)
        self._executed, self._reused, self._order = [], [], []
        return costs

    def user_driven(self) -> None:
        """The steps that follow are the user's: no model call issued them."""
        self._issuer = (None, Tokens())

    def ledger(self) -> Ledger:
        """The turn's ledger so far."""
        return Ledger(usage=self.usage, steps=self.steps, execution_s=self.execution_s, saved=self.saved,
                      price=self.price)
