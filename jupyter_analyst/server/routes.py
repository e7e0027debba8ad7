"""The URL patterns of the API under ``{base_url}analyst/api/``."""

from __future__ import annotations

from .handlers import (
    AcceptHandler, ProposalsHandler, RejectHandler, RevertHandler,
    ArtifactContentHandler, ArtifactHandler, ArtifactPreviewHandler, BudgetHandler, CancelHandler, ConfigHandler, EventsHandler,
    ExportHandler, NotebookHandler, NotFoundHandler, OpenAPIHandler, SourcesHandler, StateHandler, StepCellHandler,
    SpendingHandler, TablesHandler, ThreadArtifactsHandler, ThreadHandler, ThreadsHandler, TurnsHandler,
    VerificationHandler, VerifiedAnswersHandler, VerifyHandler, DefinitionPreviewHandler, DefinitionsHandler,
)

_ID = r"(?P<{}>[A-Za-z0-9_-]+)"
#: A tool call's id comes from the model: anything but a slash (URL-decoded by Tornado).
_CALL_ID = r"(?P<call_id>[^/]+)"


def routes(base: str) -> list[tuple[str, type]]:
    """URL patterns under ``{base}analyst/api/``."""
    api = base.rstrip("/") + "/analyst/api"
    thread = _ID.format("thread_id")
    artifact = _ID.format("artifact_id")
    return [
        (f"{api}/config", ConfigHandler),
        (f"{api}/sources", SourcesHandler),
        (f"{api}/openapi.yaml", OpenAPIHandler),
        (f"{api}/budget", BudgetHandler),
        (f"{api}/budget/users", SpendingHandler),
        (f"{api}/threads", ThreadsHandler),
        (f"{api}/threads/{thread}", ThreadHandler),
        (f"{api}/threads/{thread}/turns", TurnsHandler),
        (f"{api}/threads/{thread}/events", EventsHandler),
        (f"{api}/threads/{thread}/cancel", CancelHandler),
        (f"{api}/threads/{thread}/artifacts", ThreadArtifactsHandler),
        (f"{api}/threads/{thread}/notebook", NotebookHandler),
        (f"{api}/threads/{thread}/export", ExportHandler),
        (f"{api}/threads/{thread}/verify", VerifyHandler),
        (f"{api}/threads/{thread}/verifications/{_ID.format('verification_id')}", VerificationHandler),
        (f"{api}/threads/{thread}/verified-answers", VerifiedAnswersHandler),
        (f"{api}/threads/{thread}/definitions", DefinitionsHandler),
        (f"{api}/threads/{thread}/definitions/preview", DefinitionPreviewHandler),
        (f"{api}/threads/{thread}/steps/{_CALL_ID}/cell", StepCellHandler),
        (f"{api}/threads/{thread}/proposals", ProposalsHandler),
        (f"{api}/threads/{thread}/proposals/{_ID.format('proposal_id')}/accept", AcceptHandler),
        (f"{api}/threads/{thread}/proposals/{_ID.format('proposal_id')}/reject", RejectHandler),
        (f"{api}/threads/{thread}/turns/{_ID.format('turn_id')}/revert", RevertHandler),
        (f"{api}/threads/{thread}/state", StateHandler),
        (f"{api}/threads/{thread}/tables", TablesHandler),
        (f"{api}/artifacts/{artifact}", ArtifactHandler),
        (f"{api}/artifacts/{artifact}/content", ArtifactContentHandler),
        (f"{api}/artifacts/{artifact}/preview", ArtifactPreviewHandler),
        (f"{api}/.*", NotFoundHandler),  # last: any other path under the API
    ]
