"""Which notebook a cell's ``%%ask`` works beside: the one whose kernel runs it.

A Jupyter server tells a kernel it starts for a notebook which notebook that is, in
``$JPY_SESSION_NAME``: the notebook's file path on the server's machine when the client
named the notebook (JupyterLab does), else the session's path relative to the server's
root. ``%%ask`` attaches that notebook, as the panel attaches the one in front of the
user: the model gets its outline and reads the cells it needs (see notebooks/outline.py).

The local engine reads the notebook's file as last saved. A turn on a server sends the
notebook's path in the server's own terms (relative to its root), found from the
server's sessions by this kernel's id: the server reads the file itself, through its
contents manager and its rules.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..notebooks import AttachedNotebook
    from .remote import AnalystServer

#: Set by the Jupyter server in the environment of a kernel it starts for a notebook.
SESSION_ENV = "JPY_SESSION_NAME"

_KERNEL_FILE = re.compile(r"^kernel-(?P<id>[0-9A-Za-z-]{1,64})\.json$")


def session_name() -> str | None:
    """The kernel's notebook as the server named it, when it is a notebook (``.ipynb``)."""
    value = os.environ.get(SESSION_ENV, "").strip()
    return value if value.endswith(".ipynb") else None


def local_notebook_path(explicit: str | None) -> tuple[Path, str] | None:
    """The file of the notebook a local turn attaches, and its name as the turn shows it:
    ``explicit`` (a file path), else the kernel's own.

    A relative session name is relative to the server's root, which the kernel does not
    know; the kernel runs in its notebook's folder, so the file is looked for there too.
    """
    if explicit:
        return Path(explicit).expanduser(), explicit
    name = session_name()
    if name is None:
        return None
    path = Path(name)
    if not path.is_absolute() and not path.exists():
        path = Path.cwd() / path.name
    return path, name


def local_notebook(explicit: str | None) -> AttachedNotebook | None:
    """The notebook a local turn attaches (:func:`local_notebook_path`), read."""
    from ..notebooks import load_attached

    found = local_notebook_path(explicit)
    return load_attached(*found) if found is not None else None


def kernel_id() -> str | None:
    """This kernel's id as its server knows it (from the connection file's name), if any."""
    try:
        from ipykernel.connect import get_connection_file

        found = _KERNEL_FILE.match(Path(get_connection_file()).name)
    except Exception:  # noqa: BLE001 - not in a kernel (a plain IPython): there is no id
        return None
    return found.group("id") if found else None


def server_notebook(server: AnalystServer, explicit: str | None) -> str | None:
    """The notebook path a turn on ``server`` sends: ``explicit`` (relative to the server's
    root), else the path of the server's session whose kernel this is, else a relative
    session name (already in the server's terms); ``None`` when this kernel is not one the
    server started for a notebook."""
    if explicit:
        return explicit
    own = kernel_id()
    if own is not None:
        for session in server.sessions():
            kernel = session.get("kernel") if isinstance(session, dict) else None
            path = session.get("path") if isinstance(session, dict) else None
            if isinstance(kernel, dict) and kernel.get("id") == own and isinstance(path, str) and path.endswith(".ipynb"):
                return path
    name = session_name()
    return name if name is not None and not Path(name).is_absolute() else None
