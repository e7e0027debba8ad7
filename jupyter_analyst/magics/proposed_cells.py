"""Cells the model proposed for the notebook a ``%%ask`` works beside: shown in the cell's
output as diffs, decided with ``%analyst accept|reject|revert``.

Where the turn ran decides where its proposals are kept and applied:

* on a Jupyter server (``--server`` or ``$JUPYTER_ANALYST_SERVER_URL``), the server keeps
  them and applies a decision through its own contents manager (``POST .../accept``), as the
  panel's buttons do, so the panel and the cell agree;
* in the local engine, the workspace keeps them, ``NB.proposed.ipynb`` is written beside the
  notebook (every change applied, a file to look at), and a decision applies to the notebook's
  file through Jupyter's file-backed contents manager, checkpointed first, as the CLI's
  ``proposals accept`` does.

Nothing runs in the user's kernel but the magic: the proposed cells ran in the sandbox, and
an accepted cell carries the outputs it made there. Everything shown is the model's text,
so it is escaped (HTML) or cleaned of control characters (plain text).
"""

from __future__ import annotations

import asyncio
import os
import urllib.parse
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .magic_session import MagicSession, in_worker

if TYPE_CHECKING:
    from ..turns import ProposalDiff
    from .remote import AnalystServer

#: How the decision lines are written in the cell.
ACCEPT, REJECT, REVERT = "%analyst accept", "%analyst reject", "%analyst revert"
RELOAD_NOTE = ("the notebook's file changed: if it is open in JupyterLab, reload it from disk "
               "(File > Reload Notebook from Disk) before editing on")


@dataclass
class Proposed:
    """Where the proposals of the latest ``%%ask`` with any are kept, to decide on them."""

    thread_id: str
    turn_id: str
    server: AnalystServer | None = None
    notebook: Path | None = None
    """The notebook's file, for a local turn."""
    workspace: str | None = None
    proposals: list[str] = field(default_factory=list)


def _blocking(work: Any) -> Any:
    """``work()`` run off the cell's thread (the cell's own runs an event loop already)."""
    return in_worker(lambda emit: asyncio.to_thread(work))


def _user() -> str:
    return os.environ.get("USER") or "local"


# ---------------------------------------------------------------------- after a turn

def local_review(session: MagicSession, thread_id: str, turn_id: str, notebook: Path,
                 workspace: str | None) -> tuple[list[ProposalDiff], Path | None, list[str]]:
    """The turn's proposals reviewed against the notebook's file, and ``NB.proposed.ipynb``
    written beside it: the diffs, the file written (``None``: nothing was proposed), and why a
    change was left out of it."""
    from ..turns import list_proposals, review_proposals, write_turn_preview

    def work() -> Any:
        def read(ws: Any) -> Any:
            views = [v for v in asyncio.run(list_proposals(ws.store, None, thread_id)) if v.turn_id == turn_id]
            if not views:
                return [], None, []
            preview = write_turn_preview(ws.store, thread_id, turn_id, notebook)
            return review_proposals(views, preview.before), preview.path, preview.skipped

        return session.read(read, workspace)

    return _blocking(work)


def server_review(server: AnalystServer, thread_id: str, turn_id: str, notebook: str | None) -> list[ProposalDiff]:
    """The turn's proposals as the server keeps them, reviewed against the notebook as the
    server reads it (``GET api/contents``; without it, the new sources alone)."""
    from ..errors import AnalystError
    from ..turns import ProposalView, review_proposals

    views = [ProposalView.model_validate(p) for p in server.proposals(thread_id) if p.get("turn_id") == turn_id]
    if not views:
        return []
    nb = None
    where = notebook or views[0].notebook
    try:
        model = server.call("GET", f"api/contents/{urllib.parse.quote(where)}?type=notebook&content=1", api=False)
        nb = model.get("content") if isinstance(model, dict) else None
    except (AnalystError, ValueError):
        nb = None  # the diffs then show the proposed sources alone: a review, not a refusal
    return review_proposals(views, nb)


