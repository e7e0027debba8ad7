"""The magics: ``%analyst_sql``, ``%%ask`` and ``%analyst``.

Each parses its words and calls the engine through :class:`MagicSession` (``%%ask`` may
call a Jupyter server's analyst API instead, see remote.py); what the engine refuses (a
write, an unknown table, damaged bytes) ends the cell with the engine's own message as a
one-line ``UsageError``, not a traceback.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_cell_magic, line_magic, magics_class

from ..errors import AnalystError
from . import cell_output
from .notebook import local_notebook_path, server_notebook
from .proposed_cells import Proposed
from .remote import SERVER_URL_ENV, TOKEN_ENV, AnalystServer, ServerThreads, server_of
from .magic_session import AskResult, MagicSession

if TYPE_CHECKING:
    from ..artifacts import Artifact

ANALYST_USAGE = ("usage: %analyst use [--workspace DIR] [--thread ID | --source SPEC] [--no-sandbox]"
                 " | threads | artifacts | state | verify [NB.ipynb]"
                 " | accept [PROPOSAL [CELL ...]] | reject [PROPOSAL [CELL ...]] | revert [TURN]")
SQL_USAGE = "%analyst_sql [--thread ID] [--source SPEC] NAME << SELECT ...   (or %%analyst_sql NAME, the query below)"


class _Parser(argparse.ArgumentParser):
    """argparse that reports a mistake as a UsageError instead of exiting the kernel."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def _where(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("--thread", metavar="ID", help="a thread of the workspace (becomes the current one)")
    parser.add_argument("--source", metavar="SPEC", help="data source: a .duckdb file, CSV/Parquet, or a SQLAlchemy URL")
    parser.add_argument("--workspace", metavar="DIR", help="default: $JUPYTER_ANALYST_WORKSPACE, else .analyst")
    parser.add_argument("--rerun", action="store_true", help="run again instead of reusing a recorded step")
    return parser


def _sql_parser() -> argparse.ArgumentParser:
    parser = _where(_Parser(prog="%analyst_sql", usage=SQL_USAGE, add_help=False))
    parser.add_argument("name", help="the DataFrame variable the result is bound to")
    return parser


def _ask_parser() -> argparse.ArgumentParser:
    parser = _where(_Parser(prog="%%ask", add_help=False))
    parser.add_argument("--model", help="model name (default: $OPENAI_MODEL or gpt-4o-mini)")
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    parser.add_argument("--no-summarizer", action="store_true", help="no model call after the turn to update the agent state")
    parser.add_argument("--server", metavar="URL",
                        help=f"run the turn on this Jupyter server's analyst API (default: ${SERVER_URL_ENV})")
    parser.add_argument("--token", metavar="T", help=f"the server's token (default: ${TOKEN_ENV})")
    parser.add_argument("--local", action="store_true", help=f"the local engine even when ${SERVER_URL_ENV} is set")
    attach = parser.add_mutually_exclusive_group()
    attach.add_argument("--notebook", metavar="NB.ipynb",
                        help="the notebook the turn works beside (default: this kernel's own notebook)")
    attach.add_argument("--no-attach", action="store_true", help="attach no notebook to the turn")
    return parser


#: ``%%ask`` options of the local engine: on a server, its own model and workspace are used.
LOCAL_ONLY = {"workspace": "--workspace", "model": "--model", "base_url": "--base-url", "no_summarizer": "--no-summarizer"}


def refusal(error: dict[str, Any] | AnalystError) -> UsageError:
    """The engine's refusal as one line: its message, then its hint."""
    data = error.to_dict() if isinstance(error, AnalystError) else error
    hint = data.get("hint")
    return UsageError(str(data.get("message")) + (f" (hint: {hint})" if hint else ""))


