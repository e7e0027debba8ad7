"""The user's notebook as the model sees it: an outline, and the few cells it asks for.

The notebook a thread is attached to is the document the analysis lives in. Its content
is not sent with every call (a notebook of 500 cells would fill the prompt); its outline
is: headings, each cell's id and position, a one-line summary of each code cell, the names
it defines, whether it has outputs or an error. The model reads the cells it needs by id
(the ``read_cells`` tool), from the same copy of the notebook the outline was made from.

Everything here is a pure function of the notebook's JSON, which is untrusted: any shape
it takes gives an outline (odd cells are shown as such), never an exception.
"""

from __future__ import annotations

import ast
import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, PrivateAttr

#: The largest notebook file read for an outline; a larger one is named, not read.
MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
#: A cell's one-line summary, at most.
SUMMARY_CHARS = 100
#: Cells one ``read_cells`` call returns, and the characters of their sources and outputs.
MAX_READ_CELLS = 20
MAX_READ_CHARS = 20_000
_OUTPUT_CHARS = 1_000


class CellOutline(BaseModel):
    """One cell, without its content."""

    id: str
    """The cell's id (nbformat 4.5), or ``cell-N`` for a notebook without ids."""
    index: int
    kind: Literal["code", "markdown", "raw", "other"]
    heading: str | None = None
    """A markdown cell's first heading."""
    summary: str = ""
    """A code cell's first meaningful line, cut short."""
    defines: list[str] = []
    """Names a code cell binds at its top level (DataFrames among them)."""
    outputs: int = 0
    error: bool = False


class Outline(BaseModel):
    """A notebook's structure."""

    path: str
    cells: list[CellOutline]


class AttachedNotebook(BaseModel):
    """The notebook a turn works beside, as read when the turn started."""

    path: str
    """Where it is, as the user names it (relative to the Jupyter root, or a file path)."""
    content: dict[str, Any] = {}
    problem: str | None = None
    """Why its content could not be read (then the outline says so, and nothing else)."""
    _read_again: Callable[[], Awaitable[AttachedNotebook]] | None = PrivateAttr(default=None)

    def read_again_with(self, reader: Callable[[], Awaitable[AttachedNotebook]]) -> AttachedNotebook:
        """Say how to read the notebook again as it is now (the user may edit it while a turn runs)."""
        self._read_again = reader
        return self

    async def now(self) -> AttachedNotebook | None:
        """The notebook as it is now, read again; ``None`` where it cannot be."""
        return await self._read_again() if self._read_again is not None else None


def _text(source: Any) -> str:
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def _cells(nb: dict[str, Any]) -> list[dict[str, Any]]:
    cells = nb.get("cells") if isinstance(nb, dict) else None
    return [c if isinstance(c, dict) else {} for c in cells] if isinstance(cells, list) else []


def _cell_id(cell: dict[str, Any], index: int) -> str:
    value = cell.get("id")
    return value if isinstance(value, str) and value and len(value) <= 64 else f"cell-{index}"


def defined_names(code: str) -> list[str]:
    """The names ``code`` binds at its top level; magics and shell lines are skipped, and
    code that does not parse defines nothing.

    >>> defined_names("%matplotlib inline\\nimport pandas as pd\\ndf = pd.read_csv('x')\\na, b = 1, 2\\ndef f(): pass")
    ['pd', 'df', 'a', 'b', 'f']
    """
    lines = [line for line in code.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    names: list[str] = []

    def bind(target: ast.AST) -> None:
        if isinstance(target, ast.Name):
            names.append(target.id)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                bind(element)
        elif isinstance(target, ast.Starred):
            bind(target.value)

    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign):
            bind(node.target)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.append(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.extend((alias.asname or alias.name).split(".")[0] for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.For | ast.AsyncFor):
            bind(node.target)
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    bind(item.optional_vars)
    return list(dict.fromkeys(names))


def _summary(code: str) -> str:
    for line in code.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 3] + "..."
    return ""


