"""Playbooks: a notebook of prompts, asked to the agent in order, headless.

    jupyter analyst execute playbook.ipynb -o out.ipynb -p region EMEA --db sales.duckdb

Parameters follow papermill's convention: a code cell tagged ``parameters`` assigns their
defaults (``region = 'North'``), and ``-p name value`` overrides one (converted to the
default's type: ``-p year 2024`` stays an int when the default is one). The markdown cells
tagged ``prompt`` are the questions; ``{name}`` in them (and in the data source) is
replaced by the parameter's value, and a ``{name}`` that is not a parameter is an error
before anything runs. All prompts go to one thread, so later prompts build on (and reuse)
what earlier ones made. The output notebook is the thread's audit trail, exported with the
parameters in its ``parameters`` cell (so its code can use them when it is re-run), and
with the playbook's other markdown cells kept where they stood among the prompts.

A playbook without a parameters cell still works: every ``{name}`` must then come from ``-p``.
"""

from __future__ import annotations

import string
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..agent import TurnSummary
from ..errors import ConfigError
from ..notebooks import META, export_thread, new_markdown_cell, parameter_values, read_notebook, write_export
from ..workspace import Workspace
from .config import AnalystConfig, ModelSettings
from .host import BackgroundWork
from .requests import TurnRequest
from .run import run_turn

PROMPT_TAG = "prompt"


class Playbook(BaseModel):
    """The prompts of a playbook and the source it names, before substitution."""

    path: str
    prompts: list[str]
    source: str | None = None
    defaults: dict[str, Any] | None = None
    """The parameters cell's assignments; ``None`` when the playbook has no such cell."""
    notes: list[list[str]] = []
    """The untagged markdown before each prompt (one list per prompt), then after the last."""


class PlaybookRun(BaseModel):
    """What a playbook run did."""

    thread_id: str
    output: str
    turns: list[TurnSummary]

    @property
    def ok(self) -> bool:
        return all(t.status == "completed" for t in self.turns)


def load_playbook(path: Path) -> Playbook:
    """The playbook's prompts in order; a clear error when it has none."""
    nb = read_notebook(path, "playbook")
    prompts: list[str] = []
    notes: list[list[str]] = [[]]
    for cell in nb.cells:
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.cell_type != "markdown" or not cell.source.strip():
            continue
        if PROMPT_TAG in tags:
            prompts.append(cell.source.strip())
            notes.append([])
        else:
            notes[-1].append(cell.source)
    if not prompts:
        raise ConfigError(
            f"{path} has no prompts: no markdown cell is tagged {PROMPT_TAG!r}",
            reason="no_prompts", hint="tag each question's markdown cell 'prompt' (View > Cell Toolbar > Tags)",
        )
    has_parameters = any(
        cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", []) for cell in nb.cells
    )
    defaults = parameter_values(nb) if has_parameters else None
    source = (nb.metadata.get(META) or {}).get("source")
    return Playbook(path=str(path), prompts=prompts, source=source, defaults=defaults, notes=notes)


def typed_value(value: str, default: Any) -> Any:
    """A ``-p`` value as the default's type (papermill's parameters are typed too).

    >>> typed_value("2024", 2023), typed_value("0.5", 1.0), typed_value("false", True), typed_value("7", "x")
    (2024, 0.5, False, '7')
    """
    if not isinstance(value, str) or isinstance(default, str) or default is None:
        return value
    try:
        if isinstance(default, bool):
            if value.lower() in ("true", "1", "yes"):
                return True
            if value.lower() in ("false", "0", "no"):
                return False
            raise ValueError(value)
        if isinstance(default, int):
            return int(value)
        if isinstance(default, float):
            return float(value)
    except ValueError:
        raise ConfigError(f"the value {value!r} does not read as {type(default).__name__}, the type of the "
                          f"parameter's default {default!r}", reason="bad_parameter",
                          hint="pass a value of the default's type") from None
    return value


def placeholders(text: str) -> set[str]:
    """The ``{name}`` placeholders of a text.

    >>> sorted(placeholders("Revenue in {region} for {year}; {{literal}}"))
    ['region', 'year']
    """
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def substitute(text: str, parameters: Mapping[str, Any]) -> str:
    """``text`` with its placeholders filled; an unknown one is an error naming it.

    >>> substitute("Revenue in {region}", {"region": "EMEA"})
    'Revenue in EMEA'
    """
    missing = placeholders(text) - set(parameters)
    if missing:
        raise ConfigError(
            f"the playbook needs the parameter(s) {', '.join(sorted(missing))}", reason="missing_parameter",
            hint=" ".join(f"-p {name} VALUE" for name in sorted(missing)),
        )
    return text.format_map(dict(parameters))


class PlaybookPlan(BaseModel):
    """A playbook ready to run: its prompts and source with the parameters filled in."""

    path: str
    prompts: list[str]
    source: str
    parameters: dict[str, Any]
    notes: list[list[str]] = []
    """The playbook's untagged markdown, as :attr:`Playbook.notes`."""


