"""The sandboxed kernelspec: ipykernel started by our provisioner, interrupted by message.

Each install (each ``sys.prefix`` and interpreter) has a kernelspec folder of its own, so
two installs used by one user never rewrite each other's ``kernel.json``. The folders live
under ``$TMPDIR/jupyter-analyst-kernels-<uid>/``, which is checked to be this user's own
private folder before anything is written in it: ``/tmp`` is shared, and another local user
could have planted a link or a folder of theirs there first.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SANDBOX_KERNEL = "jupyter-analyst"
PROVISIONER = "analyst-sandbox-provisioner"


def kernelspec(python: str | None = None) -> dict[str, Any]:
    """The ``kernel.json`` of the sandboxed kernel.

    ``interrupt_mode`` is ``message``: a signal would reach bubblewrap, not the kernel.
    """
    return {
        "argv": [python or sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (jupyter-analyst sandbox)",
        "language": "python",
        "interrupt_mode": "message",
        "metadata": {"kernel_provisioner": {"provisioner_name": PROVISIONER}, "debugger": False},
    }


def notebook_metadata(python_version: str | None = None) -> dict[str, Any]:
    """A notebook's ``kernelspec`` and ``language_info`` naming the sandboxed kernel, as
    JupyterLab writes them once that kernel has started: a notebook written with these opens
    on the sandbox and is not changed (left unsaved) by the kernel's start.

    ``language_info`` is ipykernel's (``IPythonKernel.language_info``), for the interpreter
    the kernelspec starts (this one), written out here: importing ipykernel pulls IPython.

    >>> meta = notebook_metadata("3.12.4")
    >>> meta["kernelspec"]["name"], meta["language_info"]["version"]
    ('jupyter-analyst', '3.12.4')
    """
    spec = kernelspec()
    version = python_version or sys.version.split()[0]
    return {
        "kernelspec": {"name": SANDBOX_KERNEL, "display_name": spec["display_name"], "language": spec["language"]},
        "language_info": {
            "codemirror_mode": {"name": "ipython", "version": int(version.split(".")[0])},
            "file_extension": ".py",
            "mimetype": "text/x-python",
            "name": "python",
            "nbconvert_exporter": "python",
            "pygments_lexer": "ipython3",
            "version": version,
        },
    }


def write_kernelspec(folder: Path, python: str | None = None) -> Path:
    """Write the kernelspec into ``folder/jupyter-analyst``; returns that folder.

    The file is replaced by rename (never written through whatever is there), and left
    alone when it already says the same.
    """
    spec_dir = Path(folder) / SANDBOX_KERNEL
    spec_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(kernelspec(python), indent=2)
    target = spec_dir / "kernel.json"
    if _read_regular(target) == text:
        return spec_dir
    fd, tmp = tempfile.mkstemp(dir=spec_dir, prefix=".kernel-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)  # Jupyter (and a kernel manager running as us) reads it
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return spec_dir


def _read_regular(path: Path) -> str | None:
    """The text of ``path`` when it is a regular file (a link is not followed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as fh:
        return fh.read() if stat.S_ISREG(os.fstat(fh.fileno()).st_mode) else None


def install_key(prefix: str | None = None, python: str | None = None) -> str:
    """A short name for one install: its ``sys.prefix`` and interpreter.

    >>> install_key("/opt/env-a", "/opt/env-a/bin/python") != install_key("/opt/env-b", "/opt/env-b/bin/python")
    True
    """
    identity = f"{prefix or sys.prefix}\0{python or sys.executable}"
    return hashlib.sha256(identity.encode()).hexdigest()[:16]


def private_folder(path: Path) -> Path | None:
    """``path`` as a folder only this user can write (made 0700 when missing), else ``None``.

    A link, a file, a folder of another owner, or one others may write into is refused:
    in a shared folder such as ``/tmp`` any local user could have made it first.
    """
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return None
    return path


@lru_cache(maxsize=1)
def kernels_dir() -> Path:
    """This install's folder of kernelspecs holding ours, made once per process."""
    base = Path(tempfile.gettempdir()) / f"jupyter-analyst-kernels-{os.getuid()}"
    root = private_folder(base)
    if root is None:
        # Someone else holds the name: a fresh folder of our own instead (mkdtemp makes it
        # 0700 under a random name nobody could have planted).
        log.warning("%s is not a private folder of this user; kernelspecs go to a new folder", base)
        root = Path(tempfile.mkdtemp(prefix=f"{base.name}-"))
    # Inside a folder only we can write, the install's own subfolder is safe to make.
    folder = root / install_key()
    folder.mkdir(mode=0o700, exist_ok=True)
    write_kernelspec(folder)
    return folder


def install_kernelspec(*, user: bool = False, prefix: str | None = None) -> str:
    """Install the sandboxed kernelspec where Jupyter finds it (for the server); returns where."""
    from jupyter_client.kernelspec import KernelSpecManager

    with tempfile.TemporaryDirectory() as tmp:
        source = write_kernelspec(Path(tmp))
        return KernelSpecManager().install_kernel_spec(str(source), SANDBOX_KERNEL, user=user, prefix=prefix)
