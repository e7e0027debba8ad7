"""The file names an artifact is saved under when downloaded: its own, with the extension of
its type when the name lacks it (a SQL dataset is named ``by_region``, its bytes are Parquet)."""

from __future__ import annotations

import re

#: Each type's extension, and the others a name of that type may already end with.
_EXTENSIONS = {
    "application/vnd.apache.parquet": (".parquet", ".pq"),
    "application/json": (".json",),
    "application/pdf": (".pdf",),
    "image/png": (".png",),
    "image/jpeg": (".jpg", ".jpeg"),
    "image/gif": (".gif",),
    "image/svg+xml": (".svg",),
    "text/csv": (".csv",),
    "text/tab-separated-values": (".tsv",),
    "text/plain": (".txt",),
    "text/html": (".html", ".htm"),
    "text/markdown": (".md",),
}


def download_name(name: str, mime: str) -> str:
    """``name``'s last part, ending with its type's extension (added when it has another or none).

    >>> download_name("by_region", "application/vnd.apache.parquet")
    'by_region.parquet'
    >>> download_name("outputs/sales.PQ", "application/vnd.apache.parquet"), download_name("q.2024", "application/vnd.apache.parquet")
    ('sales.PQ', 'q.2024.parquet')
    >>> download_name("outputs/chart.jpeg", "image/jpeg"), download_name("outputs/blob.bin", "application/octet-stream")
    ('chart.jpeg', 'blob.bin')
    >>> download_name("outputs/", "text/csv")
    'artifact.csv'
    """
    base = name.rsplit("/", 1)[-1] or "artifact"
    extensions = _EXTENSIONS.get(mime.split(";")[0].strip().lower())
    if extensions is None or base.lower().endswith(extensions):
        return base
    return base + extensions[0]


def csv_name(name: str) -> str:
    """The file name a dataset's CSV is saved under: its own, with ``.csv`` for ``.parquet``.

    >>> csv_name("outputs/sales.parquet"), csv_name("by_region"), csv_name("a.pq")
    ('sales.csv', 'by_region.csv', 'a.csv')
    """
    base = name.rsplit("/", 1)[-1] or "dataset"
    return re.sub(r"\.(parquet|pq)$", "", base, flags=re.IGNORECASE) + ".csv"
