"""Cells the model proposed for a user's notebook: list them with their diffs, accept or reject
changes, revert a turn's accepted changes.

The decisions are ``turns``' (notebook_changes.py); here they are given the server's contents
manager, behind the same rule as every notebook the server reads or writes for the analyst:
no path through a link. The user's kernel is not touched: accepted cells carry the outputs
they made in the sandbox.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ...errors import AnalystError, ConfigError
from ...turns import accept_proposal, list_proposals, reject_proposal, revert_turn
from ..contents import refuse_links
from ..inputs import DecideChanges, RevertTurn
from .base import AnalystHandler

#: The refusals of these routes (the reasons turns/notebook_changes.py and notebooks/proposals.py
#: raise), answered 409, or 404 for a proposal that is not the thread's.
REFUSALS = (
    dict(reason="notebook_changed"), dict(reason="proposal_failed"), dict(reason="already_decided"),
    dict(reason="unknown_change"), dict(reason="nothing_to_revert"), dict(reason="notebook_without_ids"),
    dict(reason="proposal_not_found"),
)


class _NoLinks:
    """The server's contents manager, refusing a notebook path that goes through a link."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    def get(self, path: str, **kwargs: Any) -> Any:
        refuse_links(self.manager, path)
        return self.manager.get(path, **kwargs)

    def save(self, model: dict[str, Any], path: str) -> Any:
        refuse_links(self.manager, path)
        return self.manager.save(model, path)

    def create_checkpoint(self, path: str) -> Any:
        refuse_links(self.manager, path)
        return self.manager.create_checkpoint(path)

    def restore_checkpoint(self, checkpoint_id: str, path: str) -> Any:
        refuse_links(self.manager, path)
        return self.manager.restore_checkpoint(checkpoint_id, path)


class _Decisions(AnalystHandler):
    @property
    def files(self) -> _NoLinks:
        return _NoLinks(self.contents_manager)

    def refused(self, exc: AnalystError) -> web.HTTPError:
        status = 404 if exc.reason == "proposal_not_found" else 409
        return self.refuse(exc, status)

    async def decide(self, coroutine: Any) -> Any:
        try:
            return await coroutine
        except web.HTTPError as exc:  # the contents manager's: the notebook is gone or unwritable
            raise self.refuse(ConfigError(f"the notebook cannot be read or written: {exc.log_message or exc}",
                                          reason="notebook_not_found",
                                          hint="the proposal's notebook must be in your Jupyter folder"), 409) from None
        except AnalystError as exc:
            raise self.refused(exc) from None


class ProposalsHandler(_Decisions):
    @web.authenticated
    @authorized
    async def get(self, thread_id: str) -> None:
        """The thread's proposals, each change with its status and its diff (nbdime) while pending."""
        self.owned_thread(thread_id)
        views = await self.decide(list_proposals(self.service.workspace.store, self.files, thread_id))
        self.reply({"proposals": [v.model_dump(mode="json") for v in views]})


class AcceptHandler(_Decisions):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str, proposal_id: str) -> None:
        """Accept changes into the notebook (checkpointed before the proposal's first)."""
        self.owned_thread(thread_id)
        chosen = self._chosen()
        view = await self.decide(accept_proposal(self.service.workspace.store, self.files, thread_id, proposal_id,
                                                 chosen, user=self.user_name))
        self.reply(view.model_dump(mode="json"))

    def _chosen(self) -> list[str] | None:
        return self.body(DecideChanges).chosen()


class RejectHandler(AcceptHandler):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str, proposal_id: str) -> None:
        """Reject changes; the notebook is not touched."""
        self.owned_thread(thread_id)
        chosen = self._chosen()
        view = await self.decide(reject_proposal(self.service.workspace.store, self.files, thread_id, proposal_id,
                                                 chosen, user=self.user_name))
        self.reply(view.model_dump(mode="json"))


class RevertHandler(_Decisions):
    @web.authenticated
    @authorized
    async def post(self, thread_id: str, turn_id: str) -> None:
        """Restore the notebook from the checkpoint taken before the turn's first accepted change."""
        self.owned_thread(thread_id)
        self.body(RevertTurn)
        result = await self.decide(revert_turn(self.service.workspace.store, self.files, thread_id, turn_id,
                                               user=self.user_name))
        self.reply(result.model_dump(mode="json"))
