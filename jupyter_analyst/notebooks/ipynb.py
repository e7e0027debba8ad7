"""Notebook files (nbformat 4) as plain JSON, read, checked and written without ``nbformat``.

Importing ``nbformat`` imports ``jsonschema``, whose format checkers compile an IRI grammar
at import: over a second, which every turn would pay to append to its thread's notebook.
A turn needs little of it: new cells, a v4 notebook read back, a check against nbformat's
own schema (with ``fastjsonschema``, which nbformat itself uses when asked) and the file
written as ``nbformat.write`` writes it. Notebooks of other versions are handed to nbformat.

:class:`Node` is a dict with attribute access, like nbformat's ``NotebookNode`` (a dict
too), so code written for one works on the other.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import StorageError

#: The notebook format written: nbformat 4.5 (cells carry ids).
NBFORMAT, NBFORMAT_MINOR = 4, 5


class Node(dict):
    """A notebook, cell or output: a dict whose keys are also attributes."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value


def node(value: Any) -> Any:
    """``value`` with every dict in it made a :class:`Node`."""
    if isinstance(value, dict):
        return Node((k, node(v)) for k, v in value.items())
    if isinstance(value, list):
        return [node(v) for v in value]
    return value


def _cell_id() -> str:
    # As nbformat makes them: eight hex digits.
    return uuid.uuid4().hex[:8]


def new_notebook() -> Node:
    """An empty nbformat 4.5 notebook."""
    return Node(nbformat=NBFORMAT, nbformat_minor=NBFORMAT_MINOR, metadata=Node(), cells=[])


def new_code_cell(source: str = "") -> Node:
    """A code cell, not executed, without outputs."""
    return Node(id=_cell_id(), cell_type="code", metadata=Node(), execution_count=None, source=source, outputs=[])


def new_markdown_cell(source: str = "") -> Node:
    """A markdown cell."""
    return Node(id=_cell_id(), cell_type="markdown", metadata=Node(), source=source)


def new_output(output_type: str, **fields: Any) -> Node:
    """An output of a code cell, with the fields nbformat requires defaulted as it does."""
    defaults: dict[str, Any] = {
        "stream": {"name": "stdout", "text": ""},
        "display_data": {"metadata": {}, "data": {}},
        "execute_result": {"metadata": {}, "data": {}, "execution_count": None},
        "error": {"ename": "NotImplementedError", "evalue": "", "traceback": []},
    }.get(output_type, {})
    return node({"output_type": output_type, **defaults, **fields})


def read(path: Path) -> Node:
    """The notebook at ``path`` as nbformat 4 (other versions are converted by nbformat).

    Raises:
        ValueError: the file is not JSON (``json.JSONDecodeError``) or not a notebook.
    """
    nb = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(nb, dict) or not isinstance(nb.get("cells", []), list):
        raise ValueError(f"{path} is not a notebook")
    if nb.get("nbformat") != NBFORMAT:
        import nbformat  # the rare old notebook: its converter is worth the import

        return node(nbformat.read(path, as_version=NBFORMAT))
    return node(nb)


@lru_cache(maxsize=8)
def _validator(minor: int) -> Any:
    """nbformat's schema for 4.``minor``, compiled once per process."""
    import fastjsonschema

    spec = importlib.util.find_spec("nbformat")  # finds the package without importing it
    assert spec is not None and spec.submodule_search_locations, "nbformat is a dependency"
    folder = Path(next(iter(spec.submodule_search_locations))) / "v4"
    schema = folder / f"nbformat.v4.{minor}.schema.json"
    if not schema.is_file():
        schema = folder / "nbformat.v4.schema.json"
    return fastjsonschema.compile(json.loads(schema.read_text(encoding="utf-8")))


def validate(nb: dict[str, Any]) -> None:
    """Check ``nb`` against nbformat's schema; missing or repeated cell ids are replaced first,
    as ``nbformat.validate`` does.

    Raises:
        StorageError: ``notebook_invalid``, naming what the schema refused.
    """
    import fastjsonschema

    minor = nb.get("nbformat_minor")
    if not isinstance(minor, int):
        raise StorageError("the notebook has no format version", reason="notebook_invalid")
    if minor >= 5:
        seen: set[str] = set()
        for cell in nb.get("cells") or ():
            if isinstance(cell, dict) and (not isinstance(cell.get("id"), str) or cell["id"] in seen):
                cell["id"] = _cell_id()
            if isinstance(cell, dict):
                seen.add(cell["id"])
    try:
        _validator(minor)(nb)
    except fastjsonschema.JsonSchemaException as exc:
        raise StorageError(f"the notebook is not valid nbformat {NBFORMAT}.{minor}: {exc.message}",
                           reason="notebook_invalid") from exc


#: Output data kinds written as lists of lines besides ``text/*``, as nbformat writes them.
_SPLIT_MIMES = {"application/javascript", "image/svg+xml"}


def _split_bundle(data: dict[str, Any]) -> None:
    for key, value in list(data.items()):
        if isinstance(value, str) and (key.startswith("text/") or key in _SPLIT_MIMES):
            data[key] = value.splitlines(True)


def dumps(nb: dict[str, Any]) -> str:
    """``nb`` as ``nbformat.writes`` writes it: sorted keys, one-space indent, text split
    into lines (line-based diffs stay readable), transient metadata left out."""
    nb = copy.deepcopy(nb)
    nb.get("metadata", {}).pop("orig_nbformat", None)
    nb.get("metadata", {}).pop("orig_nbformat_minor", None)
    nb.get("metadata", {}).pop("signature", None)
    for cell in nb.get("cells") or ():
        cell.get("metadata", {}).pop("trusted", None)
        if isinstance(cell.get("source"), str):
            cell["source"] = cell["source"].splitlines(True)
        for attachment in (cell.get("attachments") or {}).values():
            _split_bundle(attachment)
        for output in cell.get("outputs") or ():
            if output.get("output_type") in {"execute_result", "display_data"}:
                _split_bundle(output.get("data") or {})
            elif output.get("output_type") == "stream" and isinstance(output.get("text"), str):
                output["text"] = output["text"].splitlines(True)
    return json.dumps(nb, indent=1, sort_keys=True, separators=(",", ": "), ensure_ascii=False)
