"""The thread's notebook: each turn appends its prompt, its steps and its answer.

Cells carry their provenance under ``metadata.jupyter_analyst`` so that a reader (or a
verifier) can tie every cell to the tool call, step key and artifacts behind it.

The turn's path (build, read back, check, write) goes through ``ipynb.py``, not
``nbformat``, whose import alone costs more than a turn whose steps are all reused.
"""

from __future__ import annotations

import base64
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from .. import __version__
from . import ipynb
from .ipynb import new_code_cell, new_markdown_cell, new_notebook, new_output

if TYPE_CHECKING:
    from nbformat import NotebookNode

    from ..agent.loop import StepTrace, TurnSummary, TurnTrace
    from ..artifacts import ArtifactStore

META = "jupyter_analyst"


class TurnHeader(BaseModel):
    """Which thread and turn a notebook section belongs to."""

    thread_id: str
    source: str
    model: str
    turn_number: int
    turn_id: str
    prompt: str


def sql_cell_source(name: str, sql: str) -> str:
    """The code cell that stands for a SQL step: it re-runs the query into ``name``.

    >>> print(sql_cell_source("revenue", "SELECT 1"))
    revenue = analyst.sql(\"\"\"
    SELECT 1
    \"\"\")
    """
    # Backslashes first: a "\n" inside a string literal of the SQL must stay two characters.
    body = sql.strip().replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return f'{name} = analyst.sql("""\n{body}\n""")'


def connect_source(source: str) -> str:
    """The lines that open ``source`` for the SQL cells that follow (any kernel).

    >>> print(connect_source("/data/sales.duckdb"))
    from jupyter_analyst import runtime as analyst
    analyst.connect('/data/sales.duckdb')
    """
    return f"from jupyter_analyst import runtime as analyst\nanalyst.connect({source!r})"


def step_source(tool: str, arguments: dict[str, Any]) -> str:
    """The code of the cell that stands for a ``run_sql`` or ``run_python`` step.

    >>> print(step_source("run_python", {"code": "revenue.head()"}))
    revenue.head()
    """
    if tool == "run_sql":
        return sql_cell_source(arguments["name"], arguments["sql"])
    return arguments["code"]


def _setup_cell(source: str) -> ipynb.Node:
    cell = new_code_cell("# Set-up: the data source this thread queried.\n" + connect_source(source))
    cell.metadata[META] = {"role": "setup"}
    return cell


def load(path: Path, *, thread_id: str, source: str, model: str) -> ipynb.Node:
    """The thread's notebook, or a new one with its set-up cell."""
    if path.exists():
        return ipynb.read(path)
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata[META] = {"thread_id": thread_id, "source": source, "model": model, "version": __version__}
    nb.cells.append(new_markdown_cell(f"# Analysis thread `{thread_id}`\n\nData source: `{source}`"))
    nb.cells.append(_setup_cell(source))
    return nb


def step_cell(
    *,
    tool: str,
    arguments: dict[str, Any],
    call_id: str,
    step_key: str | None,
    state: str,
    reused: bool,
    status: str,
    artifact_ids: Sequence[str],
    duration_s: float,
    outputs: Sequence[dict[str, Any]],
) -> ipynb.Node:
    """One code cell for one SQL or Python step, with its outputs and provenance."""
    cell = new_code_cell(step_source(tool, arguments))
    cell.outputs = [new_output(**_output_fields(o)) for o in outputs]
    cell.metadata[META] = {
        "tool": tool,
        "call_id": call_id,
        "step_key": step_key,
        "state": state,
        "reused": reused,
        "status": status,
        "artifact_ids": list(artifact_ids),
        "duration_s": round(duration_s, 3),
    }
    return cell


def _output_fields(output: dict[str, Any]) -> dict[str, Any]:
    fields = {k: v for k, v in output.items() if k != "output_type"}
    fields.pop("execution_count", None)
    return {"output_type": output["output_type"], **fields}


