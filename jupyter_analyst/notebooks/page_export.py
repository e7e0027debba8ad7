"""``jupyter analyst export --to html|markdown``: an audit notebook as a page to read or share.

The conversion is nbconvert's (it comes with jupyter-server): the summary and each step's
provenance line are markdown cells, so they render as they do in JupyterLab; outputs are
the ones the agent saw. Its source's secret is masked, as in every export (``export.py``).

The page is opened by people who trust it more than the model that wrote most of it: the
HTML is made with nbconvert's sanitizing mode (no JavaScript outputs or widget state; the
HTML of markdown cells and outputs cleaned), its cleaner being ``untrusted.clean_html``
(nh3) instead of nbconvert's own (bleach, deprecated). The notebook itself already holds
the model's text and outputs only in inert forms (export.py).
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Literal

from ..errors import ConfigError, StorageError

Format = Literal["ipynb", "html", "markdown"]
FORMATS: tuple[Format, ...] = ("ipynb", "html", "markdown")
SUFFIXES: dict[Format, str] = {"ipynb": ".ipynb", "html": ".html", "markdown": ".md"}


def file_stem(title: str | None, thread_id: str) -> str:
    """``{title}-{thread}``, the name of a thread's exported files: readable, and one per thread.

    >>> file_stem("Revenue / region?", "thr_0123456789abcdef")
    'revenue-region-89abcdef'
    """
    slug = re.sub(r"[^a-z0-9]+", "-", (title or "thread").lower()).strip("-")[:60] or "thread"
    return f"{slug}-{thread_id[-8:]}"


def default_output(title: str | None, thread_id: str, to: Format) -> Path:
    """``{title}-{thread}.{ext}`` in the current folder.

    >>> default_output("Revenue / region?", "thr_0123456789abcdef", "html")
    PosixPath('revenue-region-89abcdef.html')
    """
    return Path(file_stem(title, thread_id) + SUFFIXES[to])


def render(nb: dict[str, Any], to: Format, path: Path) -> list[Path]:
    """Write ``nb`` as ``to`` at ``path``; the files written (a markdown page's images go in
    ``{stem}_files/`` beside it)."""
    from . import ipynb
    from .trail import write_atomically

    if to == "ipynb":
        return [write_atomically(nb, path)]
    try:
        import nbformat
        from nbconvert import HTMLExporter, MarkdownExporter
    except ImportError as exc:  # pragma: no cover - nbconvert comes with jupyter-server
        raise ConfigError(f"nbconvert is not installed: {exc}", reason="nbconvert_missing",
                          hint="pip install nbconvert, or export --to ipynb") from exc
    node = nbformat.reads(ipynb.dumps(nb), as_version=4)
    exporter = (HTMLExporter(sanitize_html=True, filters={"clean_html": _clean_page_html}) if to == "html"
                else MarkdownExporter())
    files_dir = f"{path.stem}_files"
    try:
        body, resources = exporter.from_notebook_node(node, resources={"output_files_dir": files_dir})
    except Exception as exc:  # nbconvert raises template, filter and conversion errors alike
        raise StorageError(f"nbconvert could not render the notebook as {to}: {exc}", reason="render_failed",
                           hint="export --to ipynb and convert it with `jupyter nbconvert` to see why") from exc
    written = []
    for name, data in sorted((resources.get("outputs") or {}).items()):
        written.append(_write_bytes(path.parent / name, data))
    written.insert(0, _write_bytes(path, body.encode("utf-8")))
    return written


def _clean_page_html(html: Any) -> str:
    """nbconvert's ``clean_html`` filter: the page's fragments through nh3, classes kept."""
    from ..untrusted import clean_html

    return clean_html(html.decode() if isinstance(html, bytes) else str(html), classes=True)


def _write_bytes(path: Path, data: bytes) -> Path:
    """``data`` at ``path`` by rename: no reader sees half a page."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".export-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