def plan_playbook(path: Path, *, parameters: Mapping[str, Any], source: str | None) -> PlaybookPlan:
    """Check everything a run needs before the first prompt is asked.

    Bad input (no prompts, a missing or unused parameter, a source that does not exist)
    fails here, before a model is contacted or a thread is started.
    """
    from ..sql import absolute_spec, open_source

    playbook = load_playbook(path)
    used = set().union(*(placeholders(p) for p in playbook.prompts), placeholders(playbook.source or ""))
    if playbook.defaults is None:
        known = used  # no parameters cell: the placeholders are the parameters, given with -p
        values: dict[str, Any] = {}
    else:
        known = set(playbook.defaults) | {"source"}
        values = dict(playbook.defaults)
        undeclared = used - known
        if undeclared:
            raise ConfigError(
                f"{', '.join('{' + n + '}' for n in sorted(undeclared))} in the playbook is not a parameter",
                reason="unknown_placeholder",
                hint=f"declare it in the parameters cell (its parameters: {', '.join(sorted(playbook.defaults)) or '(none)'})",
            )
    unknown = set(parameters) - known - {"source"}
    if unknown:
        raise ConfigError(
            f"unknown parameter(s) {', '.join(sorted(unknown))}: "
            + ("the parameters cell does not declare them" if playbook.defaults is not None
               else "no prompt or source uses them"),
            reason="unknown_parameter", hint=f"the playbook's parameters: {', '.join(sorted(known - {'source'})) or '(none)'}",
        )
    values.update({name: typed_value(value, values.get(name)) for name, value in parameters.items()})
    spec = source or values.get("source") or playbook.source
    if not spec:
        raise ConfigError("no data source given", reason="no_source", hint="pass --db PATH_OR_URL or -p source PATH")
    spec = substitute(str(spec), values)
    prompts = [substitute(p, values) for p in playbook.prompts]
    spec = absolute_spec(spec)  # the output notebook re-runs from any folder
    open_source(spec).close()  # raises SourceError naming a missing source, with a hint
    return PlaybookPlan(path=str(path), prompts=prompts, source=spec, parameters={**values, "source": spec},
                        notes=playbook.notes)


def _with_notes(nb: Any, notes: list[list[str]]) -> None:
    """The playbook's untagged markdown put back where it stood: before each turn's prompt
    (turn N follows the notes before prompt N), the rest at the end."""
    cells = []
    turn = 0
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get(META, {})
        if meta.get("role") == "prompt":
            cells += _note_cells(notes[turn] if turn < len(notes) else [])
            turn += 1
        cells.append(cell)
    cells += _note_cells([text for rest in notes[turn:] for text in rest])
    nb.cells = cells


def _note_cells(texts: list[str]) -> list[Any]:
    made = []
    for text in texts:
        cell = new_markdown_cell(text)
        cell.metadata[META] = {"role": "playbook"}
        made.append(cell)
    return made


async def run_playbook(
    plan: PlaybookPlan,
    *,
    output: Path,
    config: AnalystConfig,
    model: ModelSettings,
    on_prompt: Callable[[int, int, str], None] | None = None,
) -> PlaybookRun:
    """Ask the plan's prompts in order on one thread, then export its audit trail."""
    background = BackgroundWork()
    thread_id: str | None = None
    turns: list[TurnSummary] = []
    for number, prompt in enumerate(plan.prompts, start=1):
        if on_prompt is not None:
            on_prompt(number, len(plan.prompts), prompt)
        request = TurnRequest(prompt=prompt, source=plan.source, thread_id=thread_id)
        summary = await run_turn(request, config=config, model=model, background=background)
        thread_id = summary.thread_id
        turns.append(summary)
        if summary.status != "completed":
            break  # later prompts build on this one's results
    await background.drain()
    assert thread_id is not None  # a plan has at least one prompt
    workspace = Workspace.of(config)
    try:
        nb = export_thread(workspace.store, workspace.artifacts, thread_id, parameters=plan.parameters)
    finally:
        workspace.close()
    nb.metadata[META]["playbook"] = {"path": plan.path, "prompts": len(plan.prompts)}
    _with_notes(nb, plan.notes)
    write_export(nb, Path(output))
    return PlaybookRun(thread_id=thread_id, output=str(output), turns=turns)


class PromptProgress:
    """Which prompt is being asked: a progress bar on a terminal, plain lines otherwise."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr
        self._bar: Any = None

    def __call__(self, number: int, total: int, prompt: str) -> None:
        if not self.stream.isatty():
            print(f"[{number}/{total}] {prompt[:100]}", file=self.stream, flush=True)
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="prompt", file=self.stream)
        else:
            self._bar.update(1)  # the previous prompt is answered
        self._bar.set_description(prompt[:40])

    def close(self) -> None:
        if self._bar is not None:
            self._bar.update(self._bar.total - self._bar.n)
            self._bar.close()
