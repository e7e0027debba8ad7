"""Budgets: what the caller may still spend, and (for the server's administrators) what every
user spent on a day."""

from __future__ import annotations

import asyncio
import os

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...errors import ConfigError
from ..inputs import BudgetQuery, SpendingQuery
from .base import AnalystHandler


class BudgetHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The caller's budgets as they stand: limit, spent, left, when each resets."""
        query = self.query(BudgetQuery)
        if query.thread_id is not None:
            self.owned_thread(query.thread_id)  # 404 for anyone else's
        reply = await asyncio.to_thread(self.service.budget, self.user_name, query.thread_id)
        self.reply(reply.model_dump())


class SpendingHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """Every user's spending on a day: for the server's owner and its budget administrators."""
        if not self.is_budget_admin:
            raise self.refuse(ConfigError("only the server's owner and its budget administrators see every "
                                          "user's spending", reason="not_budget_admin",
                                          hint="GET budget shows your own; c.AnalystApp.budget_admins names others"),
                              403)
        query = self.query(SpendingQuery)
        reply = await asyncio.to_thread(self.service.spending, query.day)
        self.reply(reply.model_dump())

    @property
    def is_budget_admin(self) -> bool:
        """One of ``c.AnalystApp.budget_admins``, or the server's owner: a single-user server's
        token holder, or the JupyterHub user whose server this is when its store is its own.
        On a shared store every Hub user owns a server of it, and what it lists is every
        user's: there only the configured administrators see it."""
        user = self.user_name
        if user in self.service.budget_admins:
            return True
        if type(self.identity_provider).__module__.startswith("jupyter_server.auth"):
            return True  # one owner: whoever holds the server's token (user_name is "local")
        owner = os.environ.get("JUPYTERHUB_USER")
        return bool(owner) and user == owner and self.service.workspace.store_url is None
