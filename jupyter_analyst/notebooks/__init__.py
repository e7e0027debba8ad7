"""Notebooks: the thread's audit trail and the notebook a user attaches to a turn.

The audit notebook is made whole from the store after every turn (export.py) out of cells
whose parts others use too (trail.py), written as plain nbformat-4 JSON without importing
``nbformat`` (ipynb.py), rendered to read (render.py), and re-executed in the sandboxed
kernel to prove it reproduces (verify.py, reproduction.py; engine.py is papermill's
``analyst`` engine, by entry point). An attached notebook reaches the model as an outline
and the cells it asks for (outline.py); the cells the model proposes for it, and how a
person's decision applies them (proposals.py).

The names below are imported on first use: a turn that only appends to its notebook does
not import the verifier, nor a server's start the exporter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .answer_notes import answer_notes as receipt_notes
    from .export import export_thread, recorded_data_version, write_export, write_thread_notebook
    from .ipynb import Node as NotebookNode
    from .ipynb import dumps as notebook_json
    from .ipynb import new_markdown_cell
    from .outline import MAX_NOTEBOOK_BYTES, AttachedNotebook, attached_text, context_section, load_attached, read_cells
    from .page_export import default_output, file_stem
    from .cell_names import cell_needs
    from .change_text import proposal_lines
    from .proposals import (
        WITHDRAWN_BY, ChangeStatus, ProposedArtifact, Proposal, ProposalConflict, ProposedChange, ProposedRun, applied, change_diff,
        decided, read_changes, stale,
    )
    from .page_export import render as render_notebook
    from .reanswer import answer_receipts, format_reanswer, reanswer_notebook
    from .reanswer_claims import ClaimStatus, ReansweredAnswer
    from .trail import ARTIFACT_MIME, HOSTED_ENV, META, RESULTS_ENV, connect_source, hosted_result_name, parameter_values, read_notebook, step_source
    from .verify import ArtifactCheck, VerifyReport, format_report, verify_notebook
    from .verify import Status as CheckStatus
    from .verify import Verdict as VerifyVerdict

_HOME = {
    "receipt_notes": "answer_notes:answer_notes",
    "export_thread": "export",
    "recorded_data_version": "export",
    "write_export": "export",
    "write_thread_notebook": "export",
    "NotebookNode": "ipynb:Node",
    "notebook_json": "ipynb:dumps",
    "new_markdown_cell": "ipynb",
    "MAX_NOTEBOOK_BYTES": "outline",
    "AttachedNotebook": "outline",
    "attached_text": "outline",
    "context_section": "outline",
    "load_attached": "outline",
    "read_cells": "outline",
    "default_output": "page_export",
    "ChangeStatus": "proposals",
    "WITHDRAWN_BY": "proposals",
    "cell_needs": "cell_names",
    "proposal_lines": "change_text",
    "ProposedArtifact": "proposals",
    "Proposal": "proposals",
    "ProposalConflict": "proposals",
    "ProposedChange": "proposals",
    "ProposedRun": "proposals",
    "applied": "proposals",
    "change_diff": "proposals",
    "decided": "proposals",
    "read_changes": "proposals",
    "stale": "proposals",
    "file_stem": "page_export",
    "render_notebook": "page_export:render",
    "answer_receipts": "reanswer",
    "format_reanswer": "reanswer",
    "ClaimStatus": "reanswer_claims",
    "ReansweredAnswer": "reanswer_claims",
    "reanswer_notebook": "reanswer",
    "ARTIFACT_MIME": "trail",
    "META": "trail",
    "RESULTS_ENV": "trail",
    "HOSTED_ENV": "trail",
    "hosted_result_name": "trail",
    "connect_source": "trail",
    "parameter_values": "trail",
    "read_notebook": "trail",
    "step_source": "trail",
    "ArtifactCheck": "verify",
    "CheckStatus": "verify:Status",
    "VerifyReport": "verify",
    "VerifyVerdict": "verify:Verdict",
    "format_report": "verify",
    "verify_notebook": "verify",
}

__all__ = [
    "ChangeStatus", "WITHDRAWN_BY", "cell_needs", "proposal_lines", "ProposedArtifact", "Proposal", "ProposalConflict", "ProposedChange", "ProposedRun", "applied", "change_diff", "decided", "read_changes", "stale",
    "ARTIFACT_MIME", "ArtifactCheck", "ClaimStatus", "ReansweredAnswer", "answer_receipts", "receipt_notes", "AttachedNotebook", "CheckStatus", "MAX_NOTEBOOK_BYTES", "META",
    "HOSTED_ENV", "NotebookNode", "RESULTS_ENV", "hosted_result_name", "VerifyReport", "VerifyVerdict", "attached_text", "connect_source",
    "context_section", "default_output", "export_thread", "file_stem", "format_reanswer", "format_report", "load_attached",
    "new_markdown_cell", "notebook_json", "parameter_values", "read_cells", "read_notebook",
    "reanswer_notebook", "recorded_data_version", "render_notebook", "step_source", "verify_notebook", "write_export",
    "write_thread_notebook",
]

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
