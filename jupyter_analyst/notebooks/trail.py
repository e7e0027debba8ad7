"""Cells of a thread's audit notebook, and notebook files read and written safely.

The notebook itself is made whole from the store by ``export.py`` after every turn; here
are its parts that others use too (the code of a SQL or Python step's cell, the lines that
open a source, a step's code cell with its provenance under ``metadata.jupyter_analyst``),
the parameters a notebook declares, and the atomic, validated write.

The turn's path (build, check, write) goes through ``ipynb.py``, not ``nbformat``, whose
import alone costs more than a turn whose steps are all reused.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..step_kinds import CODE_STEP, step_kind
from . import ipynb
from .ipynb import new_code_cell, new_output

#: The output a re-executed SQL step publishes (``jupyter_analyst.runtime.sql``): the dataset's name, fingerprint and rows.
ARTIFACT_MIME = "application/vnd.jupyter-analyst.artifact+json"

#: The environment variable naming the folder (relative to the kernel's) where each result is
#: kept as ``000001.parquet``, ``000002.parquet``, ... in the order of the calls.
RESULTS_ENV = "JUPYTER_ANALYST_RESULTS"

#: The environment variable naming a read-only folder of results the host ran, for a source
#: the sandboxed kernel cannot reach (a server: the kernel has no network). Each query's
#: Parquet file is named by :func:`hosted_result_name`; ``analyst.sql`` reads it from there.
HOSTED_ENV = "JUPYTER_ANALYST_HOSTED"


def hosted_result_name(query: str) -> str:
    """The file name of ``query``'s result in the :data:`HOSTED_ENV` folder (its text's hash).

    >>> hosted_result_name("SELECT 1")[:16], hosted_result_name("SELECT 1").endswith(".parquet")
    ('e004ebd5b5532a4b', True)
    """
    import hashlib

    return hashlib.sha256(query.encode()).hexdigest() + ".parquet"

if TYPE_CHECKING:
    from nbformat import NotebookNode

META = "jupyter_analyst"

#: The tag of every code cell whose code the model wrote (papermill and JupyterLab keep tags).
MODEL_WRITTEN_TAG = "model-written"
#: The first line of such a cell, so whoever reads or runs it sees whose code it is.
MODEL_WRITTEN_COMMENT = ("# Written by a language model (jupyter-analyst). Re-run it in the sandbox: "
                         "jupyter analyst verify NOTEBOOK.ipynb")


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
    """The code of the cell that stands for a ``run_sql`` or ``run_python`` step: a query
    re-run into its dataset, or the code itself.

    >>> print(step_source("run_python", {"code": "revenue.head()"}))
    revenue.head()
    """
    kind = step_kind(tool) or CODE_STEP
    if kind.is_query:
        return sql_cell_source(arguments[kind.dataset_argument], arguments[kind.payload])
    return arguments[kind.payload]


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
    """One code cell for one SQL or Python step, with its outputs and provenance, marked as
    the model's code: its first line says so, and it is tagged :data:`MODEL_WRITTEN_TAG`.

    >>> cell = step_cell(tool="run_python", arguments={"code": "x = 1"}, call_id="c1", step_key=None,
    ...                  state="analyzing", reused=False, status="ok", artifact_ids=[], duration_s=0.1, outputs=[])
    >>> cell.source.splitlines()[1], cell.metadata["tags"]
    ('x = 1', ['model-written'])
    """
    cell = new_code_cell(f"{MODEL_WRITTEN_COMMENT}\n{step_source(tool, arguments)}")
    cell.metadata["tags"] = [MODEL_WRITTEN_TAG]
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


def parameter_values(nb: NotebookNode | ipynb.Node, tags: Sequence[str] = ("parameters",)) -> dict[str, Any]:
    """The constants the notebook's parameters cells assign, by name (later cells win).

    >>> nb = ipynb.new_notebook()
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
    from .._disk import unavailable
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
