"""The system message of every model call: rules, the data source, the agent state, the
rolling summary and the artifact inventory.

The inventory and the agent state go into every call (not just the first), so the model
always sees what already exists and what it has established, and reuses it instead of
making it again. The authoritative context (active source, dataset, notebook) is stated
as such: it wins over anything older in the history. Every section is bounded, so the
message costs the same on turn 200 as on turn 2.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from ...agent_state import AgentState
from ...artifacts import Artifact

#: How many of the inventory's newest artifacts are listed in full.
INVENTORY_LIMIT = 40
#: How many tables of the source are described in the system message.
TABLE_LIMIT = 40
#: How many columns per table are listed.
COLUMN_LIMIT = 40
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
  the kernel then holds it as a pandas DataFrame named by `name`.
- run_python runs code in a Jupyter kernel where those DataFrames live. pandas is `pd`;
  matplotlib figures you show are captured; save files under `outputs/`.
- State what you expect in `expect` (rows, columns, artifact type, count) when you know it;
  a mismatch is reported back to you as an assumption to reconsider.
- Reuse what exists: the datasets and artifacts listed below are already made. Do not fetch
  or draw the same thing again; identical calls are not re-run, they return the recorded
  result.
- The active context below is authoritative: "it", "that", "the data" mean the active
  dataset unless the user says otherwise.
- If the request can mean different things and the choice changes the answer, call clarify
  with the candidates instead of guessing; if it is clear, act.
- When you have the answer, reply in plain text, briefly, citing the artifact ids you used.
"""

CHAT_RULES = """\
You are jupyter-analyst, an assistant that analyses the user's data with SQL and Python in a
Jupyter kernel. The user is greeting you or asking about you: answer briefly and in plain
text, without tools, and say what you can do with their data source ({source}).
"""


def schema_summary(schema: dict[str, dict[str, str]]) -> str:
    """A compact listing of tables and their columns.

    >>> print(schema_summary({"sales": {"region": "VARCHAR", "amount": "DOUBLE"}}))
    - sales(region VARCHAR, amount DOUBLE)
    """
    lines = []
    for table, columns in list(schema.items())[:TABLE_LIMIT]:
        cols = ", ".join(f"{c} {t}" for c, t in list(columns.items())[:COLUMN_LIMIT])
        more = f", ... {len(columns) - COLUMN_LIMIT} more" if len(columns) > COLUMN_LIMIT else ""
        lines.append(f"- {table}({cols}{more})")
    if len(schema) > TABLE_LIMIT:
        lines.append(f"- ... {len(schema) - TABLE_LIMIT} more tables (call list_tables or find)")
    return "\n".join(lines)


def inventory_summary(artifacts: Sequence[Artifact], total: int | None = None) -> str:
    """The thread's newest artifacts, newest last, one JSON object per line."""
    if not artifacts:
        return "(none yet)"
    total = len(artifacts) if total is None else total
    shown = artifacts[-INVENTORY_LIMIT:]
    lines = [json.dumps(a.summary(), sort_keys=True) for a in shown]
    if total > len(shown):
        lines.insert(0, f"({total - len(shown)} older artifacts: call list_artifacts or find)")
    return "\n".join(lines)


def _clip(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 1] + "…"


