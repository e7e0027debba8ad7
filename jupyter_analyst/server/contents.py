"""The user's Jupyter folder, through the server's contents manager, without following links.

The contents manager keeps paths inside the server's root and applies its rules on hidden
files, but a file-backed one reads and writes through symbolic links, wherever they point.
A notebook the model reads (an attached notebook, one to verify) or the export writes must
be the file at that path, not one a link elsewhere stands for: a path with a link on it is
refused as if it were not there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError


def linked_part(contents_manager: Any, path: str) -> str | None:
    """The first part of ``path`` (under a file-backed contents manager's root) that is a
    symbolic link, or ``None``. Other contents managers (databases, object stores) have no
    links on the server's disk to follow.

    >>> class Files: root_dir = "/"
    >>> linked_part(Files(), "proc/self/cwd/x.ipynb")
    'proc/self'
    """
    root = getattr(contents_manager, "root_dir", None)
    if not isinstance(root, str) or not root:
        return None
    current = Path(root)
    parts = [p for p in path.split("/") if p]
    for depth, part in enumerate(parts, start=1):
        current = current / part
        if os.path.islink(current):
            return "/".join(parts[:depth])
        # What does not exist yet links nowhere (an export creates it); nor does what cannot
        # exist (a name too long for the file system: the contents manager says so).
        if not os.path.lexists(current):
            return None
    return None


def refuse_links(contents_manager: Any, path: str) -> None:
    """Refuse ``path`` when a part of it is a link.

    Raises:
        ConfigError: ``notebook_not_found``, as for a path that is not there.
    """
    linked = linked_part(contents_manager, path)
    if linked is not None:
        raise ConfigError(f"{path!r} goes through the link {linked!r}, which is not followed",
                          reason="notebook_not_found", hint="name the notebook itself, not a link to it")
