"""A user's threads: list and create them, read one (its turns, its live kernel), read its
agent state and the tables of its source."""

from __future__ import annotations

import asyncio

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...errors import AnalystError
from ...ledger import Ledger
from ..inputs import NewThread, ThreadChange
from ..tables import generic_questions, scripted_questions, source_tables
from .base import AnalystHandler


class ThreadsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self) -> None:
        """The caller's threads, the most recently active first."""
        threads = self.service.workspace.store.list_threads(user=self.user_name)
        self.reply({"threads": [self.shown(t) for t in threads]})

    @web.authenticated
    @authorized
    async def post(self) -> None:
        """A new thread: ``{source?, title?}``, ``source`` a configured source's name."""
        request = self.body(NewThread)
        try:
            thread = self.service.create_thread(self.user_name, request.source, request.title)
        except AnalystError as exc:
            raise self.refuse(exc) from None
        self.reply(self.shown(thread), status=201)


class ThreadHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """A thread, its turns, whether a turn is running, and its live kernel (to attach to)."""
        thread = self.owned_thread(thread_id)
        store = self.service.workspace.store
        turns = store.turns(thread_id)
        self.reply({
            **self.shown(thread),
            "turns": [t.model_dump(mode="json") for t in turns],
            "ledger": Ledger.total([t.ledger for t in turns if t.ledger is not None]).model_dump(mode="json"),
            "active": self.service.is_active(thread_id),
            "last_seq": store.last_seq(thread_id),
            "kernel": self.service.kernel_of(thread_id),
        })


    @web.authenticated
    @authorized
    async def patch(self, thread_id: str) -> None:
        """Rename the thread: ``{title}``."""
        thread = self.owned_thread(thread_id)
        change = self.body(ThreadChange)
        self.reply(self.shown(self.service.rename_thread(thread, change.title)))

    @web.authenticated
    @authorized
    async def delete(self, thread_id: str) -> None:
        """Delete the thread and what it made (409 while a turn runs on it)."""
        thread = self.owned_thread(thread_id)
        try:
            count = await self.service.delete_thread(thread)
        except AnalystError as exc:
            raise self.refuse(exc) from None
        self.reply({"thread_id": thread_id, "artifacts": count})


class StateHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The thread's agent state: never shown in the chat, served when asked for."""
        self.owned_thread(thread_id)
        state = self.service.workspace.store.agent_state(thread_id)
        self.reply(state.model_dump(mode="json"))


class TablesHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The tables of the thread's source (names, row counts when read in time) and questions
        to start from: what the panel shows in a thread with no turn yet."""
        thread = self.owned_thread(thread_id)
        service = self.service
        try:
            spec = service.catalog.for_thread(thread.source)
            # Opening the source and counting its tables blocks: off the loop, which other
            # requests share.
            tables, more = await asyncio.to_thread(source_tables, spec, service.config.engine)
        except AnalystError as exc:
            raise self.refuse(exc) from None
        engine = await service.engine.ready()
        model = service.model
        scripted = model is not None and model.model == engine.scripted_model
        suggestions = scripted_questions() if scripted else generic_questions([t["name"] for t in tables])
        self.reply({"source": service.catalog.name_of(spec), "tables": tables, "more": more,
                    "suggestions": suggestions})
