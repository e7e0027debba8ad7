"""The system message of every model call: rules, the data source, the rolling summary and
the agent state (the datasets and artifacts that exist among it).

The agent state goes into every call (not just the first), so the model always sees what
already exists and what it has established, and reuses it instead of making it again;
each fact is stated once (the inventory is folded into the Datasets and Artifacts lines). The authoritative context (active source, dataset, notebook) is stated
as such: it wins over anything older in the history. Every section is bounded, so the
message costs the same on turn 200 as on turn 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from ..._text import how_many
from ...agent_state import AgentState
from ...artifacts import Artifact
from ...sql import OUTLINE_COLUMNS, OUTLINE_TABLES, SourceOutline

#: How many of the newest datasets, and of the other artifacts, are listed.
INVENTORY_LIMIT = 40
#: How many tables of the source are described in the system message.
TABLE_LIMIT = OUTLINE_TABLES
#: How many columns per table are listed.
COLUMN_LIMIT = OUTLINE_COLUMNS
#: How many text columns holding dates are noted in full (the rest by name).
DATE_NOTES = 12
#: How many entries of each agent-state section are shown (the newest).
STATE_ENTRIES = 12

RULES = """\
You are jupyter-analyst, a careful data analyst. You answer questions about the user's data
by calling tools: SQL fetches data, Python analyses and charts it.

Rules:
- Facts about the data come from tool results, never from memory. Use only tables, columns,
  datasets and artifact ids that exist: they are listed below or returned by tools. When the
  user names something loosely ("the sales table", "that chart"), call find; never guess.
- run_sql runs one read-only query ({dialect} dialect) and stores the result as a dataset;
  the kernel then holds it as a pandas DataFrame named by `name` (a name fetched into again
  holds the new rows; the older dataset is then in no name, and find still finds it).
- run_python runs code in a Jupyter kernel where those DataFrames live. pandas is `pd`;
  matplotlib figures you show are captured; save files under `outputs/`.
- State what you expect in `expect` (rows, columns, artifact type, count) when you know it;
  a mismatch comes back with that step's result.
- Reuse what exists: once steps have made datasets and artifacts, they are listed below. Do
  not fetch or draw the same thing again; identical calls are not re-run, they return the
  recorded result.
- The active context below is authoritative: "it", "that", "the data" mean the active
  dataset unless the user says otherwise.
- If the request can mean different things and the choice changes the answer, call clarify
  with the candidates instead of guessing; if it is clear, act.
- When you have the answer, reply briefly in plain text, citing the dataset names and artifact
  ids you used; a small table (a few rows, in Markdown) is fine when the answer is one. Every
  number you state is checked: it must be in a result you were shown, or one operation (a
  sum, difference or ratio) from numbers that are; compute any other with a step first.
