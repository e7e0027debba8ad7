"""A whole thread as one notebook a reviewer can read, re-run with stock tools and verify.

The notebook has a ``parameters`` cell (papermill's tag: the data source and any playbook
parameters), a set-up cell using the public runtime helper, then for each turn its prompt,
one code cell per SQL or Python step with the outputs the agent saw, and its answer.
Provenance sits under ``metadata.jupyter_analyst``: at the notebook level the thread, model,
times, source and a **manifest** of every artifact with its fingerprint; at the cell level
the call id, step key, state, artifact ids, duration and whether the step was reused.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .. import __version__
from ..agent.events import StateChanged, ToolCallStarted, ToolResult, TurnStarted
from ..artifacts import ArtifactStore
from ..store import ThreadStore
from . import ipynb
from .ipynb import Node, new_code_cell, new_markdown_cell, new_notebook
from .trail import META, step_cell, write_atomically

#: Bumped when the exported layout or metadata changes.
EXPORT_FORMAT = 1
_STEP_TOOLS = ("run_sql", "run_python")


class ManifestEntry(BaseModel):
    """One artifact of the thread, as verify checks it."""

    artifact_id: str
    name: str
    type: str
    mime: str
    fingerprint: str
    call_id: str | None
    step_key: str | None


def parameters_source(source: str, parameters: Mapping[str, Any]) -> str:
    """The ``parameters`` cell: plain assignments papermill can override.

    >>> print(parameters_source("sales.duckdb", {"region": "EMEA"}))
    # Parameters (papermill: -p source OTHER.duckdb)
    source = 'sales.duckdb'
    region = 'EMEA'
    """
    lines = ["# Parameters (papermill: -p source OTHER.duckdb)", f"source = {source!r}"]
    lines += [f"{name} = {value!r}" for name, value in parameters.items() if name != "source"]
    return "\n".join(lines)


SETUP_SOURCE = (
    "# Set-up: the runtime helper re-runs SQL read-only against `source`, and configures\n"
    "# pandas and matplotlib as the agent's kernel was.\n"
    "from jupyter_analyst import runtime as analyst\n"
    "analyst.connect(source)"
)


def _sql_outputs(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A dataset's first rows as HTML and as a Data Resource (table schema + rows)."""
    from html import escape

    columns = result.get("columns", [])
    sample = result.get("sample", [])
    name = result.get("dataset", "result")
    head = "".join(f"<th>{escape(c['name'])}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(r.get(c['name'])))}</td>" for c in columns) + "</tr>" for r in sample
    )
    html = (f"<p><code>{escape(name)}</code>: {result.get('rows')} rows (first {len(sample)} shown)</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    resource = {
        "schema": {"fields": [{"name": c["name"], "type": _table_type(c.get("type", ""))} for c in columns]},
        "data": sample,
    }
    return [{
        "output_type": "display_data",
        "data": {
            "text/html": html,
            "application/vnd.dataresource+json": resource,
            "text/plain": f"{name}: {result.get('rows')} rows x {len(columns)} columns",
        },
        "metadata": {},
    }]


def _table_type(engine_type: str) -> str:
    """The Table Schema type of an engine type name."""
    t = engine_type.upper()
    if any(k in t for k in ("INT", "HUGEINT")):
        return "integer"
    if any(k in t for k in ("DOUBLE", "FLOAT", "DECIMAL", "REAL", "NUMERIC")):
        return "number"
    if "BOOL" in t:
        return "boolean"
    if "TIMESTAMP" in t:
        return "datetime"
    if "DATE" in t:
        return "date"
    return "string"


def _image_outputs(artifacts: ArtifactStore, artifact_ids: list[str]) -> list[dict[str, Any]]:
    outputs = []
    for artifact_id in artifact_ids:
        artifact = artifacts.get(artifact_id)
        if artifact.type == "image" and artifact.mime == "image/png":
            data = base64.b64encode(artifacts.read_bytes(artifact_id)).decode()
            outputs.append({
                "output_type": "display_data",
                "data": {"image/png": data, "text/plain": f"<{artifact.name}>"},
                "metadata": {META: {"artifact_id": artifact_id}},
            })
    return outputs


