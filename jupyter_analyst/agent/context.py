"""What the model is shown on every call: rules, the data source, the inventory, history.

The artifact inventory goes into every call (not just the first), so the model always sees
what already exists and reuses it instead of making it again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..artifacts import Artifact

#: How many of the inventory's newest artifacts are listed in full.
INVENTORY_LIMIT = 60
#: How many tables of the source are described in the system message.
TABLE_LIMIT = 40
#: How many columns per table are listed.
COLUMN_LIMIT = 40

RULES = """\
You are jupyter-analyst, a careful data analyst. You answer questions about the user's data
by calling tools: SQL fetches data, Python analyses and charts it.

Rules:
- Facts about the data come from tool results, never from memory. Use list_tables and
  describe_table when a table is unfamiliar; use only tables and columns that exist.
- run_sql runs one read-only query ({dialect} dialect) and stores the result as a dataset;
  the kernel then holds it as a pandas DataFrame named by `name`.
- run_python runs code in a Jupyter kernel where those DataFrames live. pandas is `pd`;
  matplotlib figures you show are captured; save files under `outputs/`.
- Reuse what exists: the datasets and artifacts listed below are already made. Do not fetch
  or draw the same thing again; identical calls are not re-run, they return the recorded
  result.
- When you have the answer, reply in plain text, briefly, citing the artifact ids you used.
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
        lines.append(f"- ... {len(schema) - TABLE_LIMIT} more tables (call list_tables)")
    return "\n".join(lines)


def inventory_summary(artifacts: Sequence[Artifact]) -> str:
    """The thread's artifacts, newest last, one JSON object per line."""
    if not artifacts:
        return "(none yet)"
    shown = artifacts[-INVENTORY_LIMIT:]
    lines = [json.dumps(a.summary(), sort_keys=True) for a in shown]
    if len(artifacts) > len(shown):
        lines.insert(0, f"({len(artifacts) - len(shown)} older artifacts: call list_artifacts)")
    return "\n".join(lines)


def system_message(
    *,
    dialect: str,
    source_label: str,
    schema: dict[str, dict[str, str]],
    artifacts: Sequence[Artifact],
    datasets: Sequence[str],
) -> dict[str, Any]:
    """The system message of one model call."""
    loaded = ", ".join(datasets) if datasets else "(none yet)"
    text = (
        RULES.format(dialect=dialect)
        + f"\nData source: {source_label}\nTables:\n{schema_summary(schema)}\n"
        + f"\nDatasets (DataFrames) of this thread: {loaded}\n"
        + f"\nArtifact inventory of this thread:\n{inventory_summary(artifacts)}\n"
    )
    return {"role": "system", "content": text}


def history_window(messages: Sequence[dict[str, Any]], last: int = 20) -> list[dict[str, Any]]:
    """The last ``last`` messages, cut so that the window starts at a user message.

    A window that began with a tool result or an assistant's tool call would leave a
    tool call without its answer (or the reverse), which chat APIs reject.

    >>> msgs = [{"role": "user"}, {"role": "assistant"}, {"role": "tool"}, {"role": "user"}]
    >>> [m["role"] for m in history_window(msgs, last=3)]
    ['user']
    """
    window = list(messages[-last:]) if last > 0 else []
    while window and window[0].get("role") != "user":
        window.pop(0)
    return window