"""

#: Said beside a notebook the model may propose cells for: the two kernels a proposed cell
#: meets, whose names differ (the sandbox's are the conversation's; the user's, the notebook's).
TWO_KERNELS = (
    "The notebook's variables are not in your kernel, nor yours in the user's. A proposed code cell runs in "
    "both (yours first): it may use names the notebook defines before it (make them in yours too, e.g. run_sql "
    "with the same name) and must define any other."
)

CHAT_RULES = """\
You are jupyter-analyst, an assistant that analyses the user's data with SQL and Python in a
Jupyter kernel. The user is greeting you or asking about you: answer briefly and in plain
text, without tools, and say what you can do with their data source ({source}).
"""


#: How the last request of a turn that used its whole step budget begins its closing note.
STEP_BUDGET_MARKER = "[step budget spent]"


def step_budget_note(max_steps: int) -> dict[str, str]:
    """The closing message of the request that asks a turn's answer once its step budget is
    spent: without it the model meets a request with no tools and no word why.

    >>> print(step_budget_note(2)["content"])
    [step budget spent] This turn allows 2 model calls with tools, and they are all used: no tool can be called now. Answer from what the steps so far found, and say plainly what is unfinished and which step would come next.
    """
    calls = f"{max_steps} model call{'' if max_steps == 1 else 's'}"
    return {"role": "user", "content": (
        f"{STEP_BUDGET_MARKER} This turn allows {calls} with tools, and they are all used: no tool can be "
        "called now. Answer from what the steps so far found, and say plainly what is unfinished and "
        "which step would come next.")}


def schema_summary(schema: dict[str, dict[str, str]], outline: SourceOutline | None = None) -> str:
    """A compact listing of tables and their columns, with each table's row count and notes
    on columns a model would misread, where the source's outline has them (sql/schema_outline.py).

    >>> print(schema_summary({"sales": {"region": "VARCHAR", "amount": "DOUBLE"}}))
    - sales(region VARCHAR, amount DOUBLE)
    >>> from jupyter_analyst.sql.schema_outline import TableOutline
    >>> outline = SourceOutline(tables={"sales": TableOutline(rows=2400, date_text={"day": "2025-01-01"},
    ...                                                       times={"day": "dates"})})
    >>> print(schema_summary({"sales": {"day": "VARCHAR", "amount": "DOUBLE"}}, outline))
    - sales (2,400 rows): day VARCHAR, amount DOUBLE
    Notes on the data:
    - sales.day is text holding dates (e.g. '2025-01-01' in its first rows): cast or parse it before comparing or grouping by time
    """
    outline = outline or SourceOutline()
    lines = []
    notes: list[str] = []
    for table, columns in list(schema.items())[:TABLE_LIMIT]:
        cols = ", ".join(f"{c} {t}" for c, t in list(columns.items())[:COLUMN_LIMIT])
        more = f", ... {len(columns) - COLUMN_LIMIT} more" if len(columns) > COLUMN_LIMIT else ""
        read = outline.tables.get(table)
        if read is not None and read.rows is not None and read.estimated:
            lines.append(f"- {table} (about {how_many(read.rows, 'row')}, the engine's estimate): {cols}{more}")
        elif read is not None and read.rows is not None:
            lines.append(f"- {table} ({how_many(read.rows, 'row')}): {cols}{more}")
        else:
            lines.append(f"- {table}({cols}{more})")
        for column, example in (read.date_text.items() if read is not None else ()):
            notes.append(f"- {table}.{column} is text holding {read.times.get(column, 'dates')} (e.g. {example!r} in "
                         "its first rows): cast or parse it before comparing or grouping by time")
    if len(schema) > TABLE_LIMIT:
        lines.append(f"- ... {len(schema) - TABLE_LIMIT} more tables (call list_tables or find)")
    if len(notes) > DATE_NOTES:  # the rest by name only: the section stays bounded
        rest = [n.removeprefix("- ").split(" ", 1)[0] for n in notes[DATE_NOTES - 1:]]
        notes = notes[:DATE_NOTES - 1] + [f"- also text holding dates or timestamps: {', '.join(rest)}"]
    notes += [f"- {note}" for note in outline.shared]
    if notes:
        lines += ["Notes on the data:", *notes]
    return "\n".join(lines)


def _clip(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 1] + "…"


#: The most characters of a dataset's description shown (descriptions keep to a budget of
#: their own, shortened by whole parts: this only bounds what a stored one may hold).
DESCRIPTION_CHARS = 600


def _whole_parts(text: str, cap: int = DESCRIPTION_CHARS) -> str:
    """``text`` cut after its last whole ``; ``-separated part that fits, never mid-expression.

    >>> _whole_parts("from t; where: x > 1; 9 rows", 24)
    'from t; where: x > 1; …'
    """
    if len(text) <= cap:
        return text
    end = text.rfind("; ", 0, cap - 2)
    return text[:end] + "; …" if end > 0 else _clip(text, cap)


def turn_span(first: int, last: int) -> str:
    """A range of turns in words.

    >>> turn_span(1, 4), turn_span(3, 3), turn_span(1, 0)
    ('turns 1-4', 'turn 3', 'no turns')
    """
    if last < first:
        return "no turns"
    return f"turn {first}" if first == last else f"turns {first}-{last}"


@dataclass
class _Part:
    """One part of the state section: a header and its lines, newest last."""

    header: str
    lines: list[str]
    protected: bool = False
    """Never cut to make room: the other parts are cut first, oldest lines first."""

    @property
    def chars(self) -> int:
        return (len(self.header) + 1 if self.header else 0) + sum(len(line) + 1 for line in self.lines)


def _fit(parts: Sequence[_Part], cap: int) -> list[_Part]:
    """The parts within ``cap`` characters: protected parts whole, then the others in the
    order given (their priority), each keeping the newest lines that still fit.

    >>> kept = _fit([_Part("Open items:", ["- a"], protected=True), _Part("Datasets:", ["- old", "- new"])], 35)
    >>> [(p.header, p.lines) for p in kept]
    [('Open items:', ['- a']), ('Datasets:', ['- new'])]
    """
    used = sum(p.chars for p in parts if p.protected)
    kept: list[_Part] = []
    for part in parts:
        if part.protected:
            kept.append(part)
            continue
        room = cap - used - len(part.header) - 1
        lines: list[str] = []
        for line in reversed(part.lines):
            if len(line) + 1 > room:
                break
            lines.insert(0, line)
            room -= len(line) + 1
        if lines:
            kept.append(_Part(part.header, lines))
            used += kept[-1].chars
    return kept


def _inventory_lines(
    state: AgentState, artifacts: Sequence[Artifact], artifact_total: int | None
) -> tuple[list[str], list[str]]:
    """The datasets and the other artifacts that exist, newest last, one line each: the
    inventory (what exists) joined with what the state knows of each (its description,
    what it was made from). Datasets the state knows that are older than the inventory's
    window come first."""
    datasets: dict[str, str] = {}
    others: list[str] = []
    listed = {a.artifact_id for a in artifacts}
    # The names each dataset was last fetched into: a query whose rows a dataset already holds
    # binds that dataset to its new name too (it is not stored again).
    holders: dict[str, list[str]] = {}
    for entity in state.entities.values():
        if entity.kind == "dataset" and entity.detail.get("artifact_id"):
            holders.setdefault(str(entity.detail["artifact_id"]), []).append(entity.name)
        if entity.kind == "dataset" and entity.detail.get("artifact_id") not in listed:
            datasets[entity.name] = _dataset_line(entity.name, entity.detail.get("artifact_id") or "", entity.detail)
    for artifact in artifacts:
        if artifact.type == "dataset":
            own = state.entities.get(f"dataset:{artifact.name}")
            replaced = own is not None and own.detail.get("artifact_id") not in (None, artifact.artifact_id)
            names = holders.get(artifact.artifact_id) or ([] if replaced else [artifact.name])
            for name in names:
                entity = state.entities.get(f"dataset:{name}")
                # A name made again holds its newest version: its line moves to the end.
                datasets.pop(name, None)
                datasets[name] = _dataset_line(name, artifact.artifact_id, entity.detail if entity else {})
            continue
        entity = state.entities.get(f"artifact:{artifact.artifact_id}")
        made_from = ", ".join(f"`{d.removeprefix('dataset:')}`" for d in entity.derived_from) if entity else ""
        title = entity.detail.get("title") if entity else None
        others.append(
            f"- {artifact.artifact_id} {artifact.name} ({artifact.type})"
            + (f' "{_clip(str(title), 120)}"' if title else "") + (f" from {made_from}" if made_from else "")
        )
    total = len(artifacts) if artifact_total is None else artifact_total
    if total > len(artifacts):
        others.insert(0, f"- ({total - len(artifacts)} older artifacts: call list_artifacts or find)")
    return list(datasets.values()), others


def _dataset_line(name: str, artifact_id: str, detail: dict[str, Any]) -> str:
    note = detail.get("intent") or (f"{detail['rows']} rows" if detail.get("rows") is not None else "")
    return f"- `{name}` {artifact_id}" + (f": {_whole_parts(str(note))}" if note else "")


def state_summary(
    state: AgentState,
    *,
    ttl_s: float,
    now: datetime | None = None,
    cap: int = 4_000,
    previous: str = "",
    artifacts: Sequence[Artifact] = (),
    artifact_total: int | None = None,
    stated_source: str = "",
    for_model: bool = False,
) -> str:
    """The agent state as the model reads it, within ``cap`` characters. ``stated_source``:
    the source the message names already (its "Data source" line), not named again here.
    ``for_model``: the system message's form, without the thread's audit notebook (a path
    on the host that no tool reads; a notebook the user attached has a section of its own)
    and saying when no dataset is active; else the form a person reads (``state``, magics).

    What "continue" and a follow-up need is protected: how the previous turn ended (and
    what its answer offered), the open items and pending questions, the hypotheses. The rest
    is cut before them, oldest lines first, in this order of priority: the active context,
    failed expectations, assumptions, the datasets, the other artifacts.

    >>> from jupyter_analyst.agent_state import ActiveValue
    >>> s = AgentState(active={"dataset": ActiveValue(value="revenue", detail="art_1", last_used="2026-01-01T00:00:00Z")})
    >>> print(state_summary(s, ttl_s=60, now=datetime.fromisoformat("2026-01-01T00:00:10+00:00")).splitlines()[1])
    - active dataset: `revenue` (art_1)
    """
    active_lines = []
    active = state.active_now(ttl_s, now)
    for slot in ("source", "dataset") if for_model else ("source", "dataset", "notebook"):
        value = active.get(slot)  # type: ignore[call-overload]
        if value is not None and not (slot == "source" and value.value == stated_source):
            detail = f" ({_whole_parts(value.detail)})" if value.detail else ""
            active_lines.append(f"- active {slot}: `{value.value}`{detail}")
    if for_model and active.get("dataset") is None:  # type: ignore[call-overload]
        active_lines.append("- no active dataset when this turn began: ask or use find when the user refers to something loosely")
    elif not active_lines:
        active_lines.append("- (none)")
    items = []
    for item in state.open_items()[-STATE_ENTRIES:]:
        options = f" (candidates: {' | '.join(item.candidates)})" if item.candidates else ""
        # Which turn asked it: with the previous turn's number, whether the user let it pass.
        asked = f" (asked in turn {item.ref['turn']})" if item.kind == "question" and isinstance(item.ref.get("turn"), int) else ""
        items.append(f"- {item.kind}{asked}: {_clip(item.text, 200)}{options}")
    datasets, others = _inventory_lines(state, artifacts, artifact_total)
    current = active.get("dataset")  # type: ignore[call-overload]
    if current is not None and current.detail:
        # Described once: on its active line (which outranks the list when space is short).
        mark = f"- `{current.value}` "
        datasets = [line.split(":", 1)[0] + ": the active dataset, described above" if line.startswith(mark) else line
                    for line in datasets]
    live = [a for a in state.assumptions.values() if a.confidence > 0][-STATE_ENTRIES:]
    shown = [  # in the order they are shown
        _Part("", [_clip(previous, 1_000)] if previous else [], protected=True),
        # The system message is made at a turn's first call and kept for its prompt cache: what
        # the turn's own steps make is in their results, so this says when it held.
        _Part("Active context when this turn began (authoritative; wins over older messages):", active_lines),
        _Part("Open items:", items, protected=True),
        _Part("Tentative hypotheses:", [f"- {_clip(h.text, 200)}" for h in list(state.hypotheses.values())[-STATE_ENTRIES:]],
              protected=True),
        _Part("Assumptions (confidence):", [f"- [{a.confidence:.1f}] {_clip(a.hypothesis, 300)}" for a in live]),
        _Part("Datasets (DataFrames in the kernel) and what they hold:", datasets[-INVENTORY_LIMIT:]),
        _Part("Artifacts (charts, files):", others[-INVENTORY_LIMIT:]),
    ]
    # A failed expectation is told with its step's result, not here (guards/expectations.py).
    priority = [shown[i] for i in (0, 2, 3, 1, 4, 5, 6) if shown[i].lines]
    fitted = {p.header: p for p in _fit(priority, cap)}
    lines: list[str] = []
    for part in shown:
        if part.header in fitted:
            lines += ([part.header] if part.header else []) + fitted[part.header].lines
    return "\n".join(lines)


def pinned_texts(state: AgentState, *, summarized_through: int, cap: int) -> str:
    """Pasted texts still under discussion whose turn has been folded into the summary."""
    parts = []
    for item in state.open_items():
        turn = item.ref.get("turn")
        text = item.ref.get("text")
        if item.kind == "note" and isinstance(text, str) and isinstance(turn, int) and turn <= summarized_through:
            parts.append(f"Text the user pasted in turn {turn} (verbatim, still under discussion):\n{text}")
    return _clip("\n\n".join(parts), cap) if parts else ""


def size_line(outline: SourceOutline | None) -> str:
    """The source's size class, as the model is told it; for a large source, that the work on
    its rows belongs in SQL (a result past the row cap is cut, and says so).

    >>> size_line(SourceOutline(size="small", largest=2400))
    'Size: small (largest table 2,400 rows).'
    >>> from jupyter_analyst.sql.schema_outline import TableOutline
    >>> big = TableOutline(rows=52_000_000, estimated=True)
    >>> print(size_line(SourceOutline(tables={"events": big}, size="large", largest=52_000_000)))
    Size: large (largest table about 52,000,000 rows): aggregate, filter and join in SQL; fetch only the rows the answer needs.
    """
    if outline is None or outline.size == "unknown" or outline.largest is None:
        return "Size: unknown (its tables were not counted cheaply)."
    about = "about " if any(t.estimated and t.rows == outline.largest for t in outline.tables.values()) else ""
    said = f"Size: {outline.size} (largest table {about}{how_many(outline.largest, 'row')})"
    if outline.size == "large":
        return said + ": aggregate, filter and join in SQL; fetch only the rows the answer needs."
    return said + "."


def _tables_heading(outline: SourceOutline | None) -> str:
    """``Tables:``, saying when a live database's rows were counted.

    >>> _tables_heading(SourceOutline(counted_at="14:02 UTC"))
    'Tables (rows counted at 14:02 UTC; the database is live):'
    """
    if outline is not None and outline.counted_at:
        return f"Tables (rows counted at {outline.counted_at}; the database is live):"
    return "Tables:"


def system_text(
    *,
    dialect: str,
    source_label: str,
    source_spec: str = "",
    schema: dict[str, dict[str, str]],
    outline: SourceOutline | None = None,
    artifacts: Sequence[Artifact],
    artifact_total: int,
    state: AgentState,
    ttl_s: float,
    state_chars: int,
    summary_chars: int,
    previous: str = "",
    notebook: str = "",
    team: str = "",
    today: date | None = None,
) -> dict[str, str]:
    """The system message's sections, by name (the context pack counts each), the ones that
    change least first: the rules and schema are the same on every call of a thread, and a
    provider's prompt cache keeps that prefix; the date, which changes by the day, follows
    them; the agent state, which changes every turn, comes last. ``today``: the date the
    turn began, which relative dates ("this year", "last month") count from."""
    summary = state.summary
    sections = {
        "rules": RULES.format(dialect=dialect) + f"\nData source: {source_label}\n{size_line(outline)}\n"
                 + f"{_tables_heading(outline)}\n"
                 + f"{schema_summary(schema, outline)}\n",
        # The team's rules and what its context folder defines: as stable as the rules.
        "team": team,
        "date": f"\nToday is {today:%A} {today.isoformat()} (UTC, the date this turn began).\n" if today else "",
        "summary": (
            f"\nSummary of {turn_span(1, summary.through_turn)} (older messages are not shown):\n"
            + _clip(summary.text, summary_chars) + "\n"
            if summary.text
            else ""
        ),
        "pinned": pinned_texts(state, summarized_through=summary.through_turn, cap=summary_chars),
        "notebook": notebook,
        "state": "\n" + state_summary(
            state, ttl_s=ttl_s, cap=state_chars, previous=previous, artifacts=artifacts, artifact_total=artifact_total,
            stated_source=source_spec,  # said once: on the "Data source" line
            for_model=True,
        ) + "\n",
    }
    return {name: text for name, text in sections.items() if text}