def state_summary(state: AgentState, *, ttl_s: float, now: datetime | None = None, cap: int = 4_000) -> str:
    """The agent state as the model reads it: the active context first, then what is known.

    >>> from jupyter_analyst.agent_state import ActiveValue
    >>> s = AgentState(active={"dataset": ActiveValue(value="revenue", detail="art_1", last_used="2026-01-01T00:00:00Z")})
    >>> print(state_summary(s, ttl_s=60, now=datetime.fromisoformat("2026-01-01T00:00:10+00:00")).splitlines()[1])
    - active dataset: `revenue` (art_1)
    """
    lines = ["Active context (authoritative; wins over older messages):"]
    active = state.active_now(ttl_s, now)
    for slot in ("source", "dataset", "notebook"):
        value = active.get(slot)  # type: ignore[call-overload]
        if value is not None:
            detail = f" ({_clip(value.detail, 300)})" if value.detail else ""
            lines.append(f"- active {slot}: `{value.value}`{detail}")
    if len(lines) == 1:
        lines.append("- (none: ask or use find when the user refers to something loosely)")
    datasets = [e for e in state.entities.values() if e.kind == "dataset"][-STATE_ENTRIES:]
    if datasets:
        lines.append("Datasets (DataFrames in the kernel) and what they hold:")
        for entity in datasets:
            note = entity.detail.get("intent") or ""
            lines.append(f"- `{entity.name}` {entity.detail.get('artifact_id') or ''}: {_clip(note, 300)}")
    charts = [e for e in state.entities.values() if e.kind == "artifact"][-STATE_ENTRIES:]
    if charts:
        lines.append("Artifacts made from datasets:")
        for entity in charts:
            made_from = ", ".join(d.removeprefix("dataset:") for d in entity.derived_from) or "no dataset"
            lines.append(f"- {entity.name} {entity.detail.get('file', '')} ({entity.detail.get('type', '')}) from {made_from}")
    assumptions = [a for a in state.assumptions.values() if a.confidence > 0][-STATE_ENTRIES:]
    if assumptions:
        lines.append("Assumptions (confidence):")
        lines += [f"- [{a.confidence:.1f}] {_clip(a.hypothesis, 300)}" for a in assumptions]
    # A failed expectation is told with its step's result, not here (guards/expectations.py).
    hypotheses = list(state.hypotheses.values())[-STATE_ENTRIES:]
    if hypotheses:
        lines.append("Tentative hypotheses:")
        lines += [f"- {_clip(h.text, 200)}" for h in hypotheses]
    items = state.open_items()[-STATE_ENTRIES:]
    if items:
        lines.append("Open items:")
        for item in items:
            options = f" (candidates: {' | '.join(item.candidates)})" if item.candidates else ""
            lines.append(f"- {item.kind}: {_clip(item.text, 200)}{options}")
    return _clip("\n".join(lines), cap)


def pinned_texts(state: AgentState, *, summarized_through: int, cap: int) -> str:
    """Pasted texts still under discussion whose turn has been folded into the summary."""
    parts = []
    for item in state.open_items():
        turn = item.ref.get("turn")
        text = item.ref.get("text")
        if item.kind == "note" and isinstance(text, str) and isinstance(turn, int) and turn <= summarized_through:
            parts.append(f"Text the user pasted in turn {turn} (verbatim, still under discussion):\n{text}")
    return _clip("\n\n".join(parts), cap) if parts else ""


def system_text(
    *,
    dialect: str,
    source_label: str,
    schema: dict[str, dict[str, str]],
    artifacts: Sequence[Artifact],
    artifact_total: int,
    state: AgentState,
    ttl_s: float,
    state_chars: int,
    summary_chars: int,
) -> dict[str, str]:
    """The system message's sections, by name (the context pack counts each)."""
    summary = state.summary
    sections = {
        "rules": RULES.format(dialect=dialect) + f"\nData source: {source_label}\nTables:\n{schema_summary(schema)}\n",
        "state": "\n" + state_summary(state, ttl_s=ttl_s, cap=state_chars) + "\n",
        "summary": (
            f"\nSummary of turns 1-{summary.through_turn} (older messages are not shown):\n"
            + _clip(summary.text, summary_chars) + "\n"
            if summary.text
            else ""
        ),
        "pinned": pinned_texts(state, summarized_through=summary.through_turn, cap=summary_chars),
        "inventory": f"\nArtifact inventory of this thread:\n{inventory_summary(artifacts, artifact_total)}\n",
    }
    return {name: text for name, text in sections.items() if text}
