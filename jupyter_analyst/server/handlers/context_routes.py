"""The team's context folder over the API: a completed turn's answer verified, and a turn's
suggested metric saved (shown first), by an editor.

What the panel's "Verify this answer" does, through the same function as ``jupyter analyst
context verify``: the turn's question and SQL become a query file of the server's context
folder, and the answer its SQL computes from the data a task of the folder's suite. Only
the editors (``c.AnalystApp.context_editors``) may add to the folder: anyone else is 403,
before anything about the thread is read.
"""

from __future__ import annotations

import asyncio

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...errors import AnalystError, ConfigError
from ..editors import ContextEditors, hub_groups
from ..inputs import SaveDefinition, VerifyAnswer
from .base import AnalystHandler

#: The status of each refusal of a verification, but the request's own (400): what the body
#: names is not in the thread as it stands (a turn, a query step), or the folder refuses it.
_CONFLICTS = {"turn_not_found", "turn_not_finished", "no_sql", "step_not_found", "gold_failed", "answer_too_large",
              "query_exists", "context_link", "context_not_a_folder", "context_not_found"}


#: The refusals of a suggested metric that are about the thread or the folder as they stand (409).
_DEFINITION_CONFLICTS = {"turn_not_found", "suggestion_not_found", "definition_exists", "invalid_definition",
                         "context_library_missing", "context_link", "context_not_a_folder", "context_not_found"}


class _EditorsOnly(AnalystHandler):
    def check_editor(self, doing: str) -> None:
        """403 unless the caller is one of the folder's editors: before anything else is read."""
        editors: ContextEditors = self.settings.get("jupyter_analyst_editors") or ContextEditors.configured(None)
        if not editors.allows(self.user_name, hub_groups(self.current_user)):
            raise self.refuse(ConfigError(
                f"only the context folder's editors may {doing}", reason="not_a_context_editor",
                hint="an administrator names them in c.AnalystApp.context_editors"), 403)


class VerifiedAnswersHandler(_EditorsOnly):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Make a completed turn's answer a verified query and a task of the team's suite (201)."""
        from ...evals import verify_answer

        self.check_editor("verify answers")
        request = self.body(VerifyAnswer)
        thread = self.owned_thread(thread_id)
        service = self.service
        try:
            spec = service.catalog.for_thread(thread.source)
        except AnalystError as exc:
            raise self.refuse(exc) from None
        name = service.catalog.name_of(spec)
        try:
            verified = await verify_answer(
                service.workspace.store, thread_id=thread_id, turn=request.turn, call_id=request.step,
                name=request.name, context_folder=service.config.context_folder(service.workspace.root),
                verified_by=self.user_name, source_spec=spec, config=service.config, user=self.user_name,
                # The task names its source as clients know it: a configured name, never a path.
                source_name=name if name in service.catalog.sources else "source")
        except AnalystError as exc:
            raise self.refuse(exc, 409 if exc.reason in _CONFLICTS else None) from None
        self.reply(verified.model_dump(mode="json"), status=201)


class DefinitionsHandler(_EditorsOnly):
    #: Whether the metric is written (201), or only shown (200).
    writes = True

    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Save a turn's suggested metric to the team's context folder (201)."""
        await self.save(thread_id)

    async def save(self, thread_id: str) -> None:
        from ...turns import save_suggestion

        self.check_editor("save definitions")
        request = self.body(SaveDefinition)
        self.owned_thread(thread_id)
        service = self.service
        try:
            saved = await asyncio.to_thread(
                save_suggestion, service.workspace.store, thread_id, service.config.context_folder(service.workspace.root),
                turn=request.turn, index=request.index, name=request.name, write=self.writes, user=self.user_name)
        except AnalystError as exc:
            raise self.refuse(exc, 409 if exc.reason in _DEFINITION_CONFLICTS else None) from None
        self.reply(saved.model_dump(mode="json"), status=201 if self.writes else 200)


class DefinitionPreviewHandler(DefinitionsHandler):
    writes = False

    @web.authenticated
    @authorized
    async def post(self, thread_id: str) -> None:
        """Show the file a turn's suggested metric would be saved as, writing nothing (200)."""
        await self.save(thread_id)