def export_thread(
    store: ThreadStore,
    artifacts: ArtifactStore,
    thread_id: str,
    *,
    parameters: Mapping[str, Any] | None = None,
    user: str | None = None,
) -> Node:
    """The thread as one validated notebook (see the module docstring)."""
    thread = store.get_thread(thread_id, user=user)
    source = str((parameters or {}).get("source") or thread.source or "")
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells.append(new_markdown_cell(
        f"# {thread.title or 'Analysis'}\n\nThread `{thread_id}` on `{source}`. Re-run it with papermill "
        "(`-p source OTHER`) or check it with `jupyter analyst verify`."
    ))
    params = new_code_cell(parameters_source(source, parameters or {}))
    params.metadata["tags"] = ["parameters"]
    params.metadata[META] = {"role": "parameters"}
    setup = new_code_cell(SETUP_SOURCE)
    setup.metadata[META] = {"role": "setup"}
    nb.cells += [params, setup]

    ledger = {step.step_key: step for step in artifacts.steps(thread_id)}
    models: list[str] = []
    turns = store.turns(thread_id)
    for turn in turns:
        prompt = new_markdown_cell(f"## Turn {turn.number}\n\n**Prompt:** {turn.prompt}")
        prompt.metadata[META] = {"role": "prompt", "turn_id": turn.turn_id}
        nb.cells.append(prompt)
        calls: dict[str, ToolCallStarted] = {}
        state = "planning"
        for event in store.events(thread_id, turn_id=turn.turn_id):
            match event:
                case TurnStarted():
                    models.append(event.model)
                case StateChanged():
                    state = event.to_state
                case ToolCallStarted() if event.tool in _STEP_TOOLS:
                    calls[event.call_id] = event
                case ToolResult() if event.call_id in calls:
                    nb.cells.append(_step(calls.pop(event.call_id), event, state, ledger, artifacts))
        answer = new_markdown_cell(f"**Answer** ({turn.status}):\n\n{turn.answer or '(no answer)'}")
        answer.metadata[META] = {"role": "answer", "turn_id": turn.turn_id, "status": turn.status}
        nb.cells.append(answer)

    manifest = _manifest(artifacts, thread_id, ledger)
    nb.metadata[META] = {
        "format": EXPORT_FORMAT,
        "version": __version__,
        "thread_id": thread_id,
        "title": thread.title,
        "source": source,
        "model": models[-1] if models else None,
        "models": sorted(set(models)),
        "created_at": thread.created_at,
        "finished_at": turns[-1].ended_at if turns else None,
        "turns": len(turns),
        "parameters": dict(parameters or {}),
        "manifest": [entry.model_dump() for entry in manifest],
    }
    ipynb.validate(nb)
    return nb


def _step(
    call: ToolCallStarted, result: ToolResult, state: str, ledger: Mapping[str, Any], artifacts: ArtifactStore
) -> Node:
    """One step as a code cell; a failed step as markdown, so re-execution does not stop on it."""
    if result.status != "ok":
        code = call.arguments.get("sql") or call.arguments.get("code") or ""
        cell = new_markdown_cell(
            f"*Step `{call.call_id}` ({call.tool}) did not succeed ({result.status}); it is shown, not re-run:*\n\n"
            f"```{'sql' if call.tool == 'run_sql' else 'python'}\n{code}\n```\n\n"
            f"> {json.dumps(result.result.get('error', {}).get('message', ''))[1:-1]}"
        )
        cell.metadata[META] = {"tool": call.tool, "call_id": call.call_id, "status": result.status, "state": state}
        return cell
    record = ledger.get(call.step_key or "")
    if call.tool == "run_sql":
        outputs = _sql_outputs(result.result)
    else:
        outputs = list(record.result.get("_notebook", [])) if record is not None else []
        outputs += _image_outputs(artifacts, result.artifact_ids)
    return step_cell(
        tool=call.tool, arguments=call.arguments, call_id=call.call_id, step_key=call.step_key, state=state,
        reused=result.reused, status=result.status, artifact_ids=result.artifact_ids,
        duration_s=result.duration_s, outputs=outputs,
    )


def _manifest(artifacts: ArtifactStore, thread_id: str, ledger: Mapping[str, Any]) -> list[ManifestEntry]:
    """Every artifact of the thread with the call and step that made it."""
    keys_by_call = {step.call_id: step.step_key for step in ledger.values()}
    return [
        ManifestEntry(
            artifact_id=a.artifact_id, name=a.name, type=a.type, mime=a.mime, fingerprint=a.fingerprint,
            call_id=a.source_call_id, step_key=a.logical_key or keys_by_call.get(a.source_call_id or ""),
        )
        for a in artifacts.list(thread_id)
    ]


def write_export(nb: Node, path: Path) -> Path:
    """Write an exported notebook atomically."""
    return write_atomically(nb, path)
