"""A turn's model calls held to the configured budgets: each reserved in the store before it
is sent and settled with what its reply cost (see jupyter_analyst/budgets.py and
store/spending.py). Every surface that runs a model's turn (server, CLI, magics, MCP) goes
through :func:`~.run.run_turn`, which makes the gate."""

from __future__ import annotations

from dataclasses import dataclass

from .. import _clock
from ..budgets import BudgetLine, Budgets, refusal
from ..errors import BudgetExhausted, ConfigError
from ..ledger import Price, Tokens
from ..store import ThreadStore, Turn
from .config import AnalystConfig, ModelSettings


@dataclass(frozen=True)
class TurnBudget:
    """The budgets of one thread's owner, checked before each model call of its turns."""

    store: ThreadStore
    budgets: Budgets
    user: str
    price: Price | None

    def reserve(self, turn: Turn, prompt_estimate: int) -> str:
        """Reserve ``turn``'s next call (its prompt's estimate); ``BudgetExhausted`` when a
        budget that applies is spent (nothing reserved)."""
        usd = self.price.cost(prompt_estimate, 0) if self.price is not None else None
        held = self.store.reserve_spend(self.budgets, user=self.user, thread_id=turn.thread_id, turn_id=turn.turn_id,
                                        tokens=prompt_estimate, usd=usd, now=_clock.now())
        if isinstance(held, str):
            return held
        raise BudgetExhausted(refusal(held, user=self.user, timezone=self.budgets.timezone),
                              hint="see GET analyst/api/budget for what is left")

    def settle(self, reservation: str, tokens: Tokens | None) -> None:
        """What the call cost, as the turn's ledger counts it."""
        spent = tokens or Tokens()
        self.store.settle_spend(reservation, tokens=spent.prompt_tokens + spent.completion_tokens, usd=spent.cost_usd)

    def spent(self, thread_id: str) -> list[BudgetLine]:
        """The budgets that apply to ``thread_id`` and are spent (none: a call may go)."""
        lines = self.store.budget_lines(self.budgets, user=self.user, thread_id=thread_id, now=_clock.now())
        return [line for line in lines if line.exhausted]


def turn_budget(store: ThreadStore, config: AnalystConfig, model: ModelSettings, user: str) -> TurnBudget | None:
    """The gate of ``user``'s turns with ``model``, or ``None`` when no budget is configured.

    Raises:
        ConfigError: a cost limit is configured and the model (or the summarizer's) has no
            price, so its calls could not be counted against it.
    """
    budgets = config.budgets
    if not budgets.limited:
        return None
    price = config.price_of(model.model)
    if budgets.priced:
        unpriced = [name for name in {model.model, model.summary_model or model.model} if config.price_of(name) is None]
        if unpriced:
            raise ConfigError(f"a cost budget is configured, but no price for model {', '.join(sorted(unpriced))}",
                              reason="budget_needs_price",
                              hint='configure its price (prices / --price, e.g. "0.15/0.60"), or limit tokens only')
    return TurnBudget(store=store, budgets=budgets, user=user, price=price)
