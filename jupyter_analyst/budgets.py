"""Budgets: how many tokens, or how many dollars, the model may spend for one user, one thread
or the whole server, each over a day or for good.

A budget is a set of rules, each a scope (``user``, ``thread``, ``server``), a period (a day,
or ``total``: for good) and a limit (tokens, USD, or both). They are checked before each model
call against what the store has counted of the calls before it (``store/spending.py``): once
what a scope spent in its period reaches a limit, the turn ends ``budget_exhausted`` and says
what was spent, the limit, and when it resets. A day is a calendar day in the budget's time
zone (UTC unless configured): a daily limit resets at its midnight.

Configured as ``c.AnalystApp.budgets`` or ``--budget KEY=LIMIT``::

    {"user/day": "200k tokens", "thread": "50k tokens", "server/day": "$20", "timezone": "Europe/Paris"}

A limit is ``"N tokens"`` (``k``/``M`` allowed: ``200k tokens``), ``"$X"``, both joined by a
comma, or ``{"tokens": N, "usd": X}``. A cost limit counts only priced calls, so it needs a
price for the model (``prices``): a turn without one is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, Field, ValidationError, model_validator

from .errors import ConfigError

Scope = Literal["user", "thread", "server"]
Period = Literal["day", "total"]

#: The scopes in the order a budget's lines and its messages give them.
SCOPES: tuple[Scope, ...] = ("server", "user", "thread")
_KEY = re.compile(r"(user|thread|server)(?:/(day|total))?")
_TOKENS = re.compile(r"(\d[\d_]*(?:\.\d+)?)\s*([kKmM]?)\s*tokens?")
_USD = re.compile(r"\$\s*(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*(?:usd|USD)")
_HINT = ('e.g. {"user/day": "200k tokens", "thread": "50k tokens", "server/day": "$20", "timezone": "UTC"}; '
         "keys: user, thread or server, each optionally /day")


class Limit(BaseModel, extra="forbid"):
    """Tokens (prompt and completion together), USD, or both: whichever is reached first."""

    tokens: int | None = Field(default=None, gt=0)
    usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _something(self) -> Limit:
        if self.tokens is None and self.usd is None:
            raise ValueError("a limit needs tokens, usd or both")
        return self


class Rule(BaseModel, extra="forbid"):
    """One limit on one scope over one period."""

    scope: Scope
    period: Period
    limit: Limit

    @property
    def key(self) -> str:
        """As configured: ``user/day``, ``thread``."""
        return self.scope if self.period == "total" else f"{self.scope}/{self.period}"


class Budgets(BaseModel, extra="forbid"):
    """The server's (or a command's) budget rules; none: nothing is limited."""

    rules: list[Rule] = []
    timezone: str = "UTC"
    """The zone whose midnight ends a day (an IANA name)."""

    @model_validator(mode="after")
    def _known_zone(self) -> Budgets:
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {self.timezone!r} (an IANA name, e.g. Europe/Paris)") from None
        return self

    @property
    def limited(self) -> bool:
        """Whether any rule is set."""
        return bool(self.rules)

    @property
    def zone(self) -> ZoneInfo:
        """The time zone whose midnight ends a day."""
        return ZoneInfo(self.timezone)

    @property
    def priced(self) -> bool:
        """Whether a rule limits cost (then the model needs a price)."""
        return any(rule.limit.usd is not None for rule in self.rules)

    def day(self, now: datetime) -> tuple[datetime, datetime]:
        """The day ``now`` falls in, as its start and end (UTC), in the budget's time zone.

        >>> start, end = Budgets(timezone="Europe/Paris").day(datetime(2026, 7, 1, 23, 30, tzinfo=UTC))
        >>> start.isoformat(), end.isoformat()
        ('2026-07-01T22:00:00+00:00', '2026-07-02T22:00:00+00:00')
        """
        zone = ZoneInfo(self.timezone)
        local = now.astimezone(zone).date()
        start = datetime(local.year, local.month, local.day, tzinfo=zone)
        after = local + timedelta(days=1)
        # Midnight of the next calendar day, not 24 hours on: a day of a clock change is 23 or 25 hours.
        end = datetime(after.year, after.month, after.day, tzinfo=zone)
        return start.astimezone(UTC), end.astimezone(UTC)


def parse_limit(value: Any, *, key: str = "limit") -> Limit:
    """A limit from ``"200k tokens"``, ``"$1.50"``, ``"200k tokens, $1.50"`` or a mapping.

    >>> parse_limit("200k tokens, $1.50")
    Limit(tokens=200000, usd=1.5)
    >>> try:
    ...     parse_limit("lots", key="user/day")
    ... except ConfigError as exc:
    ...     print(exc.message)
    invalid budget user/day: 'lots' is not a limit
    """
    if isinstance(value, Mapping):
        try:
            return Limit.model_validate(value)
        except ValidationError as exc:
            said = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'limit'}: {e['msg']}" for e in exc.errors())
            raise ConfigError(f"invalid budget {key}: {said}", reason="invalid_budget", hint=_HINT) from None
    if not isinstance(value, str):
        raise ConfigError(f"invalid budget {key}: {value!r} is not a limit", reason="invalid_budget", hint=_HINT)
    fields: dict[str, Any] = {}
    for piece in (p.strip() for p in value.split(",")):
        if (tokens := _TOKENS.fullmatch(piece)) is not None and "tokens" not in fields:
            scale = {"": 1, "k": 1_000, "m": 1_000_000}[tokens[2].lower()]
            fields["tokens"] = round(float(tokens[1].replace("_", "")) * scale)
        elif (usd := _USD.fullmatch(piece)) is not None and "usd" not in fields:
            fields["usd"] = float(usd[1] or usd[2])
        else:
            raise ConfigError(f"invalid budget {key}: {value!r} is not a limit", reason="invalid_budget",
                              hint='say "N tokens" (200k, 2M allowed), "$X", or both joined by a comma')
    return parse_limit(fields, key=key)


def parse_budgets(value: Mapping[str, Any] | Budgets | None) -> Budgets:
    """The budget of ``{"user/day": limit, "thread": limit, ..., "timezone": zone}``.

    >>> [r.key for r in parse_budgets({"user/day": "10k tokens", "thread": {"usd": 2}}).rules]
    ['user/day', 'thread']
    >>> try:
    ...     parse_budgets({"team/day": "$5"})
    ... except ConfigError as exc:
    ...     print(exc.message)
    unknown budget 'team/day'
    """
    if value is None:
        return Budgets()
    if isinstance(value, Budgets):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError("budgets must be a mapping of scope -> limit", reason="invalid_budget", hint=_HINT)
    rules: list[Rule] = []
    zone = "UTC"
    for key, limit in value.items():
        if key == "timezone":
            zone = limit
            continue
        match = _KEY.fullmatch(key) if isinstance(key, str) else None
        if match is None:
            raise ConfigError(f"unknown budget {key!r}", reason="invalid_budget", hint=_HINT)
        rules.append(Rule(scope=match[1], period=match[2] or "total", limit=parse_limit(limit, key=key)))  # type: ignore[arg-type]
    try:
        return Budgets(rules=rules, timezone=zone)
    except ValidationError as exc:
        raise ConfigError(f"invalid budget timezone: {exc.errors()[0]['msg'].removeprefix('Value error, ')}",
                          reason="invalid_budget", hint=_HINT) from None


class Spent(BaseModel):
    """What one scope spent in one period: tokens, USD of the priced calls, calls."""

    tokens: int = 0
    usd: float = 0.0
    calls: int = 0


class BudgetLine(BaseModel):
    """One rule as it stands: its limit, what was spent, what is left, when it resets."""

    scope: Scope
    period: Period
    limit_tokens: int | None
    limit_usd: float | None
    spent_tokens: int
    spent_usd: float
    left_tokens: int | None
    """Tokens still allowed (0 once spent); ``None`` when the rule limits no tokens."""
    left_usd: float | None
    exhausted: bool
    """The limit is reached: the next model call in this scope is refused."""
    resets_at: str | None
    """When a daily limit starts again (ISO-8601 UTC); ``None`` for a total one, which never does."""

    @classmethod
    def of(cls, rule: Rule, spent: Spent, resets_at: str | None) -> BudgetLine:
        """``rule`` with ``spent`` counted against it.

        >>> line = BudgetLine.of(Rule(scope="user", period="day", limit=Limit(tokens=100)), Spent(tokens=120), None)
        >>> line.left_tokens, line.exhausted
        (0, True)
        """
        limit = rule.limit
        left_tokens = None if limit.tokens is None else max(limit.tokens - spent.tokens, 0)
        left_usd = None if limit.usd is None else round(max(limit.usd - spent.usd, 0.0), 10)
        return cls(scope=rule.scope, period=rule.period, limit_tokens=limit.tokens, limit_usd=limit.usd,
                   spent_tokens=spent.tokens, spent_usd=round(spent.usd, 10), left_tokens=left_tokens,
                   left_usd=left_usd, exhausted=left_tokens == 0 or left_usd == 0, resets_at=resets_at)

    def message(self, *, user: str, timezone: str = "UTC") -> str:
        """Why a model call is refused, for a person: what was spent of what limit, and when
        it resets.

        >>> BudgetLine.of(Rule(scope="user", period="day", limit=Limit(tokens=10_000)), Spent(tokens=10_412),
        ...               "2026-12-05T00:00:00.000Z").message(user="ann")
        "the daily budget of user 'ann' is spent: 10,412 tokens used of 10,000 today; it resets at 2026-12-05 00:00 UTC"
        """
        whose = {"user": f"user {user!r}", "thread": "this thread", "server": "this server"}[self.scope]
        used = []
        if self.limit_tokens is not None:
            used.append(f"{self.spent_tokens:,} tokens used of {self.limit_tokens:,}")
        if self.limit_usd is not None:
            used.append(f"{_usd(self.spent_usd)} used of {_usd(self.limit_usd)}")
        if self.period == "day":
            assert self.resets_at is not None
            when = datetime.fromisoformat(self.resets_at.replace("Z", "+00:00")).astimezone(ZoneInfo(timezone))
            zone = "UTC" if timezone == "UTC" else f"{timezone} time"
            return (f"the daily budget of {whose} is spent: {' and '.join(used)} today; "
                    f"it resets at {when:%Y-%m-%d %H:%M} {zone}")
        hint = {"thread": "start a new thread", "user": "ask the server's administrator",
                "server": "ask the server's administrator"}[self.scope]
        return f"the budget of {whose} is spent: {' and '.join(used)}; it does not reset ({hint})"


def refusal(lines: list[BudgetLine], *, user: str, timezone: str = "UTC") -> str:
    """What a model call refused for the spent budgets ``lines`` says: each, in turn."""
    return "; ".join(line.message(user=user, timezone=timezone) for line in lines)


def _usd(value: float) -> str:
    """Dollars to four places, no trailing zeros.

    >>> _usd(20.13), _usd(5.0), _usd(0.00042)
    ('$20.13', '$5', '$0.0004')
    """
    return "$" + f"{value:,.4f}".rstrip("0").rstrip(".")
