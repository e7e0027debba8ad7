"""An artifact shown as a notebook output would show it: a MIME bundle.

Clients render the bundle with JupyterLab's rendermime, so a dataset's first rows look like
a DataFrame in a notebook and a chart like a displayed figure. The bytes come from the blob
store, already checked against their fingerprint.
"""

from __future__ import annotations

import base64
from html import escape
from typing import Any, BinaryIO

from .model import Artifact

#: Rows of a dataset preview unless asked otherwise, and the most a client may ask for.
PREVIEW_ROWS = 20
MAX_PREVIEW_ROWS = 200
#: Bytes of a text file shown.
TEXT_BYTES = 64 * 1024


def table_bundle(name: str, rows: int, columns: list[dict[str, str]], sample: list[dict[str, Any]],
                 note: str = "") -> dict[str, str]:
    """A dataset's first rows as ``text/html`` (a table) and ``text/plain``.

    >>> bundle = table_bundle("t", 3, [{"name": "a<b", "type": "INTEGER"}], [{"a<b": 1}])
    >>> bundle["text/plain"], "<th>a&lt;b</th>" in bundle["text/html"]
    ('t: 3 rows x 1 columns', True)
    """
    head = "".join(f"<th>{escape(c['name'])}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(r.get(c['name'])))}</td>" for c in columns) + "</tr>"
        for r in sample
    )
    more = f" ({escape(note)})" if note else ""
    html = (f"<p><code>{escape(name)}</code>: {rows} rows{more}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
    text = f"{name}: {rows} rows x {len(columns)} columns" + (f" ({note})" if note else "")
    return {"text/html": html, "text/plain": text}


def preview(artifact: Artifact, blob: BinaryIO, *, rows: int = PREVIEW_ROWS) -> dict[str, Any]:
    """``{data: MIME bundle, metadata}`` for ``artifact`` read from ``blob``: a dataset's first
    ``rows`` rows, an image, the start of a text file; other files by name and size.

    A dataset's metadata carries its rows as JSON values too (``sample``, beside ``columns``
    and their types): the panel formats them per column, as pandas displays a frame, where
    the HTML's cells are each value's text."""
    if artifact.type == "dataset":
        return _dataset(artifact, blob, rows)
    if artifact.mime.startswith("image/"):
        return {"data": {artifact.mime: base64.b64encode(blob.read()).decode("ascii"),
                         "text/plain": f"{artifact.name} ({artifact.size} bytes)"},
                "metadata": {}}
    head = blob.read(TEXT_BYTES + 1)
    try:
        text = head[:TEXT_BYTES].decode("utf-8")
    except UnicodeDecodeError:
        return {"data": {"text/plain": f"{artifact.name}: {artifact.size} bytes ({artifact.mime})"}, "metadata": {}}
    if len(head) > TEXT_BYTES:
        text += f"\n... ({artifact.size - TEXT_BYTES} more bytes)"
    return {"data": {"text/plain": text}, "metadata": {}}


def _dataset(artifact: Artifact, blob: BinaryIO, rows: int) -> dict[str, Any]:
    import pyarrow.parquet as pq

    from .._text import json_safe

    parquet = pq.ParquetFile(blob)
    total = parquet.metadata.num_rows
    columns = [{"name": f.name, "type": str(f.type)} for f in parquet.schema_arrow]
    batch = next(parquet.iter_batches(batch_size=max(rows, 1)), None) if total and rows else None
    sample = [] if batch is None else [
        {k: json_safe(v) for k, v in row.items()} for row in batch.slice(0, rows).to_pylist()
    ]
    note = f"first {len(sample)} shown" if len(sample) < total else ""
    return {
        "data": table_bundle(artifact.name, total, columns, sample, note),
        "metadata": {"rows": total, "columns": columns, "shown": len(sample), "sample": sample},
    }