# ---------------------------------------------------------------------- shown

def _h(text: str) -> str:
    """The model's text as HTML: escaped, its control characters shown, not obeyed."""
    from ..untrusted import terminal_text

    return escape(terminal_text(text))


def _sign(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "h"
    return {"+": "a", "-": "d", "@": "h"}.get(line[:1], "")


_STYLE = {"a": "background:#e6ffec", "d": "background:#ffebe9", "h": "color:#6e7781"}


def _diff_html(diff: str) -> str:
    rows = []
    for line in diff.splitlines():
        style = _STYLE.get(_sign(line))
        rows.append(f'<span style="{style}">{_h(line)}</span>' if style else _h(line))
    return '<pre style="margin:0.2em 0 0.6em 0">' + "\n".join(rows) + "</pre>"


def decision_lines(proposed: Proposed, diffs: list[ProposalDiff], written: Path | None) -> list[str]:
    """How to decide, and where the decision applies."""
    lines = []
    for diff in diffs:
        failed = " (a cell failed in the sandbox: accept its cells by id)" if diff.failed else ""
        lines.append(f"{ACCEPT} {diff.proposal_id}   or, by cell: {ACCEPT} {diff.proposal_id} "
                     f"{' '.join(c.change_id for c in diff.changes)}{failed}")
        lines.append(f"{REJECT} {diff.proposal_id}")
    lines.append(f"{REVERT} {proposed.turn_id}   (after accepting: the notebook as it was)")
    if proposed.server is not None:
        lines.append(f"decisions apply through the Jupyter server at {proposed.server.url} (as the panel's buttons)")
    else:
        if written is not None:
            lines.append(f"no Jupyter server: wrote {written.name} beside the notebook (every change applied, to look "
                         "at); the notebook itself changes only on accept")
        lines.append(f"decisions apply to {proposed.notebook} here (checkpointed first in .ipynb_checkpoints)")
    return lines


def review_bundle(proposed: Proposed, diffs: list[ProposalDiff], written: Path | None = None,
                  skipped: list[str] | None = None) -> dict[str, str]:
    """The proposals as the cell shows them: HTML, and the same in plain text."""
    from ..untrusted import terminal_text

    text: list[str] = []
    html: list[str] = []
    for diff in diffs:
        head = (f"proposal {diff.proposal_id} for {diff.notebook}: {len(diff.changes)} change(s), {diff.status}"
                + (", a cell failed in the sandbox" if diff.failed else ""))
        text.append(head)
        html.append(f"<p><b>{_h(head)}</b></p>")
        for change in diff.changes:
            where = f"after {change.after or 'the top'}" if change.op == "insert" else f"cell {change.cell_id}"
            line = f"  [{change.status}] {change.change_id}: {change.op} {where}: {change.reason}"
            ran = ""
            if change.sandbox is not None:
                ran = f"ran in the sandbox: {change.sandbox.status}"
                if change.sandbox.error:
                    ran += f" ({change.sandbox.error})"
                if change.sandbox.figures:
                    ran += f", {change.sandbox.figures} figure(s)"
            text.append(terminal_text(line) + (f"\n    {terminal_text(ran)}" if ran else ""))
            text.append("\n".join("    " + terminal_text(d) for d in change.diff.splitlines()))
            html.append(f"<p><code>{_h(change.change_id)}</code> [{_h(change.status)}] {_h(change.op)} "
                        f"{_h(where)}: {_h(change.reason)}" + (f"<br><i>{_h(ran)}</i>" if ran else "")
                        + "</p>")
            if change.conflict:
                text.append(f"    no longer applies: {terminal_text(change.conflict)}")
                html.append(f"<p>no longer applies: {_h(change.conflict)}</p>")
            html.append(_diff_html(change.diff))
            if change.sandbox is not None and change.sandbox.output:
                text.append("\n".join("    | " + terminal_text(o) for o in change.sandbox.output.splitlines()))
                html.append(f'<pre style="color:#57606a">{_h(change.sandbox.output)}</pre>')
    for why in skipped or []:
        text.append(f"left out of the proposed notebook: {why}")
        html.append(f"<p>left out of the proposed notebook: {_h(why)}</p>")
    how = decision_lines(proposed, diffs, written)
    text += how
    html.append("<pre>" + "\n".join(_h(h) for h in how) + "</pre>")
    return {"text/plain": "\n".join(text), "text/html": "\n".join(html)}


# ---------------------------------------------------------------------- decisions

def decide_local(session: MagicSession, proposed: Proposed, decision: str, proposal_id: str | None,
                 cells: list[str] | None) -> Any:
    """Accept, reject (a proposal's changes) or revert (a turn, ``proposal_id`` being the turn)
    in the notebook's file, as the CLI's ``proposals`` command does."""
    from ..turns import accept_proposal, file_contents, no_link, reject_proposal, revert_turn, through_contents

    notebook = proposed.notebook
    if notebook is None:
        raise ConfigError("no notebook to apply the decision to", reason="notebook_not_found",
                          hint="pass --notebook NB.ipynb")
    no_link(notebook, "the notebook")
    if not notebook.is_file():
        raise ConfigError(f"there is no notebook {notebook}", reason="notebook_not_found",
                          hint="pass --notebook NB.ipynb, the notebook the proposal is for")
    files, name = file_contents(notebook.parent), notebook.name

    def act(ws: Any) -> Any:
        store, thread = ws.store, proposed.thread_id
        if decision == "revert":
            return asyncio.run(revert_turn(store, files, thread, proposal_id or proposed.turn_id, user=_user(),
                                           path=name))
        chosen = proposal_id or (proposed.proposals[-1] if proposed.proposals else None)
        if chosen is None:
            raise ConfigError(f"no proposal to {decision}", reason="proposal_not_found",
                              hint="name it: %analyst accept PROPOSAL_ID")
        body = store.proposal(thread, chosen)
        if body is not None and Path(body["notebook"]).name != name:
            raise ConfigError(f"proposal {chosen} is for {body['notebook']}, not {notebook}",
                              reason="notebook_of_another_thread", hint="pass --notebook with its notebook")
        run = accept_proposal if decision == "accept" else reject_proposal
        return asyncio.run(run(store, files, thread, chosen, cells, user=_user(), path=name))

    return _blocking(lambda: through_contents(lambda: session.read(act, proposed.workspace)))


def decide_remote(proposed: Proposed, decision: str, proposal_id: str | None, cells: list[str] | None) -> Any:
    """The same decision applied by the Jupyter server the turn ran on."""
    from ..turns import ProposalView, RevertResult

    server = proposed.server
    assert server is not None
    if decision == "revert":
        return RevertResult.model_validate(server.revert(proposed.thread_id, proposal_id or proposed.turn_id))
    chosen = proposal_id or (proposed.proposals[-1] if proposed.proposals else None)
    if chosen is None:
        raise ConfigError(f"no proposal to {decision}", reason="proposal_not_found",
                          hint="name it: %analyst accept PROPOSAL_ID")
    return ProposalView.model_validate(server.decide(decision, proposed.thread_id, chosen, cells))


def decided_bundle(result: Any, decision: str) -> dict[str, str]:
    """What a decision did, one line per change."""
    from ..untrusted import terminal_text

    if decision == "revert":
        text = f"reverted {len(result.reverted)} change(s) of turn {result.turn_id}: {result.notebook} is as it was"
        return {"text/plain": text + f"\n{RELOAD_NOTE}"}
    lines = []
    for change in result.changes:
        where = f"after {change.after or 'the top'}" if change.op == "insert" else f"cell {change.cell_id}"
        lines.append(terminal_text(f"{change.status:9} {change.change_id}: {change.op} {where}: {change.reason}"))
    if decision == "accept":
        lines.append(RELOAD_NOTE)
    return {"text/plain": "\n".join(lines)}
