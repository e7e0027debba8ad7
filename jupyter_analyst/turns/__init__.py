"""The application layer: what the surfaces (the CLI, the server, the magics) call to run a
turn. ``run_turn`` asks the model (run.py), ``run_sql_step`` runs the user's own query and
``run_tool_step`` one call of a named tool (user_step.py); all in one frame (frame.py) that
resolves the thread and source, lends the turn the host's kernels (host.py, live.py) and
writes the audit notebook after; a turn's start and end are told in one module (life.py). Playbooks (playbook.py) run a notebook of prompts as turns;
a person's decisions on proposed cells are applied by notebook_changes.py, reviewed as diffs
(proposal_review.py) and previewed as a file beside the notebook (proposed_file.py); a turn's
suggested metric is saved to the team's context folder by suggested_metrics.py.

The names below are imported on first use, so ``import jupyter_analyst`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .config import AnalystConfig, ModelSettings
    from .suggested_metrics import save_suggestion
    from .host import BackgroundWork
    from .life import TurnLife, abandoned_turn, cut_turn
    from .live import LiveThreads
    from .notebook_changes import ProposalView, RevertResult, list_proposals, revert_turn
    from .notebook_changes import accept as accept_proposal
    from .notebook_changes import reject as reject_proposal
    from .playbook import PromptProgress, plan_playbook, run_playbook
    from .proposal_review import ProposalDiff
    from .proposal_review import review as review_proposals
    from .proposed_file import file_contents, no_link, through_contents, write_turn_preview
    from .requests import SqlStep, SqlStepRequest, ToolStep, ToolStepRequest, TurnRequest, TurnSummary
    from .run import run_turn
    from .user_step import run_sql_step, run_tool_step

_HOME = {
    "run_turn": "run",
    "run_sql_step": "user_step",
    "run_tool_step": "user_step",
    "ToolStepRequest": "requests",
    "ToolStep": "requests",
    "TurnRequest": "requests",
    "SqlStepRequest": "requests",
    "SqlStep": "requests",
    "TurnSummary": "requests",
    "AnalystConfig": "config",
    "save_suggestion": "suggested_metrics",
    "ModelSettings": "config",
    "BackgroundWork": "host",
    "LiveThreads": "live",
    "accept_proposal": "notebook_changes:accept",
    "reject_proposal": "notebook_changes:reject",
    "revert_turn": "notebook_changes",
    "list_proposals": "notebook_changes",
    "ProposalView": "notebook_changes",
    "RevertResult": "notebook_changes",
    "ProposalDiff": "proposal_review",
    "review_proposals": "proposal_review:review",
    "file_contents": "proposed_file",
    "no_link": "proposed_file",
    "through_contents": "proposed_file",
    "write_turn_preview": "proposed_file",
    "TurnLife": "life",
    "abandoned_turn": "life",
    "cut_turn": "life",
    "run_playbook": "playbook",
    "plan_playbook": "playbook",
    "PromptProgress": "playbook",
}

__all__ = [
    "ProposalDiff", "review_proposals", "file_contents", "no_link", "through_contents", "write_turn_preview",
    "accept_proposal", "reject_proposal", "revert_turn", "list_proposals", "ProposalView", "RevertResult",
    "ToolStep", "ToolStepRequest", "run_tool_step",
    "AnalystConfig", "BackgroundWork", "LiveThreads", "ModelSettings", "PromptProgress", "SqlStep",
    "SqlStepRequest", "TurnLife", "TurnRequest", "TurnSummary", "abandoned_turn", "cut_turn", "plan_playbook",
    "run_playbook", "run_sql_step", "run_turn", "save_suggestion",
]

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