def append_turn(
    path: Path, header: TurnHeader, *, cells: Sequence[dict[str, Any]], answer: str, status: str
) -> Path:
    """Append one turn to the thread's notebook; written atomically and validated."""
    nb = load(path, thread_id=header.thread_id, source=header.source, model=header.model)
    prompt_cell = new_markdown_cell(f"## Turn {header.turn_number}\n\n**Prompt:** {header.prompt}")
    prompt_cell.metadata[META] = {"role": "prompt", "turn_id": header.turn_id}
    nb.cells.append(prompt_cell)
    nb.cells.extend(cells)
    answer_cell = new_markdown_cell(f"**Answer** ({status}):\n\n{answer or '(no answer)'}")
    answer_cell.metadata[META] = {"role": "answer", "turn_id": header.turn_id, "status": status}
    nb.cells.append(answer_cell)
    return write_atomically(nb, path)


def parameter_values(nb: NotebookNode | ipynb.Node, tags: Sequence[str] = ("parameters",)) -> dict[str, Any]:
    """The constants the notebook's parameters cells assign, by name (later cells win).

    >>> nb = new_notebook()
    >>> nb.cells.append(new_code_cell("source = 'a.duckdb'\\nn = 3"))
    >>> nb.cells[0].metadata["tags"] = ["parameters"]
    >>> parameter_values(nb)
    {'source': 'a.duckdb', 'n': 3}
    """
    import ast

    values: dict[str, Any] = {}
    for cell in nb.cells:
        if cell.cell_type != "code" or not set(tags) & set(cell.get("metadata", {}).get("tags", [])):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Constant)):
                values[node.targets[0].id] = node.value.value
    return values


def read_notebook(path: Path, what: str = "notebook") -> NotebookNode:
    """A notebook from ``path``, or a clear error saying why it cannot be read."""
    from ..errors import ConfigError

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"no {what} at {path}", reason="notebook_not_found",
                          hint="check the path; notebooks are .ipynb files")
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except Exception as exc:  # nbformat raises JSON, validation and version errors alike
        raise ConfigError(f"{path} is not a readable notebook: {exc}", reason="notebook_unreadable",
                          hint="open it in Jupyter to repair it, or pass another .ipynb file") from exc


def write_atomically(nb: dict[str, Any], path: Path) -> Path:
    """Validate ``nb`` and write it to ``path`` by rename, so no reader sees half a file."""
    from ..disk import unavailable
    from ..errors import StorageError

    ipynb.validate(nb)
    text = ipynb.dumps(nb) + "\n"
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".nb-", suffix=".ipynb")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        # Nothing half-written: the old notebook (if any) stays as it was.
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        raise unavailable(exc, path, workspace=False) or StorageError(f"cannot write {path}: {exc}") from exc
    return path


def write_turn(
    path: Path, header: TurnHeader, *, trace: TurnTrace, summary: TurnSummary, artifacts: ArtifactStore
) -> Path:
    """Append a finished turn: its prompt, one cell per step with outputs, its answer."""
    cells = [
        step_cell(
            tool=step.tool,
            arguments=step.arguments,
            call_id=step.call_id,
            step_key=step.outcome.step_key,
            state=step.state,
            reused=step.outcome.reused,
            status=step.outcome.status,
            artifact_ids=step.outcome.artifact_ids,
            duration_s=step.outcome.duration_s,
            outputs=_cell_outputs(step, artifacts),
        )
        for step in trace.steps
    ]
    return append_turn(path, header, cells=cells, answer=summary.answer, status=summary.status)


def _cell_outputs(step: StepTrace, artifacts: ArtifactStore) -> list[dict[str, Any]]:
    """The step's text outputs, then its figures from the inventory (so reused steps show them too)."""
    outputs = list(step.outcome.notebook_outputs)
    for artifact, _ in step.outcome.artifacts:
        if artifact.type == "image" and artifact.mime == "image/png":
            data = base64.b64encode(artifacts.read_bytes(artifact.artifact_id)).decode()
            outputs.append(
                {
                    "output_type": "display_data",
                    "data": {"image/png": data, "text/plain": f"<{artifact.name}>"},
                    "metadata": {META: {"artifact_id": artifact.artifact_id}},
                }
            )
    return outputs
