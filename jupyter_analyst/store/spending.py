"""What the model's calls spent, call by call, per user, thread and day: what budgets are
checked against (see jupyter_analyst/budgets.py).

A model call is reserved before it is sent (its prompt's estimate) and settled once its
reply says what it cost; the check and the reservation are one transaction under one lock
(SQLite's write lock; on PostgreSQL an advisory lock every process takes), so two turns asking
at once see each other's calls: each can overspend by its own call, never by a run of them.
A reservation never settled (its process died mid-call) keeps counting its estimate.

Rows outlive their thread: deleting a thread does not give its tokens back.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .._clock import new_id, stamp
from ..budgets import SCOPES, BudgetLine, Budgets, Rule, Spent
from .database import DatabaseStore

#: The key of the lock a reservation takes on PostgreSQL (a name no thread id has).
BUDGET_LOCK = "budget:spending"


def insert_spend(cur: Any, *, user: str, thread_id: str, turn_id: str | None, at: datetime, tokens: int,
                 usd: float | None, settled: bool) -> str:
    """Store one call's spending (or its reservation); its id."""
    spend_id = new_id("spend")
    cur.execute(
        'INSERT INTO model_spend (spend_id, "user", thread_id, turn_id, at, tokens, cost_usd, settled) '
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (spend_id, user, thread_id, turn_id, stamp(at), tokens, usd, int(settled)),
    )
    return spend_id


class SpendLog(DatabaseStore):
    """The model's calls, as budgets count them (a part of :class:`~.threads.ThreadStore`)."""

    def reserve_spend(self, budgets: Budgets, *, user: str, thread_id: str, turn_id: str | None, tokens: int,
                      usd: float | None, now: datetime) -> str | list[BudgetLine]:
        """Reserve a model call of about ``tokens`` (``usd``) when no limit of ``budgets`` that
        applies to it is reached: its reservation's id; else the lines that are reached, and
        nothing reserved."""
        with self._tx() as cur:
            self.backend.lock_thread(cur, BUDGET_LOCK)
            spent = self._lines(cur, budgets, user=user, thread_id=thread_id, now=now)
            reached = [line for line in spent if line.exhausted]
            if reached:
                return reached
            return insert_spend(cur, user=user, thread_id=thread_id, turn_id=turn_id, at=now, tokens=tokens,
                                usd=usd, settled=False)

    def settle_spend(self, spend_id: str, *, tokens: int, usd: float | None) -> None:
        """What the reserved call did cost, once its reply (or its failure) is in."""
        with self._tx() as cur:
            cur.execute("UPDATE model_spend SET tokens = ?, cost_usd = ?, settled = 1 WHERE spend_id = ?",
                        (tokens, usd, spend_id))

    def budget_lines(self, budgets: Budgets, *, user: str, thread_id: str | None, now: datetime) -> list[BudgetLine]:
        """Each rule of ``budgets`` that applies to ``user`` (and ``thread_id``: without one,
        the thread rules are left out) with what was spent against it."""
        with self._tx() as cur:
            return self._lines(cur, budgets, user=user, thread_id=thread_id, now=now)

    def spending_by_user(self, start: datetime | None = None, end: datetime | None = None) -> dict[str, Spent]:
        """What each user's model calls spent between ``start`` and ``end`` (UTC; ``None``: no bound)."""
        where, params = _window(start, end)
        rows = self._query(
            f'SELECT "user", COALESCE(SUM(tokens), 0), COALESCE(SUM(cost_usd), 0), COUNT(*) FROM model_spend '
            f'WHERE {where} GROUP BY "user" ORDER BY "user"', params)
        return {row[0]: Spent(tokens=int(row[1]), usd=float(row[2]), calls=int(row[3])) for row in rows}

    def _lines(self, cur: Any, budgets: Budgets, *, user: str, thread_id: str | None, now: datetime) -> list[BudgetLine]:
        day = budgets.day(now)
        lines = []
        for rule in sorted(budgets.rules, key=lambda r: (SCOPES.index(r.scope), r.period)):
            if rule.scope == "thread" and thread_id is None:
                continue
            window = day if rule.period == "day" else (None, None)
            spent = self._spent(cur, rule, window, user=user, thread_id=thread_id)
            lines.append(BudgetLine.of(rule, spent, stamp(day[1]) if rule.period == "day" else None))
        return lines

    @staticmethod
    def _spent(cur: Any, rule: Rule, window: tuple[datetime | None, datetime | None], *, user: str,
               thread_id: str | None) -> Spent:
        where, params = _window(*window)
        if rule.scope == "user":
            where, params = f'{where} AND "user" = ?', (*params, user)
        elif rule.scope == "thread":
            where, params = f"{where} AND thread_id = ?", (*params, thread_id)
        row = cur.execute(
            f"SELECT COALESCE(SUM(tokens), 0), COALESCE(SUM(cost_usd), 0), COUNT(*) FROM model_spend WHERE {where}",
            params).fetchone()
        return Spent(tokens=int(row[0]), usd=float(row[1]), calls=int(row[2]))


def _window(start: datetime | None, end: datetime | None) -> tuple[str, tuple[Any, ...]]:
    """The condition of rows from ``start`` (inclusive) to ``end`` (exclusive)."""
    where, params = "1 = 1", ()
    if start is not None:
        where, params = f"{where} AND at >= ?", (*params, stamp(start))
    if end is not None:
        where, params = f"{where} AND at < ?", (*params, stamp(end))
    return where, params
