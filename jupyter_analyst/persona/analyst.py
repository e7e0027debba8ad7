"""The "Analyst" persona of Jupyter AI: a chat message runs a turn of this product.

Loaded by Jupyter AI's persona manager from the ``jupyter_ai.personas`` entry point, and only
there: this module needs ``jupyter-ai-persona-manager`` (``pip install
'jupyter-analyst[jupyter-ai]'``); nothing else in the package imports it.

Each chat has one thread per owner, bound in the workspace's store (so the chat goes on with
its thread after a restart, on any server of a shared store). A message is one turn of that
thread, run by the server's thread service like a turn of the Data analyst panel; the turn's
events stream into one chat message (reply.py). The chat's stop button cancels the turn, which
keeps what it completed. The tokens the model server counted are reported as the persona's usage.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from time import time
from typing import Any

from jupyter_ai_persona_manager import BasePersona, PersonaDefaults, Usage
from jupyterlab_chat.models import Message, NewMessage

from ..errors import AnalystError
from ..events import ContextUsage, Event, TurnEnded
from ..untrusted import markdown_inline
from .service_finder import analyst_service, base_url_of
from .chat_message import ChatReply, usage_of

#: The host a chat's binding to its thread is stored under.
HOST = "jupyter-ai"
AVATAR = Path(__file__).with_name("avatar.svg")


class AnalystPersona(BasePersona):
    """Answers questions about data with jupyter-analyst: SQL into datasets, Python in a sandbox."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: The service and thread of the turn running for this chat, for the stop button.
        self._running: tuple[Any, str] | None = None

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(
            name="Analyst",
            description="Answers questions about your data: runs read-only SQL into datasets and Python in a "
                        "sandboxed kernel, and keeps every step in an audit notebook (jupyter-analyst).",
            avatar_path=str(AVATAR),
            # The model is told the product's own rules (agent/context/), not a persona's prompt.
            system_prompt="",
            slash_commands=set(),
        )

    async def process_message(self, message: Message) -> None:
        prompt = self._prompt(message.body)
        if not prompt:
            return
        try:
            service, owner = analyst_service(self)
            thread = await asyncio.to_thread(self._thread, service, owner, prompt)
            await service.engine.ready()  # imported off the loop, the first time
            await self._run(service, thread, prompt)
        except AnalystError as exc:
            hint = f" ({markdown_inline(exc.hint)})" if exc.hint else ""
            self.send_message(f"The turn did not start: {markdown_inline(exc.message)}{hint}")

    async def cancel_response(self) -> None:
        running = self._running
        if running is not None:
            service, thread_id = running
            await service.cancel(thread_id)

    def _prompt(self, body: str) -> str:
        """The message without the mention that addressed it to this persona."""
        text = body.strip()
        mention = f"@{self.as_user().mention_name}"
        return text[len(mention):].strip() if text.startswith(mention) else text

    def _thread(self, service: Any, owner: str, prompt: str) -> Any:
        """This chat's thread for ``owner``: the one bound to the chat, else a new one (on the
        server's default source, titled by its first prompt) bound now."""
        store, chat_id = service.workspace.store, self.chat.get_id()
        thread = store.bound_thread(HOST, chat_id, user=owner)
        if thread is None:
            title = " ".join(prompt.split())[:80]
            thread = store.bind_thread(HOST, chat_id, service.create_thread(owner, None, title))
        return thread

    async def _run(self, service: Any, thread: Any, prompt: str) -> None:
        """One turn of the thread, its events shown in one message as they come."""
        store, reply = service.workspace.store, ChatReply(thread.thread_id, base_url=base_url_of(self))
        posted: str | None = None
        self.set_status("is analysing...")
        try:
            with service.listen(thread.thread_id) as queue:
                before = store.last_seq(thread.thread_id)
                task = service.start_turn(thread, prompt)
                self._running = (service, thread.thread_id)
                async for event in _turn_events(store.events(thread.thread_id, after=before), queue):
                    if isinstance(event, ContextUsage) and (used := usage_of(event)) is not None:
                        self.report_usage(Usage(**used), append=True)
                    # Posted when nothing more is waiting: a burst of text is one update.
                    if reply.apply(event) and (queue.empty() or isinstance(event, TurnEnded)):
                        posted = self._post(posted, reply.body)
            # The turn's notebook and kernel are being finished: the chat's next message finds them done.
            await asyncio.wait({task})
        finally:
            self._running = None
            self.clear_status()
        if posted is None or reply.status is None:
            self._post(posted, reply.body)

    def _post(self, message_id: str | None, body: str) -> str:
        if message_id is None:
            return self.chat.add_message(NewMessage(body=body, sender=self.id))
        # Replaced whole (never appended: the shown text is re-made inert as a whole), and
        # no action is triggered: a mention the model writes addresses no other persona.
        self.chat.update_message(Message(id=message_id, body=body, time=time(), sender=self.id, raw_time=False),
                                 append=False, trigger_actions=[])
        return message_id


async def _turn_events(backlog: list[Event], queue: asyncio.Queue[Event | None]) -> AsyncIterator[Event]:
    """The running turn's events from the first: the backlog, then live ones without
    duplicates, until the turn ends (or its task fails: ``None`` in the queue)."""
    last = 0
    for event in backlog:
        yield event
        last = event.seq
        if isinstance(event, TurnEnded):
            return
    while (event := await queue.get()) is not None:
        if event.seq <= last:
            continue
        yield event
        last = event.seq
        if isinstance(event, TurnEnded):
            return
