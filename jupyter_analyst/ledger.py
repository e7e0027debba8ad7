"""The cost ledger: what a turn's model calls and steps cost, and what reusing steps saved.

Counted per turn, summed per thread and per evaluation:

* **Model calls** (every call sent; one that failed without a reply adds no tokens) and
  their prompt and completion tokens: the model server's own counts
  (its ``usage``) where it sent them, an estimate (four characters a token, of the prompt
  sent and of the reply's text and tool-call arguments) where it did not; ``counted_by``
  says which (``server``, ``estimate``, ``mixed``, or ``none`` for no call).
* **Cost**, in USD, only where a price is configured for the model (:class:`Price`, per
  million prompt and completion tokens); otherwise ``None``: tokens only, never a made-up cost.
  A sum over calls some of which have no price has no cost either.
* **A step's cost** is its share of the model call that issued it: that call's tokens (and
  cost) divided equally among the steps (``run_sql``/``run_python``, a plan's steps included)
  asked for by the calls of its reply, the remainder to the first ones, so the shares add up
  to the call. A step the user drove (``%analyst_sql``, an MCP call) has no model call: it
  costs no tokens. Its execution time is what the step ran for.
* **Saved**: a reused step did not run: what it saved is its run, the execution time of the
  step it reuses. The model call that asked for it was still made (and is counted), so the
  recorded token share and cost of that step are kept beside it as what the step first
  cost, never said to be saved. A step recorded before the ledger existed has no recorded
  tokens: it is counted in ``saved.untracked``, its time still saved.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from .errors import ConfigError

#: Where a token count comes from (see the module docstring).
CountedBy = Literal["server", "estimate", "mixed", "none"]

#: Tokens per million, the unit prices are given in.
PER = 1_000_000

_PRICE_TEXT = re.compile(r"\s*(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)\s*")


class Price(BaseModel, extra="forbid"):
    """What a model's tokens cost, in USD per million tokens."""

    prompt: float = Field(ge=0, allow_inf_nan=False)
    """USD per million prompt (input) tokens."""
    completion: float = Field(ge=0, allow_inf_nan=False)
    """USD per million completion (output) tokens."""

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """What these tokens cost, in USD.

        >>> Price(prompt=0.15, completion=0.60).cost(1_000_000, 500_000)
        0.45
        """
        return round((prompt_tokens * self.prompt + completion_tokens * self.completion) / PER, 10)


def parse_price(text: str) -> Price:
    """A price from ``PROMPT/COMPLETION`` (USD per million tokens), as ``--price`` takes it.

    >>> parse_price("0.15/0.60")
    Price(prompt=0.15, completion=0.6)
    >>> try:
    ...     parse_price("cheap")
    ... except ConfigError as exc:
    ...     print(exc.message)
    invalid price 'cheap'
    """
    match = _PRICE_TEXT.fullmatch(text)
    if match is None:
        raise ConfigError(f"invalid price {text!r}", reason="invalid_price",
                          hint="give USD per million prompt/completion tokens, e.g. 0.15/0.60")
    return Price(prompt=float(match[1]), completion=float(match[2]))


def parse_prices(value: Mapping[str, Any]) -> dict[str, Price]:
    """Prices per model name, from ``{"model": {"prompt": USD, "completion": USD}}`` (per
    million tokens) or ``{"model": "PROMPT/COMPLETION"}``; a clear error naming the model
    whose price is wrong.

    >>> parse_prices({"gpt-4o-mini": {"prompt": 0.15, "completion": 0.6}, "local": "0/0"})["local"]
    Price(prompt=0.0, completion=0.0)
    >>> try:
    ...     parse_prices({"gpt-4o-mini": {"prompt": -1, "completion": 0.6}})
    ... except ConfigError as exc:
    ...     print(exc.message)
    invalid price for model 'gpt-4o-mini': prompt: Input should be greater than or equal to 0
    """
    if not isinstance(value, Mapping):
        raise ConfigError("prices must be a mapping of model name -> price", reason="invalid_price",
                          hint='e.g. {"gpt-4o-mini": {"prompt": 0.15, "completion": 0.60}} (USD per 1M tokens)')
    prices: dict[str, Price] = {}
    for model, price in value.items():
        if not isinstance(model, str) or not model:
            raise ConfigError(f"invalid model name {model!r} in prices", reason="invalid_price")
        try:
            prices[model] = parse_price(price) if isinstance(price, str) else Price.model_validate(price)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'price'}: {e['msg']}" for e in exc.errors())
            raise ConfigError(f"invalid price for model {model!r}: {problems}", reason="invalid_price",
                              hint='give {"prompt": USD, "completion": USD} per million tokens, or "0.15/0.60"') from None
        except ConfigError as exc:
            raise ConfigError(f"invalid price for model {model!r}: {exc.message}", reason="invalid_price",
                              hint=exc.hint) from None
    return prices


