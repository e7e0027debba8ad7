"""Notebooks a client's ``ask`` works beside, and the cells it proposes for them, on an MCP
server started with a notebook folder (``jupyter analyst mcp --notebooks DIR``).

A client names a notebook by its path relative to that folder, never an absolute path, never
through a link: the folder is the only part of this machine's files a client reaches. A turn
with a notebook may propose cells (the ``propose_cells`` tool); its result carries each
proposal as a structured diff (:class:`~jupyter_analyst.turns.ProposalDiff`). The tools
``accept_proposal``, ``reject_proposal`` and ``revert_turn`` apply a decision to the file
through Jupyter's file-backed contents manager over the folder, checkpointed first, as the
CLI's ``proposals`` command does. The proposed cells ran in the sandbox; nothing else runs.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..notebooks import AttachedNotebook
    from ..turns import ProposalDiff
    from ..workspace import Workspace

NO_FOLDER_HINT = "start the MCP server with --notebooks DIR, the folder whose notebooks ask may work beside"


class NotebookDesk:
    """One folder of notebooks, and the decisions on what a turn proposed for them."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder).expanduser().resolve()
        if not self.folder.is_dir():
            raise ConfigError(f"the notebook folder {folder} is not a folder", reason="notebook_not_found")

    def path(self, name: str) -> Path:
        """The file of the notebook ``name`` (relative to the folder).

        Raises:
            ConfigError: an absolute path, a way out of the folder, a link on the way, not an
                ``.ipynb``, or no such file (``notebook_not_found``).
        """
        relative = PurePosixPath(name)
        if (not name or relative.is_absolute() or ".." in relative.parts or "\\" in name
                or relative.suffix != ".ipynb"):
            raise ConfigError(f"{name!r} is not a notebook of the notebook folder", reason="invalid_notebook",
                              hint="name a .ipynb file by its path relative to the folder, e.g. analysis/study.ipynb")
        path = self.folder
        for part in relative.parts:
            path = path / part
            if path.is_symlink():
                raise ConfigError(f"{name!r} goes through a link, which is not followed", reason="notebook_is_link")
        if not path.is_file():
            raise ConfigError(f"there is no notebook {name!r} in the notebook folder", reason="notebook_not_found",
                              hint="name it by its path relative to the folder the server was started with")
        return path

    def attach(self, name: str) -> AttachedNotebook:
        """The notebook ``name`` read for a turn (shown to the model by its relative name)."""
        from ..notebooks import load_attached

        return load_attached(self.path(name), str(PurePosixPath(name)))

    def _now(self, name: str) -> dict[str, Any] | None:
        try:
            return json.loads(self.path(name).read_text(encoding="utf-8"))
        except (ConfigError, OSError, ValueError):
            return None

    def review(self, workspace: Workspace, thread: str, turn: str | None = None,
               proposal: str | None = None) -> list[ProposalDiff]:
        """The proposals of ``turn`` (or the one ``proposal``) of ``thread``, as structured diffs
        against their notebooks now. Blocking."""
        from ..turns import list_proposals, review_proposals

        views = [v for v in asyncio.run(list_proposals(workspace.store, None, thread))
                 if (turn is None or v.turn_id == turn) and (proposal is None or v.proposal_id == proposal)]
        out: list[ProposalDiff] = []
        for view in views:
            out += review_proposals([view], self._now(view.notebook))
        return out

    def decide(self, workspace: Workspace, decision: str, thread: str, proposal: str,
               cells: list[str] | None, user: str) -> list[ProposalDiff]:
        """Accept or reject changes of ``proposal`` in its notebook; the proposal as it is then.
        Blocking."""
        from ..turns import accept_proposal, file_contents, reject_proposal, through_contents

        body = workspace.store.proposal(thread, proposal)
        if body is None:
            raise ConfigError(f"unknown proposal {proposal!r} in thread {thread}", reason="proposal_not_found",
                              hint="the proposals of a turn are in ask's result (`proposals`)")
        name = body["notebook"]
        self.path(name)  # still a notebook of the folder, through no link
        run = accept_proposal if decision == "accept" else reject_proposal
        through_contents(lambda: asyncio.run(run(workspace.store, file_contents(self.folder), thread, proposal, cells,
                                         user=user, path=name)))
        return self.review(workspace, thread, proposal=proposal)

    def revert(self, workspace: Workspace, thread: str, turn: str, user: str) -> dict[str, Any]:
        """Undo the turn's accepted changes: its notebook restored from its checkpoint. Blocking."""
        from ..turns import file_contents, revert_turn, through_contents

        points = workspace.store.checkpoints(thread, turn)
        if points:
            self.path(points[0]["notebook"])
        result = through_contents(lambda: asyncio.run(revert_turn(workspace.store, file_contents(self.folder), thread, turn,
                                                          user=user)))
        return result.model_dump(mode="json")


def desk_of(folder: str | os.PathLike[str] | None) -> NotebookDesk | None:
    """The server's notebook folder (``None``: it has none, and ``ask`` attaches no notebook)."""
    return NotebookDesk(Path(folder)) if folder else None


def proposals_text(diffs: list[ProposalDiff], thread: str) -> str:
    """The proposals as the client's model reads them: each change's reason, its sandbox run
    and its diff, then the calls that decide."""
    lines = []
    for diff in diffs:
        failed = " (a cell failed in the sandbox: accept its cells by id)" if diff.failed else ""
        lines.append(f"proposal {diff.proposal_id} for {diff.notebook}: {len(diff.changes)} change(s), "
                     f"{diff.status}{failed}")
        for change in diff.changes:
            ran = f"; sandbox: {change.sandbox.status}" if change.sandbox else ""
            if change.sandbox and change.sandbox.error:
                ran += f" ({change.sandbox.error})"
            lines.append(f"- {change.change_id} [{change.status}] {change.op}: {change.reason}{ran}")
            lines.append(change.diff.rstrip("\n"))
        lines.append(f'decide: accept_proposal {{"thread": "{thread}", "proposal": "{diff.proposal_id}"}} '
                     f'(or "cells": [...]), reject_proposal (the same), revert_turn {{"thread": "{thread}", '
                     f'"turn": "{diff.turn_id}"}}; the notebook changes only on accept')
    return "\n".join(lines)