def _heading(markdown: str) -> str | None:
    for line in markdown.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            return stripped[:SUMMARY_CHARS]
    return None


def outline(nb: dict[str, Any], path: str) -> Outline:
    """The outline of a notebook's JSON.

    >>> nb = {"cells": [{"id": "a1", "cell_type": "markdown", "source": "# Sales\\nby region"},
    ...                 {"id": "b2", "cell_type": "code", "source": ["df = load()\\n"], "outputs": [{}]}]}
    >>> [(c.id, c.heading or c.summary, c.defines, c.outputs) for c in outline(nb, "a.ipynb").cells]
    [('a1', '# Sales', [], 0), ('b2', 'df = load()', ['df'], 1)]
    """
    out = []
    for index, cell in enumerate(_cells(nb)):
        kind = cell.get("cell_type")
        kind = kind if kind in ("code", "markdown", "raw") else "other"
        source = _text(cell.get("source"))
        item = CellOutline(id=_cell_id(cell, index), index=index, kind=kind)
        if kind == "markdown":
            item.heading = _heading(source)
            item.summary = "" if item.heading else _summary(source)
        elif kind == "code":
            item.summary = _summary(source)
            item.defines = defined_names(source)[:20]
            outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
            item.outputs = len(outputs)
            item.error = any(isinstance(o, dict) and o.get("output_type") == "error" for o in outputs)
        out.append(item)
    return Outline(path=path, cells=out)


def _line(cell: CellOutline) -> str:
    text = cell.heading or cell.summary or "(empty)"
    extra = []
    if cell.defines:
        extra.append("defines " + ", ".join(cell.defines))
    if cell.error:
        extra.append("error")
    elif cell.outputs:
        extra.append(f"{cell.outputs} output{'s' if cell.outputs > 1 else ''}")
    return f"[{cell.index}] {cell.kind} {cell.id}: {text}" + (f" ({'; '.join(extra)})" if extra else "")


def render(shape: Outline, max_chars: int) -> str:
    """The outline as prompt text, within ``max_chars``: every line when it fits; else the
    headings and the last cells, the rest elided with a count of what is not shown.

    >>> cells = [CellOutline(id=f"c{i}", index=i, kind="code", summary=f"x{i} = {i}") for i in range(100)]
    >>> text = render(Outline(path="n.ipynb", cells=cells), 400)
    >>> len(text) <= 400, "cells not shown" in text, "[99]" in text
    (True, True, True)
    """
    head = f"Notebook {shape.path}: {len(shape.cells)} cells (read one with read_cells by its id)\n"
    lines = [_line(c) for c in shape.cells]
    if len(head) + sum(len(line) + 1 for line in lines) <= max_chars:
        return head + "".join(line + "\n" for line in lines)
    # Headings first (the notebook's map), then the most recent cells, as many as fit.
    keep: set[int] = set()
    used = len(head) + 60  # the elision line
    for cell, line in zip(shape.cells, lines, strict=True):
        if cell.heading and used + len(line) + 1 <= max_chars // 2:
            keep.add(cell.index)
            used += len(line) + 1
    for cell, line in zip(reversed(shape.cells), reversed(lines), strict=True):
        if cell.index in keep:
            continue
        if used + len(line) + 1 > max_chars:
            break
        keep.add(cell.index)
        used += len(line) + 1
    out, skipped = [head], 0
    for cell, line in zip(shape.cells, lines, strict=True):
        if cell.index in keep:
            if skipped:
                out.append(f"... {skipped} cells not shown ...\n")
                skipped = 0
            out.append(line + "\n")
        else:
            skipped += 1
    if skipped:
        out.append(f"... {skipped} cells not shown ...\n")
    text = "".join(out)
    return text if len(text) <= max_chars else text[: max_chars - 4] + "...\n"


