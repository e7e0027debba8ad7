"""A thread's turns: start one and stream its events, follow or read the events again from a
sequence number, stop the running one."""

from __future__ import annotations

import asyncio

from jupyter_core.utils import ensure_async
from jupyter_server.auth.decorator import authorized
from tornado import web

from ...errors import AnalystError, ConfigError
from ...notebooks import AttachedNotebook
from .. import sse
from ..contents import refuse_links
from ..inputs import CancelTurn, EventsQuery, InvalidRequest, NewTurn, parse_fields
from .base import AnalystHandler


class TurnsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Start a turn ``{prompt, source?, rerun?}`` and stream its events."""
        thread = self.owned_thread(thread_id)
        request = self.body(NewTurn)
        try:
            request.check_size(self.limits)
        except InvalidRequest as exc:
            raise self.refuse(exc) from None
        attached = None
        if request.notebook is not None:
            path = request.notebook
            attached = (await self.attached_notebook(path)).read_again_with(lambda: self.attached_notebook(path))
        # Not awaited here: a turn asked while the engine is still being imported is announced
        # at once and says that it waits for it (ThreadService.start_turn).
        with self.service.listen(thread_id) as queue:
            before = self.service.workspace.store.last_seq(thread_id)
            try:
                task = self.service.start_turn(thread, request.prompt, source=request.source, rerun=request.rerun,
                                               attached=attached)
            except AnalystError as exc:
                raise self.refuse(exc) from None
            sse.start(self)
            try:
                backlog = self.service.workspace.store.events(thread_id, after=before)
                await sse.relay(self, backlog, queue, follow=True)
            except Exception as exc:  # the stream has begun: its end says why, not a status
                self.log.error("the events of a turn on %s could not be sent", thread_id, exc_info=exc)
                sse.end_with_error(self, exc)
                self.finish()
                return
        # The turn's last events are out; its notebook and kernel are being finished. The
        # response ends when they are, so what the client asks next is already there.
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            pass
        except Exception as exc:
            self.log.error("a turn on %s failed", thread_id, exc_info=exc)
            sse.end_with_error(self, exc)
        self.finish()


    async def attached_notebook(self, path: str) -> AttachedNotebook:
        """The caller's notebook, read through the contents manager (which keeps to the
        server's root and its rules on hidden files), for the turn to work beside. One that
        is not there, goes through a link, or is too large is attached with a note saying so:
        the turn runs, and the model is told."""
        from ...notebooks import MAX_NOTEBOOK_BYTES, attached_text

        cm = self.contents_manager
        try:
            refuse_links(cm, path)
            info = await ensure_async(cm.get(path, content=False, type="notebook"))
            size = info.get("size")
            if isinstance(size, int) and size > MAX_NOTEBOOK_BYTES:
                return AttachedNotebook(path=path, problem=f"it is {size:,} bytes; at most {MAX_NOTEBOOK_BYTES:,} are read")
            # Its text, not the notebook model: the outline needs the JSON alone, and the
            # model's nbformat validation is most of the time a read takes.
            model = await ensure_async(cm.get(path, content=True, type="file", format="text"))
        except ConfigError:
            return AttachedNotebook(path=path, problem="the path goes through a link, which is not followed")
        except web.HTTPError:
            return AttachedNotebook(path=path, problem="there is no such notebook in the user's Jupyter folder")
        return attached_text(path, model["content"]) if isinstance(model.get("content"), str) else \
            AttachedNotebook(path=path, problem="it could not be read as text")


class EventsHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """Events after ``?after=N`` (or ``Last-Event-ID``); a stream with ``Accept: text/event-stream``."""
        self.owned_thread(thread_id)
        resume = self.request.headers.get("Last-Event-ID")
        if resume:  # checked even when ?after wins: a client sending nonsense is told so
            try:
                parse_fields(EventsQuery, {"after": resume})
            except InvalidRequest as exc:
                raise self.refuse(InvalidRequest(f"Last-Event-ID: {exc.message}", reason=exc.reason,
                                                 hint="send the `id:` of the last event received")) from None
        after = self.query(EventsQuery, after=resume).after
        store = self.service.workspace.store
        if "text/event-stream" not in self.request.headers.get("Accept", ""):
            self.reply({"events": [e.model_dump() for e in store.events(thread_id, after=after)]})
            return
        with self.service.listen(thread_id) as queue:
            # Whether a turn runs is asked before the backlog is read: a turn that ends in
            # between (in another process, on a shared store) then has its end in the
            # backlog or the queue. Asked after, the stream would stop short of that end.
            follow = self.service.is_following(thread_id)
            backlog = store.events(thread_id, after=after)
            sse.start(self)
            try:
                await sse.relay(self, backlog, queue, follow=follow)
            except Exception as exc:  # the stream has begun: its end says why, not a status
                self.log.error("the events of %s could not be sent", thread_id, exc_info=exc)
                sse.end_with_error(self, exc)
        self.finish()


class CancelHandler(AnalystHandler):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Stop the running turn; what it completed is kept."""
        self.owned_thread(thread_id)
        self.body(CancelTurn)
        cancelled = await self.service.cancel(thread_id)
        self.reply({"cancelled": cancelled})
