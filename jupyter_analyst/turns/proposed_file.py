"""The proposed notebook as a file beside the notebook (``NB.proposed.ipynb``), for a turn
that ran without a Jupyter server (``run --attach --propose``, a local ``%%ask``), and the
contents manager a local decision reads and writes the notebook through.

The file is a thing to look at (every change of the turn applied); the notebook changes only
when a person accepts. Nothing is written through a link, nor outside the notebook's folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import ConfigError
from ..store import ThreadStore


def proposed_path(notebook: Path) -> Path:
    """Where the proposed notebook is written: ``NB.proposed.ipynb`` beside ``NB.ipynb``.

    >>> proposed_path(Path("/work/sales.ipynb"))
    PosixPath('/work/sales.proposed.ipynb')
    """
    return notebook.with_name(notebook.stem + ".proposed.ipynb")


def no_link(path: Path, what: str) -> None:
    """Refuse ``path`` when it is a link (``notebook_is_link``)."""
    if path.is_symlink():
        raise ConfigError(f"{what} {path} is a link, which is not followed", reason="notebook_is_link",
                          hint="name the notebook itself, not a link to it")


def write_proposed(notebook: Path, text: str) -> Path:
    """Write ``text`` to ``NB.proposed.ipynb`` in the notebook's own folder: never through a
    link (the name is opened without following one), never elsewhere.

    Raises:
        ConfigError: the notebook or the name to write is a link.
    """
    no_link(notebook, "the notebook")
    target = proposed_path(notebook)
    no_link(target, "the proposed notebook's name")
    if target.parent.resolve() != notebook.resolve().parent:
        raise ConfigError(f"{target} is not in the notebook's folder", reason="notebook_is_link")
    temp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(temp, target)  # replaces a name; a link put there meanwhile is replaced, not followed
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return target


def read_notebook_file(notebook: Path) -> dict[str, Any]:
    """The notebook file's JSON, never through a link.

    Raises:
        ConfigError: it is a link (``notebook_is_link``), or not a readable notebook
            (``notebook_not_found``).
    """
    no_link(notebook, "the notebook")
    try:
        content = json.loads(notebook.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"there is no readable notebook {notebook} ({type(exc).__name__})",
                          reason="notebook_not_found") from None
    if not isinstance(content, dict):
        raise ConfigError(f"{notebook} is not a notebook", reason="notebook_not_found")
    return content


class TurnPreview(NamedTuple):
    """What ``write_turn_preview`` wrote and read."""

    path: Path | None  #: the written ``NB.proposed.ipynb``; ``None``: the turn proposed nothing
    before: dict[str, Any]  #: the notebook as read
    proposals: list[Any]  #: the turn's proposals
    skipped: list[str]  #: why a change was left out (its cell changed since)
    status: dict[str, Any]  #: each change's status by change id


def write_turn_preview(store: ThreadStore, thread_id: str, turn_id: str, notebook: Path) -> TurnPreview:
    """The turn's proposals applied to ``notebook`` and written beside it (nothing is written
    when the turn proposed nothing). Blocking."""
    from ..notebooks import notebook_json
    from .notebook_changes import preview_turn

    before = read_notebook_file(notebook)
    after, proposals, skipped, status = preview_turn(store, thread_id, turn_id, before)
    if not proposals:
        return TurnPreview(None, before, [], [], status)
    return TurnPreview(write_proposed(notebook, notebook_json(after)), before, proposals, skipped, status)


def file_contents(folder: Path) -> Any:
    """Jupyter's file-backed contents manager over ``folder`` (its checkpoints beside the notebook,
    in .ipynb_checkpoints, as a Jupyter server keeps them)."""
    from jupyter_server.services.contents.filemanager import FileContentsManager

    return FileContentsManager(root_dir=str(folder.resolve()))


def through_contents(work: Any) -> Any:
    """``work()``, which reads or writes a notebook through a Jupyter contents manager, with the
    manager's refusal (a hidden or unwritable file: tornado's ``HTTPError``) said as ours.

    Raises:
        ConfigError: ``notebook_not_found``, with the manager's reason.
    """
    from tornado.web import HTTPError

    try:
        return work()
    except HTTPError as exc:
        raise ConfigError(f"the notebook cannot be read or written: {exc.log_message or exc}",
                          reason="notebook_not_found") from None