def _outputs_text(cell: dict[str, Any]) -> str:
    parts = []
    for output in cell.get("outputs") if isinstance(cell.get("outputs"), list) else []:
        if not isinstance(output, dict):
            continue
        if output.get("output_type") == "stream":
            parts.append(_text(output.get("text")))
        elif output.get("output_type") == "error":
            parts.append(f"{output.get('ename')}: {output.get('evalue')}")
        else:
            data = output.get("data") if isinstance(output.get("data"), dict) else {}
            if "text/plain" in data:
                parts.append(_text(data["text/plain"]))
            elif data:
                parts.append(f"<{', '.join(sorted(data))}>")
    text = "\n".join(p for p in parts if p)
    return text if len(text) <= _OUTPUT_CHARS else text[:_OUTPUT_CHARS] + f"... ({len(text)} characters)"


def read_cells(nb: dict[str, Any], ids: list[str]) -> dict[str, Any]:
    """The cells named by ``ids``, in the order asked: source and a short text of their
    outputs; unknown ids are listed, not guessed. At most :data:`MAX_READ_CELLS` cells and
    :data:`MAX_READ_CHARS` characters; what is cut is said.

    >>> nb = {"cells": [{"id": "a", "cell_type": "code", "source": "x = 1", "outputs": []}]}
    >>> read_cells(nb, ["a", "zz"])
    {'cells': [{'id': 'a', 'index': 0, 'type': 'code', 'source': 'x = 1', 'outputs': ''}], 'unknown': ['zz']}
    """
    by_id = {_cell_id(c, i): (i, c) for i, c in enumerate(_cells(nb))}
    found, unknown, used = [], [], 0
    for cell_id in list(dict.fromkeys(ids))[:MAX_READ_CELLS]:
        if cell_id not in by_id:
            unknown.append(cell_id)
            continue
        index, cell = by_id[cell_id]
        source = _text(cell.get("source"))
        room = max(MAX_READ_CHARS - used, 0)
        if len(source) > room:
            source = source[:room] + f"\n... (cut: the cell has {len(_text(cell.get('source')))} characters)"
        item = {"id": cell_id, "index": index, "type": cell.get("cell_type"), "source": source,
                "outputs": _outputs_text(cell) if cell.get("cell_type") == "code" else ""}
        used += len(source) + len(item["outputs"])
        found.append(item)
    out: dict[str, Any] = {"cells": found, "unknown": unknown}
    if len(dict.fromkeys(ids)) > MAX_READ_CELLS:
        out["note"] = f"only the first {MAX_READ_CELLS} ids are read per call"
    return out


def load_attached(path: Path, shown: str | None = None) -> AttachedNotebook:
    """A notebook file read for a turn: its JSON, or why it could not be read (a turn is
    never failed by the notebook it is attached to)."""
    name = shown or str(path)
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            return AttachedNotebook(path=name, problem=f"it is {size:,} bytes; at most {MAX_NOTEBOOK_BYTES:,} are read")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return AttachedNotebook(path=name, problem=f"it could not be read ({type(exc).__name__})")
    return attached_text(name, text).read_again_with(lambda: asyncio.to_thread(load_attached, path, shown))


def attached_text(name: str, text: str) -> AttachedNotebook:
    """A notebook from its file's text, or why it is not one. Only its JSON is read: no
    nbformat validation (the outline takes any shape), which costs more than the rest."""
    try:
        content = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return AttachedNotebook(path=name, problem=f"it could not be read ({type(exc).__name__})")
    if not isinstance(content, dict) or not isinstance(content.get("cells"), list):
        return AttachedNotebook(path=name, problem="it is not a notebook (no list of cells)")
    return AttachedNotebook(path=name, content=content)


def context_section(attached: AttachedNotebook, max_chars: int) -> str:
    """The prompt's notebook section."""
    if attached.problem:
        return f"\nThe user's notebook {attached.path} is attached, but {attached.problem}.\n"
    return "\n" + render(outline(attached.content, attached.path), max_chars)

