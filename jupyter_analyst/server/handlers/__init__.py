"""The REST + event-stream API under ``{base_url}analyst/api/``, one module per resource:
threads (and their source's tables), turns (and their events), artifacts, proposed cells, the audit notebook, the team's
context folder (an answer verified, a suggested metric saved), budgets, and the API's own
(set-up, sources, description, 404). ``base`` is what every handler shares."""

from .artifacts import ArtifactContentHandler, ArtifactHandler, ArtifactPreviewHandler, ThreadArtifactsHandler
from .budget_routes import BudgetHandler, SpendingHandler
from .context_routes import DefinitionPreviewHandler, DefinitionsHandler, VerifiedAnswersHandler
from .audit import ExportHandler, NotebookHandler, StepCellHandler, VerificationHandler, VerifyHandler
from .proposal_routes import AcceptHandler, ProposalsHandler, RejectHandler, RevertHandler
from .meta import ConfigHandler, NotFoundHandler, OpenAPIHandler, SourcesHandler
from .thread_routes import StateHandler, TablesHandler, ThreadHandler, ThreadsHandler
from .turn_routes import CancelHandler, EventsHandler, TurnsHandler

__all__ = [
    "AcceptHandler", "ProposalsHandler", "RejectHandler", "RevertHandler", "DefinitionPreviewHandler", "DefinitionsHandler",
    "ArtifactContentHandler", "ArtifactHandler", "ArtifactPreviewHandler", "BudgetHandler", "CancelHandler", "ConfigHandler",
    "EventsHandler", "ExportHandler", "NotFoundHandler", "NotebookHandler", "OpenAPIHandler", "SourcesHandler",
    "SpendingHandler", "StateHandler", "StepCellHandler", "TablesHandler", "ThreadArtifactsHandler", "ThreadHandler", "ThreadsHandler",
    "TurnsHandler",
    "VerificationHandler", "VerifiedAnswersHandler", "VerifyHandler",
]