@magics_class
class AnalystMagics(Magics):
    """The analyst in the user's own kernel: guarded SQL into DataFrames, turns, the workspace."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self.session = MagicSession()
        #: The current thread on each Jupyter server ``%%ask --server`` used.
        self.servers = ServerThreads()
        #: Where the proposals of the latest ``%%ask`` that made any are kept (see proposed_cells.py).
        self.proposed: Proposed | None = None

    # ------------------------------------------------------------------ %analyst_sql

    @line_cell_magic
    def analyst_sql(self, line: str, cell: str | None = None) -> None:
        """Run a read-only query through the analyst's guard into a DataFrame NAME.

        ``%analyst_sql NAME << SELECT ...`` or ``%%analyst_sql NAME`` with the query as the
        cell. The step is recorded in the current thread (reused when identical).
        """
        head, sep, tail = line.partition("<<")
        if cell is not None and sep:
            raise UsageError(f"give the query after << or in the cell, not both: {SQL_USAGE}")
        sql = cell if cell is not None else tail
        if not sep and cell is None:
            raise UsageError(SQL_USAGE)
        args = _sql_parser().parse_args(shlex.split(head))
        if not args.name.isidentifier():
            raise UsageError(f"{args.name!r} is not a Python name: {SQL_USAGE}")
        try:
            step = self.session.sql(args.name, sql, thread=args.thread, source=args.source,
                                    workspace=args.workspace, rerun=args.rerun)
            if not step.ok or step.dataset is None:
                raise refusal(step.result.get("error") or {"message": step.summary.error or "the query did not run"})
            frame = self.session.load(step.dataset, args.workspace)
        except AnalystError as exc:
            raise refusal(exc) from None
        self.shell.user_ns[args.name] = frame
        cell_output.show(cell_output.bound_line(args.name, step.dataset, len(frame), step.reused))

    # ------------------------------------------------------------------ %%ask

    @cell_magic
    def ask(self, line: str, cell: str) -> None:
        """Ask the analyst: one turn of the current thread, its datasets bound as DataFrames.

        The turn runs in the local engine, or on a Jupyter server's analyst API with
        ``--server URL`` (or ``$JUPYTER_ANALYST_SERVER_URL``), where the sidebar sees it. It
        works beside the notebook this kernel runs for (see notebook.py), or ``--notebook``'s;
        the cells the model proposes for it are shown as diffs, decided with ``%analyst accept``
        (see proposed_cells.py).
        """
        from ..turns import ModelSettings

        args = _ask_parser().parse_args(shlex.split(line))
        prompt = cell.strip()
        if not prompt:
            raise UsageError("%%ask needs the question in the cell")
        try:
            server = None if args.local else server_of(args.server, args.token)
            if server is not None:
                given = [flag for dest, flag in LOCAL_ONLY.items() if getattr(args, dest)]
                if given:
                    raise UsageError(f"{', '.join(given)}: not with a server, whose own model and workspace "
                                     f"run the turn (add --local to run it here)")
                notebook = None if args.no_attach else server_notebook(server, args.notebook)
                result = self.servers.ask(server, prompt, thread=args.thread, source=args.source, rerun=args.rerun,
                                          on_event=cell_output.LiveProgress(), notebook=notebook)
                frames = {name: server.dataset(a) for name, a in result.datasets.items()}
                self._answer(result, frames, lambda a: server.content(a),
                             lambda: self._server_proposals(server, result, notebook))
                return
            from ..notebooks import load_attached

            model = ModelSettings.resolve(model=args.model, base_url=args.base_url)
            found = None if args.no_attach else local_notebook_path(args.notebook)
            result = self.session.ask(
                prompt, thread=args.thread, source=args.source, workspace=args.workspace, model=model,
                rerun=args.rerun, summarizer=not args.no_summarizer, on_event=cell_output.LiveProgress(),
                attached=load_attached(*found) if found is not None else None,
            )
            frames = {name: self.session.load(a, args.workspace) for name, a in result.datasets.items()}
            self._answer(result, frames, lambda a: self.session.image(a, args.workspace),
                         lambda: self._local_proposals(result, found[0] if found else None, args.workspace))
        except AnalystError as exc:
            raise refusal(exc) from None

    def _answer(self, result: AskResult, frames: dict[str, Any], image: Callable[[Artifact], bytes],
                proposals: Callable[[], None]) -> None:
        """Show the turn's answer, bind its datasets, list its artifacts, draw its charts and
        show the cells it proposed (``proposals``)."""
        from IPython.display import Image, display

        summary = result.summary
        cell_output.show(cell_output.answer(summary.answer, summary.citations, summary.unsupported))
        reused = summary.tool_calls["executed"] == 0
        for name, frame in frames.items():
            self.shell.user_ns[name] = frame
            cell_output.show(cell_output.bound_line(name, result.datasets[name], len(frame), reused))
        if result.artifacts:
            cell_output.show(cell_output.artifact_rows(result.artifacts))
        for artifact in result.artifacts:
            if artifact.type == "image" and artifact.mime in ("image/png", "image/jpeg"):
                display(Image(data=image(artifact)))
        proposals()
        cell_output.show({"text/plain": cell_output.summary_line(summary)})
        if summary.status not in ("completed", "needs_input"):
            raise refusal(summary.error or {"message": f"the turn ended {summary.status}: {summary.message}"
                                            if summary.message else f"the turn ended: {summary.status}"})

    def _local_proposals(self, result: AskResult, notebook: Path | None, workspace: str | None) -> None:
        """The turn's proposals for ``notebook`` (a local turn): shown, and NB.proposed.ipynb written."""
        from .proposed_cells import local_review, review_bundle

        summary = result.summary
        if notebook is None or not notebook.is_file():
            return
        diffs, written, skipped = local_review(self.session, summary.thread_id, summary.turn_id, notebook, workspace)
        if diffs:
            self.proposed = Proposed(summary.thread_id, summary.turn_id, notebook=notebook.absolute(),
                                     workspace=workspace, proposals=[d.proposal_id for d in diffs])
            cell_output.show(review_bundle(self.proposed, diffs, written, skipped))

    def _server_proposals(self, server: AnalystServer, result: AskResult, notebook: str | None) -> None:
        """The turn's proposals as the server keeps them: shown, decided through its API."""
        from .proposed_cells import review_bundle, server_review

        summary = result.summary
        if notebook is None:
            return
        diffs = server_review(server, summary.thread_id, summary.turn_id, notebook)
        if diffs:
            self.proposed = Proposed(summary.thread_id, summary.turn_id, server=server,
                                     proposals=[d.proposal_id for d in diffs])
            cell_output.show(review_bundle(self.proposed, diffs))

    # ------------------------------------------------------------------ %analyst

    @line_magic
    def analyst(self, line: str) -> None:
        """The workspace and the current thread: ``%analyst use --source SPEC | --thread ID``."""
        words = shlex.split(line)
        command, rest = (words[0], words[1:]) if words else ("", [])
        try:
            match command:
                case "use":
                    parser = _Parser(prog="%analyst use", add_help=False)
                    parser.add_argument("--thread", metavar="ID")
                    parser.add_argument("--source", metavar="SPEC")
                    parser.add_argument("--workspace", metavar="DIR")
                    parser.add_argument("--no-sandbox", action="store_true",
                                        help="run %%ask's Python without bubblewrap or limits (trusted code only)")
                    args = parser.parse_args(rest)
                    self.session.use(workspace=args.workspace, thread=args.thread, source=args.source)
                    self.session.sandbox = not args.no_sandbox
                    where = self.session.thread_id or f"a new thread on {self.session.source or '(no source yet)'}"
                    cell_output.show({"text/plain": f"workspace {self.session.workspace_path()}; current: {where}"})
                case "threads" | "artifacts" | "state" | "verify":
                    parser = _Parser(prog=f"%analyst {command}", add_help=False)
                    parser.add_argument("--thread", metavar="ID")
                    parser.add_argument("--workspace", metavar="DIR")
                    if command == "verify":
                        parser.add_argument("notebook", nargs="?", metavar="NB.ipynb")
                    args = parser.parse_args(rest)
                    report = getattr(self, f"_{command}")
                    report(args)
                case "accept" | "reject" | "revert":
                    self._decide(command, rest)
                case _:
                    raise UsageError(ANALYST_USAGE)
        except AnalystError as exc:
            raise refusal(exc) from None

    # ------------------------------------------------------------------ %analyst accept|reject|revert

    def _decide(self, command: str, words: list[str]) -> None:
        """A decision on proposed cells, where the turn that proposed them keeps them."""
        from .proposed_cells import decide_local, decide_remote, decided_bundle

        parser = _Parser(prog=f"%analyst {command}", add_help=False)
        if command == "revert":
            parser.add_argument("target", nargs="?", metavar="TURN")
        else:
            parser.add_argument("target", nargs="?", metavar="PROPOSAL")
            parser.add_argument("cells", nargs="*", metavar="CELL")
        parser.add_argument("--thread", metavar="ID")
        parser.add_argument("--notebook", metavar="NB.ipynb", help="a local decision: the notebook's file")
        parser.add_argument("--workspace", metavar="DIR")
        parser.add_argument("--server", metavar="URL")
        parser.add_argument("--token", metavar="T")
        parser.add_argument("--local", action="store_true")
        args = parser.parse_args(words)
        proposed = self._proposed_for(args)
        if command == "revert" and not (args.target or proposed.turn_id):
            raise UsageError("%analyst revert: name the turn (turn_...) whose accepted changes to undo")
        cells = getattr(args, "cells", None) or None
        if proposed.server is not None:
            result = decide_remote(proposed, command, args.target, cells)
        else:
            result = decide_local(self.session, proposed, command, args.target, cells)
        cell_output.show(decided_bundle(result, command))

    def _proposed_for(self, args: argparse.Namespace) -> Proposed:
        """Where the decision applies: the options, else the latest ``%%ask`` that proposed
        cells, else the kernel's server (``$JUPYTER_ANALYST_SERVER_URL``) or local workspace."""
        from ..errors import ConfigError

        base = self.proposed
        if args.server:
            server = server_of(args.server, args.token)
        elif args.local:
            server = None
        elif base is not None:
            server = base.server
        else:
            server = server_of(None, args.token)
        if base is not None and (base.server.api if base.server else None) != (server.api if server else None):
            base = None  # the latest proposals were kept elsewhere
        current = self.servers.current.get(server.api) if server is not None else self.session.thread_id
        thread = args.thread or (base.thread_id if base else None) or current
        if thread is None:
            raise ConfigError("no thread has proposals in this kernel yet", reason="no_thread",
                              hint="run %%ask beside a notebook first, or pass --thread ID")
        same = base is not None and base.thread_id == thread
        notebook = None
        if server is None:
            found = local_notebook_path(args.notebook)
            notebook = (found[0].absolute() if found is not None and args.notebook
                        else base.notebook if same and base is not None and base.notebook
                        else found[0].absolute() if found is not None else None)
        return Proposed(thread, base.turn_id if same and base else "", server=server, notebook=notebook,
                        workspace=args.workspace or (base.workspace if same and base else None),
                        proposals=list(base.proposals) if same and base else [])

    # ------------------------------------------------------------------ %analyst reports

    def _threads(self, args: argparse.Namespace) -> None:
        from ..sql import display_spec

        threads = self.session.read(lambda ws: ws.store.list_threads(), args.workspace)
        current = self.session.thread_id
        cell_output.show(cell_output.table(
            ["", "thread", "created", "source", "title"],
            [["*" if t.thread_id == current else "", t.thread_id, t.created_at,
              display_spec(t.source) if t.source else "-", t.title or ""] for t in threads],
        ))

    def _artifacts(self, args: argparse.Namespace) -> None:
        thread = self.session.current(args.thread)
        items = self.session.read(lambda ws: ws.artifacts.list(thread), args.workspace)
        cell_output.show(cell_output.artifact_rows(items) if items else {"text/plain": f"(no artifacts in {thread})"})

    def _state(self, args: argparse.Namespace) -> None:
        from ..agent import state_summary

        thread = self.session.current(args.thread)
        state = self.session.read(lambda ws: ws.store.agent_state(thread), args.workspace)
        # Expired context is shown too: this is a record, not a prompt.
        text = f"agent state of {thread}, version {state.version}\n" + state_summary(state, ttl_s=float("inf"), cap=100_000)
        if state.summary.text:
            text += f"\nSummary of turns 1-{state.summary.through_turn}:\n{state.summary.text}"
        cell_output.show({"text/plain": text})

    def _verify(self, args: argparse.Namespace) -> None:
        from ..notebooks import format_report

        report = self.session.verify(args.notebook, thread=args.thread, workspace=args.workspace)
        cell_output.show({"text/plain": format_report(report)})
        if report.verdict == "nothing_to_verify":
            raise UsageError(f"{report.notebook}: nothing to verify (it records no artifact)")
        if not report.ok:
            counts = ", ".join(f"{n} {status}" for status, n in report.counts.items())
            raise UsageError(f"{report.notebook} is NOT verified ({counts})" + (f": {report.error}" if report.error else ""))
