"""The command line's side of proposed cells: ``run --attach NB.ipynb --propose`` writes what
the turn proposed to ``NB.proposed.ipynb`` beside the notebook and prints the difference (as
``nbdiff`` does); ``proposals accept|reject|revert`` apply a person's decision to the file.

The file is read, written and checkpointed by Jupyter's own file-backed contents manager over
the notebook's folder (as the server does with its own), through the same functions as the
server's routes. Nothing is written through a link, nor outside the notebook's folder.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..turns import TurnSummary
    from ..workspace import Workspace


def after_run(args: argparse.Namespace, workspace_of: Any, summary: TurnSummary) -> None:
    """``run --propose``: the turn's proposals written beside the notebook, and their changes
    printed as plain text (source lines, each output in one line), coloured on a terminal."""
    from ..notebooks import proposal_lines
    from ..turns import write_turn_preview

    notebook: Path = args.attach

    def read(workspace: Workspace) -> Any:
        return write_turn_preview(workspace.store, summary.thread_id, summary.turn_id, notebook)

    preview = workspace_of(args, read)
    if preview.path is None:
        print("no cells were proposed in this turn", flush=True)
        return
    if not args.json:
        colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        for line in proposal_lines(preview.before, preview.proposals, preview.status):
            print(_COLOURS[line.kind] + line.text + _RESET if colour and _COLOURS[line.kind] else line.text)
    for why in preview.skipped:
        print(f"left out: {why}", flush=True)
    print(f"wrote {preview.path}; apply with: jupyter analyst proposals accept {notebook} --thread {summary.thread_id}",
          flush=True)


#: ANSI colours of a change's lines on a terminal (none when stdout is a file or a pipe).
_COLOURS = {"head": "\x1b[1m", "add": "\x1b[32m", "remove": "\x1b[31m", "same": "", "note": "\x1b[2m"}
_RESET = "\x1b[0m"


def proposals(args: argparse.Namespace, workspace_of: Any) -> int:
    """``proposals list|accept|reject|revert``."""
    from ..turns import accept_proposal, file_contents, no_link, reject_proposal, revert_turn, through_contents

    notebook: Path = args.notebook
    no_link(notebook, "the notebook")
    if not notebook.is_file():
        raise ConfigError(f"there is no notebook {notebook}", reason="notebook_not_found")
    files = file_contents(notebook.parent)
    name = notebook.name
    user = os.environ.get("USER") or "local"

    def act(workspace: Workspace) -> Any:
        store = workspace.store
        if args.proposals_command == "revert":
            turn = args.turn or _latest(store, args.thread, notebook)["turn_id"]
            return asyncio.run(revert_turn(store, files, args.thread, turn, user=user, path=name))
        proposal = args.proposal or _latest(store, args.thread, notebook)["proposal_id"]
        body = store.proposal(args.thread, proposal)
        if body is not None and Path(body["notebook"]).name != name:
            raise ConfigError(f"proposal {proposal} is for {body['notebook']}, not {notebook}",
                              reason="notebook_of_another_thread")
        chosen = args.cells or None
        decide = accept_proposal if args.proposals_command == "accept" else reject_proposal
        return asyncio.run(decide(store, files, args.thread, proposal, chosen, user=user, path=name))

    result = through_contents(lambda: workspace_of(args, act, thread=args.thread))
    if args.proposals_command == "revert":
        print(f"reverted {len(result.reverted)} change(s) of turn {result.turn_id}: {notebook} is as it was")
        return 0
    for change in result.changes:
        where = f"after {change.after or 'the top'}" if change.op == "insert" else f"cell {change.cell_id}"
        print(f"{change.status:9} {change.change_id}: {change.op} {where}: {change.reason}")
    return 0


def _latest(store: Any, thread: str, notebook: Path) -> dict[str, Any]:
    """The thread's newest proposal for ``notebook`` with a change still pending (else its newest:
    a decision on it then says that nothing is left), so a proposal the model withdrew is not
    the one a bare ``accept`` picks."""
    mine = [p for p in store.proposals(thread) if Path(p["notebook"]).name == notebook.name]
    if not mine:
        raise ConfigError(f"thread {thread} has no proposal for {notebook}", reason="proposal_not_found",
                          hint="run a turn with --attach and --propose first")
    decided = {(d["proposal_id"], d["change_id"]) for d in store.decisions(thread)}
    open_ = [p for p in mine if any((p["proposal_id"], c.get("change_id")) not in decided for c in p["changes"])]
    return (open_ or mine)[-1]
