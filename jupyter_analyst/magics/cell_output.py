"""What the magics show in the cell's output: a turn's progress as it goes, its answer,
its artifacts, and short tables of the workspace.

Progress is the CLI's own line-per-event display (progress.py), kept in one output that
is updated in place, so a notebook shows the same words as a terminal.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from html import escape
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..events import Event
    from ..turns import TurnSummary
    from ..artifacts import Artifact
    from ..receipts import Citation, UnsupportedClaim


def short(fingerprint: str) -> str:
    """A fingerprint as people compare it: its first 12 hex digits.

    >>> short("sha256:4239734c74cf35c55b89f61447f1180d2ccc158d5e1d4860512cf71e25be48cf")
    'sha256:4239734c74cf'
    """
    return fingerprint[:19]


class LiveProgress:
    """The turn's events as lines, in one display updated as each event arrives."""

    def __init__(self) -> None:
        from IPython.display import display

        from ..progress import ProgressPrinter

        self._text = io.StringIO()
        self._printer = ProgressPrinter(self._text)
        self._handle = display({"text/plain": "starting..."}, raw=True, display_id=True)

    def __call__(self, event: Event) -> None:
        self._printer(event)
        if self._handle is not None:
            self._handle.update({"text/plain": self._text.getvalue().rstrip("\n")}, raw=True)


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> dict[str, str]:
    """A small table as ``text/html`` and ``text/plain``.

    >>> table(["a"], [[1]])["text/plain"]
    'a\\n1'
    """
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(v))}</td>" for v in row) + "</tr>" for row in rows)
    widths = [max([len(h)] + [len(str(r[i])) for r in rows]) for i, h in enumerate(headers)]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(line, widths, strict=True)).rstrip()
             for line in [list(headers), *rows]]
    return {"text/html": f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>",
            "text/plain": "\n".join(lines)}


def artifact_rows(artifacts: Sequence[Artifact]) -> dict[str, str]:
    """The artifacts' names, types and short fingerprints."""
    return table(["artifact", "name", "type", "fingerprint"],
                 [[a.artifact_id, a.name, a.type, short(a.fingerprint)] for a in artifacts])


def bound_line(name: str, artifact: Artifact, rows: int, reused: bool) -> dict[str, str]:
    """What a dataset binding says: the name, its rows, the artifact and its fingerprint."""
    how = "reused" if reused else "executed"
    text = f"{name}: {rows} rows, artifact {artifact.artifact_id}, {short(artifact.fingerprint)} ({how})"
    return {"text/plain": text, "text/html": f"<p><code>{escape(name)}</code>: {escape(text.split(': ', 1)[1])}</p>"}


def answer(text: str, citations: Sequence[Citation] = (), unsupported: Sequence[UnsupportedClaim] = (),
           ) -> dict[str, str]:
    """The model's answer as ``text/html`` made inert and as ``text/plain``, its receipts
    under it as footnotes (as the audit notebook's answer cell has them): each cited number
    with the step (call id), row and column that hold it, an unsupported one marked.

    JupyterLab renders the outputs of a cell the user runs as trusted, markdown and HTML
    unsanitized: the answer, an attacker's text, is never sent as ``text/markdown`` or as
    its own HTML (see untrusted.py).

    >>> answer("**North** <img src=x onerror=alert(1)>")["text/html"]
    '<p><strong>North</strong> &lt;img src=x onerror=alert(1)&gt;</p>\\n'
    """
    from ..notebooks import receipt_notes
    from ..untrusted import answer_html, terminal_text

    shown = text or "_(no answer)_"
    # No step cells here to link to: each note names its step by call id.
    notes = receipt_notes(citations, unsupported, {}) if text else ""
    if notes:
        shown, text = f"{shown}\n\n---\n\n{notes}", f"{text}\n\n{notes}"
    # text/plain is what a terminal IPython prints: its control characters are shown escaped.
    return {"text/html": answer_html(shown), "text/plain": terminal_text(text) or "(no answer)"}


def summary_line(summary: TurnSummary) -> str:
    """The turn's counts, as the CLI prints them."""
    calls, arts = summary.tool_calls, summary.artifacts
    waiting = "waiting for your answer (the next %%ask answers it); " if summary.status == "needs_input" else ""
    return (f"{waiting}steps: {calls['executed']} executed, {calls['reused']} reused, {calls['blocked']} blocked; "
            f"artifacts: {arts['created']} created, {arts['reused']} reused; thread {summary.thread_id}")


def show(bundle: dict[str, Any]) -> None:
    """Display a mime bundle in the running cell."""
    from IPython.display import display

    display(bundle, raw=True)
