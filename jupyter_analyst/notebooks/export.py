"""A whole thread as one notebook a reviewer can read, re-run with stock tools and verify.

This is *the* thread's notebook: ``run`` and the server write it at the end of every turn
(:func:`write_thread_notebook`), and ``jupyter analyst export`` writes the same form
anywhere. It opens with a summary (thread, model, source, data version, every artifact with
a short fingerprint, how to verify), then a ``parameters`` cell (papermill's tag: the data
source and any playbook parameters), a set-up cell using the public runtime helper, then
for each turn its prompt, one code cell per SQL or Python step with the outputs the agent
saw, and its answer. Turns that were interrupted or failed are there too, marked.

Each step cell follows a one-line **provenance** markdown cell (executed or reused, what
it made with short fingerprints, how long it took). A markdown cell rather than an output
of the step cell, because re-execution (papermill, ``verify``) clears and rewrites a code
cell's outputs: the note would vanish from the executed copy, or be mistaken for what the
re-run produced. A markdown cell survives re-execution untouched, so the executed copy
shows the recorded provenance beside the fresh outputs, and renders the same in
JupyterLab, nbconvert and GitHub.

Provenance is also machine-readable under ``metadata.jupyter_analyst``: at the notebook
level the thread, model, times, source and a **manifest** of every artifact with its
fingerprint; at the cell level the call id, step key, state, artifact ids, duration and
whether the step was reused.

The model wrote the step cells' code and every word of its answers, plans and file names:
the notebook says so first (and on each step cell, see trail.py), and tells how to re-run
it in the sandbox. Its markdown cells hold the model's text only in forms that render as
text (untrusted.py), and the outputs the agent saw keep only inert kinds of data.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from .._version import __version__
from ..events import (
    PlanMade,
    PlanStepChanged,
    StateChanged,
    ToolCallStarted,
    ToolResult,
    TurnEnded,
    TurnStarted,
)
from ..artifacts import Artifact, ArtifactStore, table_bundle
from .._text import masked
from ..ledger import Ledger, describe
from ..step_kinds import CODE_STEP, STEP_TOOLS, is_query_step, step_kind
from ..store import ThreadStore, Turn
from ..untrusted import clean_html, code_span, fenced, markdown_block, markdown_inline
from . import ipynb
from ..kernel import notebook_metadata
from .answer_notes import StepCell, answer_notes
from .ipynb import Node, new_code_cell, new_markdown_cell, new_notebook, node
from .trail import META, MODEL_WRITTEN_TAG, step_cell, step_source, write_atomically
from .verify_causes import package_versions

#: Bumped when the exported layout or metadata changes (2: summary, provenance cells,
#: execution counts, interrupted and failed turns).
EXPORT_FORMAT = 2
#: The events the notebook is made of (the store holds many more: text deltas above all), by their type.
_EVENT_TYPES = tuple(model.model_fields["type"].default for model in (
    TurnStarted, StateChanged, ToolCallStarted, ToolResult, TurnEnded, PlanMade, PlanStepChanged))
#: How a plan's markdown cell shows where each step ended.
_PLAN_MARKS = {"ok": "✅ ok", "error": "❌ failed", "refused": "⛔ refused", "skipped": "⏭️ not run",
               "running": "⏳ cut off", "pending": "⏳ not started"}


class ManifestEntry(BaseModel):
    """One artifact of the thread, as verify checks it."""

    artifact_id: str
    name: str
    type: str
    mime: str
    fingerprint: str
    call_id: str | None
    step_key: str | None


def short_fingerprint(fingerprint: str) -> str:
    """The first 12 hex digits, as ``verify`` prints them.

    >>> short_fingerprint("sha256:0123456789abcdef0123")
    '0123456789ab'
    """
    return fingerprint.split(":", 1)[-1][:12]


def parameters_source(source: str, parameters: Mapping[str, Any]) -> str:
    """The ``parameters`` cell: plain assignments papermill can override.

    >>> print(parameters_source("sales.duckdb", {"region": "EMEA"}))
    # Parameters (papermill: -p source OTHER.duckdb)
    source = 'sales.duckdb'
    region = 'EMEA'
    """
    lines = ["# Parameters (papermill: -p source OTHER.duckdb)", f"source = {source!r}"]
    if "***" in source:
        lines.insert(1, "# Its secret is not written here: run it with -p source and the whole URL.")
    lines += [f"{name} = {value!r}" for name, value in parameters.items() if name != "source"]
    return "\n".join(lines)


def sandbox_warning(name: str) -> str:
    """The notebook's first words: its code cells are the model's, and how to re-run them
    where that code cannot reach the reader's machine.

    >>> "jupyter analyst verify nb.ipynb" in sandbox_warning("nb.ipynb")
    True
    """
    return (
        "> ⚠️ **The step cells of this notebook were written by a language model** (tagged "
        f"`{MODEL_WRITTEN_TAG}`). Re-run them in the sandbox: `jupyter analyst verify {name}` "
        "(add `--db SOURCE` for other data), or papermill with `--engine analyst`. In your own "
        "kernel (Run All, or papermill without `--engine analyst`) they run with your rights, "
        "and code can tell where it runs: that it did nothing harmful in the sandbox proves "
        "nothing about a run outside it."
    )


SETUP_SOURCE = (
    "# Set-up: the runtime helper re-runs SQL read-only against `source`, and configures\n"
    "# pandas and matplotlib as the agent's kernel was.\n"
    "from jupyter_analyst import runtime as analyst\n"
    "analyst.connect(source)"
)


def _sql_outputs(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A dataset's first rows as HTML and as a Data Resource (table schema + rows); what the
    row cap dropped is said, and where the query differs from a team's definition, as the
    step told the model."""
    columns = result.get("columns", [])
    sample = result.get("sample", [])
    cap = result.get("row_cap") or {}
    if cap.get("dropped") is not None:
        note = f"{cap['dropped']:,} rows past the row cap of {cap['cap']:,} were dropped"
    elif result.get("truncated"):
        note = "more rows past the row cap were dropped"
    else:
        note = f"first {len(sample)} shown"
    bundle = table_bundle(result.get("dataset", "result"), result.get("rows", 0), columns, sample, note)
    resource = {
        "schema": {"fields": [{"name": c["name"], "type": _table_type(c.get("type", ""))} for c in columns]},
        "data": sample,
    }
    outputs = [{
        "output_type": "display_data",
        "data": {"text/html": bundle["text/html"], "application/vnd.dataresource+json": resource,
                 "text/plain": bundle["text/plain"]},
        "metadata": {},
    }]
    notes = [str(n) for n in result.get("definition_notes") or []]
    if notes:  # where the query computes a team's metric otherwise than defined, as the model was told
        outputs.append({"output_type": "display_data", "metadata": {},
                        "data": {"text/plain": "\n".join(f"Definition note: {n}" for n in notes)}})
    return outputs


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