def _counted(a: CountedBy, b: CountedBy) -> CountedBy:
    kinds = {k for k in (a, b) if k != "none"}
    return kinds.pop() if len(kinds) == 1 else "mixed" if kinds else "none"


class Tokens(BaseModel):
    """Prompt and completion tokens, how they were counted, and their cost where priced."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    counted_by: CountedBy = "none"
    cost_usd: float | None = None
    """``None`` when some of these tokens have no price."""

    @property
    def empty(self) -> bool:
        """No tokens at all (a failed call's, a user's step's): no price needed to add them."""
        return self.counted_by == "none" and not self.prompt_tokens and not self.completion_tokens

    def _summed(self, other: Tokens) -> dict[str, Any]:
        cost = (other.cost_usd if self.empty else self.cost_usd if other.empty
                else None if self.cost_usd is None or other.cost_usd is None
                else round(self.cost_usd + other.cost_usd, 10))
        return {"prompt_tokens": self.prompt_tokens + other.prompt_tokens,
                "completion_tokens": self.completion_tokens + other.completion_tokens,
                "counted_by": _counted(self.counted_by, other.counted_by), "cost_usd": cost}

    def plus(self, other: Tokens) -> Tokens:
        """Both together; a cost only when both have one.

        >>> Tokens(prompt_tokens=10, counted_by="server", cost_usd=0.5).plus(Tokens(prompt_tokens=5, counted_by="estimate"))
        Tokens(prompt_tokens=15, completion_tokens=0, counted_by='mixed', cost_usd=None)
        """
        return Tokens(**self._summed(other))

    def shares(self, n: int) -> list[Tokens]:
        """These tokens in ``n`` equal shares, the remainder to the first ones; the shares add
        up to the whole (the cost in proportion).

        >>> [t.prompt_tokens for t in Tokens(prompt_tokens=10, completion_tokens=3, counted_by="server").shares(3)]
        [4, 3, 3]
        """
        out = []
        for i in range(n):
            prompt = self.prompt_tokens // n + (i < self.prompt_tokens % n)
            completion = self.completion_tokens // n + (i < self.completion_tokens % n)
            cost = None if self.cost_usd is None else round(self.cost_usd / n, 10)
            out.append(Tokens(prompt_tokens=prompt, completion_tokens=completion, counted_by=self.counted_by,
                              cost_usd=cost))
        return out


class Usage(Tokens):
    """Model calls and their tokens."""

    calls: int = 0

    def plus(self, other: Tokens) -> Usage:
        """Both together.

        >>> Usage(calls=1, prompt_tokens=10, counted_by="server").plus(Usage(calls=2, prompt_tokens=5, counted_by="estimate"))
        Usage(prompt_tokens=15, completion_tokens=0, counted_by='mixed', cost_usd=None, calls=3)
        """
        return Usage(**self._summed(other), calls=self.calls + getattr(other, "calls", 0))


class StepCost(Tokens):
    """What one executed step cost: its share of the model call that issued it (see the module docstring)."""

    model_call: int | None = None
    """The model call of its turn that issued it; ``None`` for a step the user drove."""
    shared_by: int = 1
    """How many steps that call's tokens were divided among."""


class Saved(Tokens):
    """What reused steps saved: their runs (``execution_s``), with what the steps they reuse
    first cost in tokens (their model calls were made again: those tokens are not saved)."""

    steps: int = 0
    execution_s: float = 0.0
    """The time the reused steps took when they ran."""
    untracked: int = 0
    """Reused steps recorded without their tokens (before the ledger): their time is counted, their tokens not."""

    def plus(self, other: Tokens) -> Saved:
        extra = other if isinstance(other, Saved) else Saved()
        return Saved(**self._summed(other), steps=self.steps + extra.steps,
                     execution_s=round(self.execution_s + extra.execution_s, 4),
                     untracked=self.untracked + extra.untracked)

    def reused(self, cost: StepCost | None, duration_s: float) -> Saved:
        """With one more reused step, whose original cost ``cost`` (``None``: not recorded) took ``duration_s``."""
        base = self.plus(cost.model_copy() if cost is not None else Tokens())
        return base.model_copy(update={"steps": base.steps + 1, "execution_s": round(base.execution_s + duration_s, 4),
                                       "untracked": base.untracked + (cost is None)})


class Ledger(BaseModel):
    """The cost of one turn, or the sum of several (a thread, an evaluation)."""

    usage: Usage = Usage()
    """The model calls made and their tokens."""
    steps: int = 0
    """Steps executed."""
    execution_s: float = 0.0
    """The time the executed steps ran."""
    saved: Saved = Saved()
    """What reused steps saved."""
    price: Price | None = None
    """The price the cost was counted at (one turn's; ``None`` in a sum of several)."""
    summarizer: Usage = Usage()
    """The end-of-turn summarizer's call, made after the turn's answer (at the summarizer
    model's price): added to the turn's stored ledger when it answers, so a thread's sum counts
    it, while what a turn showed at its end could not."""

    def plus(self, other: Ledger) -> Ledger:
        """Both together.

        >>> a = Ledger(usage=Usage(calls=1, prompt_tokens=100, counted_by="server", cost_usd=0.1), steps=1)
        >>> a.plus(a).usage.cost_usd, a.plus(a).steps
        (0.2, 2)
        """
        return Ledger(usage=self.usage.plus(other.usage), steps=self.steps + other.steps,
                      execution_s=round(self.execution_s + other.execution_s, 4), saved=self.saved.plus(other.saved),
                      price=self.price if self.price == other.price else None,
                      summarizer=self.summarizer.plus(other.summarizer))

    @classmethod
    def total(cls, ledgers: list[Ledger]) -> Ledger:
        """The sum of ``ledgers`` (an empty ledger for none)."""
        out = cls()
        for i, ledger in enumerate(ledgers):
            out = ledger if i == 0 else out.plus(ledger)
        return out


def money(usd: float | None) -> str:
    """A cost as people read it: cents to four places below a cent.

    >>> money(0.000123), money(1.5), money(None)
    ('$0.000123', '$1.50', 'no price')
    """
    if usd is None:
        return "no price"
    return f"${usd:.2f}" if usd >= 0.995 else f"${usd:.6f}".rstrip("0").rstrip(".") if usd else "$0"


def describe(ledger: Ledger) -> str:
    """The ledger in one line, for the CLI summary and the notebook's header.

    >>> print(describe(Ledger(usage=Usage(calls=2, prompt_tokens=1200, completion_tokens=80, counted_by="server",
    ...                                     cost_usd=0.00023), steps=1, execution_s=0.5)))
    2 model calls, 1,200 prompt + 80 completion tokens (counted by the server), $0.00023; 1 SQL/Python step executed in 0.50 s

    Reuse saves a step's run, not the model call that asked for it (that call was made and is
    counted above): what the step cost when it first ran is said as that, not as saved.

    >>> print(describe(Ledger(saved=Saved(steps=1, prompt_tokens=1015, completion_tokens=50, execution_s=1.15))))
    0 model calls, 0 prompt + 0 completion tokens (no model call), no price; 0 SQL/Python steps executed in 0.00 s; reuse saved 1 step's run: 1.15 s (it first cost 1,015 prompt + 50 completion tokens, no price)
    """
    usage = ledger.usage
    how = {"server": "counted by the server", "estimate": "estimated", "mixed": "partly estimated",
           "none": "no model call"}[usage.counted_by]
    line = (f"{usage.calls} model call{'s' * (usage.calls != 1)}, {usage.prompt_tokens:,} prompt + "
            f"{usage.completion_tokens:,} completion tokens ({how}), {money(usage.cost_usd)}; "
            f"{ledger.steps} SQL/Python step{'s' * (ledger.steps != 1)} executed in {ledger.execution_s:.2f} s")
    summarizer = ledger.summarizer
    if summarizer.calls:
        line += (f"; summarizer after the turn: {summarizer.calls} call{'s' * (summarizer.calls != 1)}, "
                 f"{summarizer.prompt_tokens:,} prompt + {summarizer.completion_tokens:,} completion tokens, "
                 f"{money(summarizer.cost_usd)}")
    saved = ledger.saved
    if saved.steps:
        one = saved.steps == 1
        line += (f"; reuse saved {saved.steps} step{'' if one else 's'}'{'s' if one else ''} run: {saved.execution_s:.2f} s "
                 f"({'it' if one else 'they'} first cost {saved.prompt_tokens:,} prompt + {saved.completion_tokens:,} "
                 f"completion tokens, {money(saved.cost_usd)}")
        if saved.untracked:
            line += f"; {saved.untracked} recorded without tokens"
        line += ")"
    return line