#: The output data kept from a step's recorded outputs: those no renderer runs as code
#: (HTML is cleaned, markdown kept only when inert). JavaScript, SVG, widget state and
#: mime types whose renderers are unknown are left out; ``text/plain`` stays beside them.
_INERT_DATA = ("text/plain", "image/png", "image/jpeg", "image/gif", "application/json",
               "application/vnd.dataresource+json", "text/latex")


def inert_output(output: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded output of the model's code, with only data no renderer would run.

    >>> inert_output({"output_type": "execute_result", "metadata": {}, "data": {
    ...     "text/html": "<b onclick='x()'>5</b>", "application/javascript": "alert(1)", "text/plain": "5"}})["data"]
    {'text/plain': '5', 'text/html': '<b>5</b>'}
    """
    if output.get("output_type") not in ("display_data", "execute_result"):
        return dict(output)
    data = output.get("data") or {}
    kept = {mime: value for mime, value in data.items() if mime in _INERT_DATA}
    if isinstance(data.get("text/html"), str | list):
        kept["text/html"] = clean_html("".join(data["text/html"]))
    if isinstance(data.get("text/markdown"), str | list):
        kept["text/markdown"] = markdown_block("".join(data["text/markdown"]))
    if not kept:
        kept["text/plain"] = f"(an output of type {', '.join(sorted(data)) or 'none'}, not kept)"
    return {**output, "data": kept}


class _Images:
    """PNG artifacts as base64, each blob read and encoded once per export (a long thread
    shows the same reused chart in many turns)."""

    def __init__(self, artifacts: ArtifactStore, inventory: Mapping[str, Artifact]) -> None:
        self.artifacts = artifacts
        self.inventory = inventory
        self._encoded: dict[str, str] = {}

    def outputs(self, artifact_ids: Sequence[str]) -> list[dict[str, Any]]:
        outputs = []
        for artifact_id in artifact_ids:
            artifact = self.inventory.get(artifact_id) or self.artifacts.get(artifact_id)
            if artifact.type == "image" and artifact.mime == "image/png":
                if artifact_id not in self._encoded:
                    self._encoded[artifact_id] = base64.b64encode(self.artifacts.read_bytes(artifact_id)).decode()
                outputs.append({
                    "output_type": "display_data",
                    "data": {"image/png": self._encoded[artifact_id], "text/plain": f"<{artifact.name}>"},
                    "metadata": {META: {"artifact_id": artifact_id}},
                })
        return outputs


#: How a turn that did not complete is marked on its prompt and answer cells.
_TURN_MARKS = {
    "interrupted": "⚠️ **Interrupted**: this turn was stopped before it finished",
    "error": "❌ **Failed**: this turn ended with an error",
    "step_limited": "⚠️ **Out of steps**: this turn used its whole step budget before it finished",
    "no_answer": "⚠️ **No answer**: the model's last reply in this turn said nothing",
    "budget_exhausted": "⚠️ **Budget spent**: a spending budget was reached before this turn's next model call",
    "running": "⏳ **Running**: this turn had not finished when the notebook was written",
}


def _turn_mark(status: str, message: str | None) -> str:
    mark = _TURN_MARKS.get(status)
    if mark is None:
        return ""
    why = f" ({markdown_inline(_one_line(message))})" if message else ""
    return f"> {mark}{why}; only the steps that finished are below, and they re-run as recorded.\n\n"


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _cell_text(value: Any) -> str:
    """``value`` as literal text fit for a markdown table cell (no markup, pipes or line breaks)."""
    return markdown_inline(_one_line(str(value)))


class _Build:
    """One export in the making: cells in order, execution counts, what each step made."""

    def __init__(self, artifacts: ArtifactStore, inventory: Mapping[str, Artifact], ledger: Mapping[str, Any]) -> None:
        self.artifacts = artifacts
        self.inventory = inventory
        self.ledger = ledger
        self.images = _Images(artifacts, inventory)
        self.cells: list[Node] = []
        self.count = 0
        self.turn_of_call: dict[str, int] = {}
        self.step_cells: dict[str, StepCell] = {}
        """Call id -> the step's code cell, which an answer's receipts link to."""
        self.first_run: dict[str, tuple[int, float]] = {}
        """Step key -> (turn number, duration) of the step's first execution in the thread."""

    def code(self, cell: Node) -> Node:
        """``cell`` numbered as the next code cell (outputs included), then appended."""
        self.count += 1
        cell["execution_count"] = self.count
        for output in cell.get("outputs", []):
            if output.get("output_type") == "execute_result":
                output["execution_count"] = self.count
        self.cells.append(cell)
        return cell

    def turn(self, turn: Turn, events: Sequence[Any], models: list[str]) -> None:
        ended = next((e for e in events if isinstance(e, TurnEnded)), None)
        mark = _turn_mark(turn.status, ended.message if ended else None)
        title = f"## Turn {turn.number}" + (f" ({turn.status})" if mark else "")
        prompt = new_markdown_cell(f"{title}\n\n{mark}**Prompt:** {markdown_block(turn.prompt)}")
        prompt.metadata[META] = {"role": "prompt", "turn_id": turn.turn_id, "status": turn.status}
        self.cells.append(prompt)
        calls: dict[str, ToolCallStarted] = {}
        plans: dict[str, tuple[Node, PlanMade, dict[str, PlanStepChanged]]] = {}
        state = "planning"
        for event in events:
            match event:
                case TurnStarted():
                    models.append(event.model)
                case PlanMade():
                    plans[event.call_id] = (new_markdown_cell(), event, {})
                    # The plan's cell, named by its event's type.
                    plans[event.call_id][0].metadata[META] = {"role": event.type, "call_id": event.call_id}
                    self.cells.append(plans[event.call_id][0])
                case PlanStepChanged() if event.call_id in plans:
                    plans[event.call_id][2][event.step_id] = event
                case StateChanged():
                    state = event.to_state
                case ToolCallStarted() if event.tool in STEP_TOOLS:
                    calls[event.call_id] = event
                case ToolResult() if event.call_id in calls:
                    self.step(calls.pop(event.call_id), event, state, turn.number)
        for call in calls.values():  # started, never answered: the turn was cut off under it
            self.cells.append(_shown_not_run(call, "was cut off before it finished", None, state))
        for cell, plan, steps in plans.values():
            cell["source"] = plan_markdown(plan, steps)
        said = markdown_block(turn.answer) if turn.answer else "(no answer)"
        notes = answer_notes(turn.citations, turn.unsupported, self.step_cells, turn.definitions) if turn.answer else ""
        answer = new_markdown_cell(f"**Answer** ({turn.status}):\n\n{mark}{said}" + (f"\n\n---\n\n{notes}" if notes else ""))
        answer.metadata[META] = {"role": "answer", "turn_id": turn.turn_id, "status": turn.status}
        if turn.answer:
            # Machine-readable, for ``verify --reanswer``: spans index the answer as written.
            answer.metadata[META]["receipts"] = {
                "answer": turn.answer, "citations": [c.model_dump(mode="json") for c in turn.citations],
                "unsupported": [u.model_dump(mode="json") for u in turn.unsupported]}
        self.cells.append(answer)

    def step(self, call: ToolCallStarted, result: ToolResult, state: str, turn_number: int) -> None:
        """A step as a provenance note and a code cell; a failed step as markdown, so
        re-execution does not stop on it."""
        if result.status != "ok":
            message = result.result.get("error", {}).get("message", "")
            self.cells.append(_shown_not_run(call, f"did not succeed ({result.status})", message, state))
            return
        record = self.ledger.get(call.step_key or "")
        if is_query_step(call.tool):
            outputs = _sql_outputs(result.result)
        else:
            outputs = [inert_output(o) for o in record.result.get("_notebook", [])] if record is not None else []
            outputs += self.images.outputs(result.artifact_ids)
        if call.step_key and not result.reused:
            self.first_run.setdefault(call.step_key, (turn_number, result.duration_s))
        self.turn_of_call[call.call_id] = turn_number
        self.cells.append(self.provenance(call, result, record))
        cell = self.code(step_cell(
            tool=call.tool, arguments=call.arguments, call_id=call.call_id, step_key=call.step_key, state=state,
            reused=result.reused, status=result.status, artifact_ids=result.artifact_ids,
            duration_s=result.duration_s, outputs=outputs,
        ))
        self.step_cells[call.call_id] = StepCell(cell["id"], cell["execution_count"])
        # What verify explains a difference by: the step's code as it ran (the cell may be
        # edited since) and the tables it read, as they were (verify_causes.py).
        cell.metadata[META]["code"] = step_source(call.tool, call.arguments)
        inputs = record.result.get("_inputs") if record is not None else None
        if isinstance(inputs, list):
            cell.metadata[META]["inputs"] = inputs

    def provenance(self, call: ToolCallStarted, result: ToolResult, record: Any) -> Node:
        """The step's one-line provenance note, for people (the cell's metadata has it for tools)."""
        made = []
        for artifact_id in result.artifact_ids:
            artifact = self.inventory.get(artifact_id) or self.artifacts.get(artifact_id)
            made.append(f"{code_span(artifact.name)} `{short_fingerprint(artifact.fingerprint)}`")
        what = "→ " + ", ".join(made) if made else "→ no artifact"
        if result.reused:
            first = self.first_run.get(call.step_key or "")
            took = first[1] if first else (record.duration_s if record is not None else 0.0)
            where = f"turn {first[0]}, " if first else ""
            how = f"♻️ **reused** (not run again; it ran in {where}{took:.2f} s)"
        else:
            how = f"▶️ **executed** in {result.duration_s:.2f} s"
        cell = new_markdown_cell(f"<small>Provenance: {how} {what} · `{call.tool}` call {code_span(call.call_id)}</small>")
        cell.metadata[META] = {"role": "provenance", "for_call": call.call_id}
        return cell


def plan_markdown(plan: PlanMade, steps: Mapping[str, PlanStepChanged]) -> str:
    """A staged plan as a markdown table: its stages, steps, what each needs and how it ended.

    Its steps' own cells follow it; those of a parallel stage in the order they finished.
    """
    lines = [f"**Plan** (`plan` call {code_span(plan.call_id)})" + (f": {_cell_text(plan.goal)}" if plan.goal else ""), "",
             "| stage | step | tool | does | needs | outcome |", "|---|---|---|---|---|---|"]
    for n, stage in enumerate(plan.stages, start=1):
        for step in stage.steps:
            ended = steps.get(step.id)
            outcome = _PLAN_MARKS.get(ended.status if ended else "pending", "")
            if ended is not None and ended.reused and ended.status == "ok":
                outcome = "♻️ reused"
            needs = ", ".join(f"`{i}`" for i in step.inputs)
            lines.append(f"| {n} ({stage.mode}) | `{step.id}` | {step.tool} | {_cell_text(step.summary)} | {needs} "
                         f"| {outcome} |")
    failed = [e for e in steps.values() if e.status != "ok" and e.message]
    lines += [""] + [f"> `{e.step_id}`: {_cell_text(e.message)}" for e in failed] if failed else []
    return "\n".join(lines)


def _shown_not_run(call: ToolCallStarted, what: str, message: str | None, state: str) -> Node:
    code = call.arguments.get("sql") or call.arguments.get("code") or ""
    text = (f"*Step {code_span(call.call_id)} ({call.tool}) {what}; it is shown, not re-run:*\n\n"
            + fenced(str(code), (step_kind(call.tool) or CODE_STEP).language))
    if message:
        text += f"\n\n> {markdown_inline(str(message))}"
    cell = new_markdown_cell(text)
    status = "cut_off" if message is None and "cut off" in what else "failed"
    cell.metadata[META] = {"tool": call.tool, "call_id": call.call_id, "status": status, "state": state}
    return cell


def export_thread(
    store: ThreadStore,
    artifacts: ArtifactStore,
    thread_id: str,
    *,
    parameters: Mapping[str, Any] | None = None,
    user: str | None = None,
    data_version: str | None = None,
    file_name: str | None = None,
) -> Node:
    """The thread as one validated notebook (see the module docstring).

    ``data_version``: the source's version as the thread's last turn read it (``run``
    passes it); ``file_name``: the notebook's name, for the summary's verify command.
    """
    thread = store.get_thread(thread_id, user=user)
    # A notebook is shared, and runs in a sandboxed kernel: a password or a token stays with
    # the thread (verify takes the source from the user, never from a notebook).
    parameters = {name: masked(value) if isinstance(value, str) else value
                  for name, value in (parameters or {}).items()}
    source = masked(str(parameters.get("source") or thread.source or ""))
    nb = new_notebook()
    # The sandboxed kernel, as JupyterLab records it once started: the notebook opens on the
    # sandbox, and opening it changes nothing (it is not left unsaved).
    nb.metadata.update(node(notebook_metadata()))

    ledger = {step.step_key: step for step in artifacts.steps(thread_id)}
    inventory = {a.artifact_id: a for a in artifacts.list(thread_id)}
    build = _Build(artifacts, inventory, ledger)
    params = new_code_cell(parameters_source(source, parameters))
    params.metadata["tags"] = ["parameters"]
    params.metadata[META] = {"role": "parameters"}
    build.code(params)
    setup = new_code_cell(SETUP_SOURCE)
    setup.metadata[META] = {"role": "setup"}
    build.code(setup)

    by_turn: dict[str, list[Any]] = {}
    for event in store.events(thread_id, types=_EVENT_TYPES):
        by_turn.setdefault(event.turn_id, []).append(event)
    models: list[str] = []
    turns = store.turns(thread_id)
    for turn in turns:
        build.turn(turn, by_turn.get(turn.turn_id, []), models)

    decisions = _proposals_cell(store, thread_id)
    if decisions is not None:
        build.cells.append(decisions)
    manifest = _manifest(inventory.values(), ledger)
    meta = {
        "format": EXPORT_FORMAT,
        "version": __version__,
        "thread_id": thread_id,
        "title": thread.title,
        "source": source,
        "data_version": data_version,
        "model": models[-1] if models else None,
        "models": sorted(set(models)),
        "created_at": thread.created_at,
        "finished_at": turns[-1].ended_at if turns else None,
        "turns": len(turns),
        "ledger": Ledger.total([t.ledger for t in turns if t.ledger is not None]).model_dump(mode="json"),
        "parameters": parameters,
        "manifest": [entry.model_dump() for entry in manifest],
        # The versions the artifacts' bytes depend on, so verify can name what moved.
        "environment": package_versions(),
    }
    summary = new_markdown_cell(_summary(thread.title, meta, turns, manifest, build.turn_of_call, file_name))
    summary.metadata[META] = {"role": "summary"}
    nb.cells = [summary, *build.cells]
    nb.metadata[META] = meta
    ipynb.validate(nb)
    return nb


def _summary(
    title: str | None, meta: Mapping[str, Any], turns: Sequence[Turn], manifest: Sequence[ManifestEntry],
    turn_of_call: Mapping[str, int], file_name: str | None,
) -> str:
    """The notebook's opening cell: what it is, where its data came from, what it proves."""
    unfinished = [t for t in turns if t.status != "completed"]
    turn_note = f"{len(turns)}" + (
        " (" + ", ".join(f"turn {t.number} {t.status}" for t in unfinished) + ")" if unfinished else ""
    )
    rows = [
        ("Thread", code_span(meta["thread_id"])),
        ("Model", ", ".join(code_span(m) for m in meta["models"]) or "-"),
        ("Source", code_span(masked(meta["source"]))),
        ("Data version", _data_version_cell(meta.get("data_version"))),
        ("Turns", turn_note),
        # Our own figures and words (no pipe, no markup): shown as they are.
        ("Cost", describe(Ledger.model_validate(meta["ledger"])) if meta.get("ledger") else "not recorded"),
        ("Written", f"{meta['finished_at'] or meta['created_at']} by jupyter-analyst {meta['version']}"),
    ]
    name = file_name or "NOTEBOOK.ipynb"
    lines = [f"# {_cell_text(title or 'Analysis')}", "", sandbox_warning(name), "",
             "| Audit summary | |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    lines += ["", f"**Artifacts** ({len(manifest)})", ""]
    if manifest:
        lines += ["| Artifact | Type | Fingerprint | Made by |", "|---|---|---|---|"]
        for entry in manifest:
            turn = turn_of_call.get(entry.call_id or "")
            made_by = code_span(entry.call_id) + (f" (turn {turn})" if turn else "") if entry.call_id else "-"
            lines.append(f"| {code_span(entry.name)} | {entry.type} | `{short_fingerprint(entry.fingerprint)}` "
                         f"| {made_by} |")
    else:
        lines.append("No artifact yet.")
    lines += [
        "",
        f"**How to verify**: `jupyter analyst verify {name} --db SOURCE` re-runs every step in a sandboxed "
        "kernel against the data source you name (this notebook's own is never used: anyone can hand you a "
        "notebook) and checks each artifact's fingerprint against this notebook's manifest, hashed by the host "
        f"itself. papermill re-runs it in the same sandbox with the analyst engine: `papermill {name} OUT.ipynb "
        "--engine analyst -p source SOURCE`; without `--engine analyst` it would run the model's code in a "
        "plain kernel, as you.",
    ]
    return "\n".join(lines)


def _data_version_cell(version: str | None) -> str:
    """The summary's data version, with what a live source's lack of one means for reuse and verify."""
    from ..sql import data_version_note

    if not version:
        return "not recorded"
    note = data_version_note(version)
    return code_span(version) + (f" ({note})" if note else "")


def _proposals_cell(store: ThreadStore, thread_id: str) -> Node | None:
    """The cells the model proposed for the user's notebook and each decision on them (who,
    what, when), as one markdown cell; ``None`` when it proposed none. The model's words
    (reasons) are shown as literal text."""
    proposals = store.proposals(thread_id)
    if not proposals:
        return None
    decided: dict[tuple[str, str], list[str]] = {}
    for row in store.decisions(thread_id):
        decided.setdefault((row["proposal_id"], row["change_id"]), []).append(
            f"{row['decision']} by {_cell_text(row['user'])} at {row['created_at']}")
    lines = ["## Proposed cells", "", "| Proposal | Change | Reason | Sandbox run | Decisions |", "|---|---|---|---|---|"]
    for body in proposals:
        for change in body.get("changes") or []:
            where = (f"insert after {change.get('after') or 'the top'}" if change.get("op") == "insert"
                     else f"{change.get('op')} {change.get('cell_id')}")
            run = (change.get("run") or {}).get("status") or "-"
            said = decided.get((body.get("proposal_id", ""), change.get("change_id", ""))) or ["pending"]
            lines.append(f"| {code_span(str(body.get('proposal_id')))} | {_cell_text(where)} "
                         f"| {_cell_text(change.get('reason', ''))} | {run} | {'; '.join(said)} |")
    cell = new_markdown_cell("\n".join(lines))
    cell.metadata[META] = {"role": "proposals"}
    return cell


def _manifest(inventory: Iterable[Artifact], ledger: Mapping[str, Any]) -> list[ManifestEntry]:
    """Every artifact of the thread with the call and step that made it."""
    keys_by_call = {step.call_id: step.step_key for step in ledger.values()}
    return [
        ManifestEntry(
            artifact_id=a.artifact_id, name=a.name, type=a.type, mime=a.mime, fingerprint=a.fingerprint,
            call_id=a.source_call_id, step_key=a.logical_key or keys_by_call.get(a.source_call_id or ""),
        )
        for a in inventory
    ]


def write_export(nb: Node, path: Path) -> Path:
    """Write an exported notebook atomically."""
    return write_atomically(nb, path)


def write_thread_notebook(
    store: ThreadStore, artifacts: ArtifactStore, thread_id: str, path: Path, *, data_version: str | None = None
) -> Path:
    """The thread's audit notebook at ``path``, rewritten whole from the store (by rename:
    a reader sees the old one or the new one, never half of either)."""
    nb = export_thread(store, artifacts, thread_id, data_version=data_version, file_name=Path(path).name)
    return write_atomically(nb, path)


def recorded_data_version(path: Path) -> str | None:
    """The data version the thread's own notebook at ``path`` recorded at its last turn
    (an export made later names the data its artifacts came from, not today's)."""
    try:
        meta = ipynb.read(path).metadata.get(META) or {}
    except (OSError, ValueError):
        return None
    version = meta.get("data_version")
    return version if isinstance(version, str) else None
