"""Datasets in and files out over the kernel protocol, for a kernel that shares no disk with us.

A kernel on a gateway (Jupyter Enterprise Gateway) runs wherever the gateway's process
proxy puts it: it cannot read the host's blob store, and the host cannot read its folder.
So a dataset's Parquet bytes go to it in comm messages (base64 text: the gateway's
websocket carries JSON, not binary buffers), in chunks under the websocket's message cap,
and the kernel checks their sha256 against the fingerprint before it reads them, refusing
bytes that do not match. Files the kernel writes under ``outputs/`` come back as display
data of a hidden cell, each with its bytes, and the host checks the names and the sizes
before it keeps them (the kernel's side of this is the model's ground: its answer is
never trusted).

The kernel side is defined as a module of its own (:data:`MODULE`), as the loader is, so
the namespace the model's code sees gets no new name.
"""

from __future__ import annotations

import base64
import inspect
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .loader import read_dataset
from .workdir import shown_name

#: The comm target a dataset's bytes are sent to.
TARGET = "jupyter_analyst.dataset"
#: The module of the kernel side, in the kernel.
MODULE = "_jupyter_analyst_handoff"
#: The display type a file made by the kernel comes back as.
FILE_MIME = "application/vnd.jupyter-analyst.file+json"
#: Raw bytes per comm message: base64 makes it 4/3 larger, well under the 10 MiB a Tornado
#: websocket (the gateway's) takes in one message.
CHUNK_BYTES = 4 * 2**20
#: How deep below ``outputs/`` a returned file may be.
MAX_DEPTH = 32


# ---------------------------------------------------------------------------- kernel side
# These functions run in the kernel (their source is sent; see definition()): standard
# library only, besides pyarrow for read_dataset.

_parts: dict[str, list[bytes]] = {}
_seen: dict[str, tuple[int, int, int]] = {}
#: The kernel's folder, where its set-up left it (the model's code may change directory).
_home = os.getcwd()


def _opened(comm: Any, msg: dict) -> None:
    """A dataset's transfer begins: its chunks are kept until :func:`take` asks for them."""
    import base64

    fingerprint = str(msg["content"]["data"]["fingerprint"])
    parts = _parts[fingerprint] = []

    def received(chunk_msg: dict) -> None:
        parts.append(base64.b64decode(chunk_msg["content"]["data"]["chunk"]))

    comm.on_msg(received)


def take(fingerprint: str) -> Any:
    """The DataFrame of the bytes received for ``fingerprint``, once they are checked.

    Raises:
        ValueError: no bytes came, or they do not hash to ``fingerprint`` (nothing is loaded).
    """
    import hashlib

    parts = _parts.pop(fingerprint, None)
    if parts is None:
        raise ValueError(f"no bytes were received for the dataset {fingerprint}")
    data = b"".join(parts)
    del parts  # one copy of the bytes while they are read, not two
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    if digest != fingerprint:
        raise ValueError(f"refused: the {len(data)} bytes received for the dataset {fingerprint} hash to {digest}")
    return read_dataset(data)


def collect(limit: int) -> None:
    """Show each plain file under ``outputs/`` that is new or changed since the last call,
    with its bytes (at most ``limit`` bytes in all; past that, without them)."""
    import base64
    import os
    import stat

    from IPython.display import display

    top = os.path.join(_home, "outputs")
    if not os.path.isdir(top) or os.path.islink(top):
        return
    left = limit
    for folder, dirs, files in os.walk(top):  # links to folders are not entered
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, _home)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            signature = (st.st_size, st.st_mtime_ns, st.st_ino)
            if _seen.get(rel) == signature:
                continue
            _seen[rel] = signature
            item = {"path": rel, "size": st.st_size, "data": None, "problem": None}
            if not stat.S_ISREG(st.st_mode):
                item["problem"] = "not a plain file (links are never followed)"
            elif st.st_size > left:
                item["problem"] = f"over the {limit} bytes a step may return"
            else:
                with open(path, "rb") as f:
                    data = f.read(st.st_size + 1)
                left -= len(data)
                item["data"] = base64.b64encode(data).decode()
            display({FILE_MIME: item}, raw=True)


def _register() -> None:
    try:
        from comm import get_comm_manager

        manager = get_comm_manager()
    except Exception:  # an ipykernel from before the comm package
        from IPython import get_ipython

        manager = get_ipython().kernel.comm_manager
    manager.register_target(TARGET, _opened)


@cache
def definition() -> str:
    """Code that defines the kernel side as the module :data:`MODULE` and registers its comm
    target, leaving no name in the model's namespace."""
    source = "\n".join([
        "from __future__ import annotations",  # the annotations name types the kernel lacks
        f"TARGET = {TARGET!r}",
        f"FILE_MIME = {FILE_MIME!r}",
        "_parts = {}",
        "_seen = {}",
        "_home = __import__('os').getcwd()",
        *(inspect.getsource(f) for f in (read_dataset, _opened, take, collect, _register)),
        "_register()",
    ])
    return (
        "import sys as _analyst_sys, types as _analyst_types\n"
        f"_analyst_sys.modules[{MODULE!r}] = _analyst_types.ModuleType({MODULE!r})\n"
        f"exec({source!r}, _analyst_sys.modules[{MODULE!r}].__dict__)\n"
        "del _analyst_sys, _analyst_types\n"
    )


def setup_code() -> str:
    """The set-up of a remote kernel: a fresh folder of its own (the gateway's working folder
    is shared by all its kernels), removed when the kernel exits; then the kernel side."""
    return (
        "import atexit as _analyst_atexit, os as _analyst_os, shutil as _analyst_shutil, "
        "tempfile as _analyst_tempfile\n"
        "_analyst_os.chdir(_analyst_tempfile.mkdtemp(prefix='analyst-'))\n"
        "_analyst_atexit.register(_analyst_shutil.rmtree, _analyst_os.getcwd(), True)\n"
        "del _analyst_atexit, _analyst_os, _analyst_shutil, _analyst_tempfile\n" + definition()
    )


def take_code(name: str, fingerprint: str) -> str:
    """The cell that makes ``name`` the DataFrame of the bytes sent for ``fingerprint``.

    >>> take_code("sales", "sha256:ab")
    "sales = __import__('_jupyter_analyst_handoff').take('sha256:ab')"
    """
    return f"{name} = __import__({MODULE!r}).take({fingerprint!r})"


def collect_code(limit: int) -> str:
    """The hidden cell that sends back the files the last cell made.

    >>> collect_code(10)
    "__import__('_jupyter_analyst_handoff').collect(10)"
    """
    return f"__import__({MODULE!r}).collect({limit})"


# ---------------------------------------------------------------------------- host side


def dataset_messages(session: Any, fingerprint: str, path: Path, chunk: int = CHUNK_BYTES) -> Iterator[dict]:
    """The comm messages that carry the file at ``path`` to the kernel, read as they are sent."""
    comm_id = uuid.uuid4().hex
    yield session.msg("comm_open", {"comm_id": comm_id, "target_name": TARGET,
                                    "data": {"fingerprint": fingerprint}, "metadata": {}})
    with open(path, "rb") as f:
        while block := f.read(chunk):
            yield session.msg("comm_msg", {"comm_id": comm_id, "data": {"chunk": base64.b64encode(block).decode()}})
    yield session.msg("comm_close", {"comm_id": comm_id, "data": {}})


@dataclass
class Returned:
    """The files a remote kernel sent back: written into the host's folder, or refused."""

    files: list[Path] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)


def _safe_relpath(path: Any) -> str | None:
    """``path`` when it names a file under ``outputs/`` plainly, else ``None``.

    >>> _safe_relpath("outputs/a/chart.png"), _safe_relpath("outputs/../etc/passwd"), _safe_relpath("/etc/x")
    ('outputs/a/chart.png', None, None)
    """
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    parts = path.split("/")
    if (parts[0] != "outputs" or len(parts) < 2 or len(parts) > MAX_DEPTH + 1
            or any(p in ("", ".", "..") or p.startswith(".") for p in parts)):
        return None
    return path if shown_name(path) == path else None


_NOFOLLOW_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _write_below(root: Path, relpath: str, data: bytes) -> None:
    """Write ``data`` at ``root/relpath``, making its folders, following no link anywhere below
    ``root``: the thread's folder may hold what a local kernel left there (its folder before
    the server moved to a gateway), links included.

    Raises ``OSError`` when a part is a link, a file where a folder should be, or a folder
    where the file should be.
    """
    parent, name = os.path.split(relpath)
    fd = os.open(root, _NOFOLLOW_DIR)
    try:
        for part in parent.split("/"):
            try:
                os.mkdir(part, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            child = os.open(part, _NOFOLLOW_DIR, dir_fd=fd)  # ELOOP for a link, ENOTDIR for a file
            os.close(fd)
            fd = child
        tmp = f".in-{uuid.uuid4().hex[:12]}"
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=fd)
        try:
            with os.fdopen(out, "wb") as f:
                f.write(data)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)  # a link in its place is replaced, not followed
        except BaseException:
            os.unlink(tmp, dir_fd=fd)
            raise
    finally:
        os.close(fd)


def keep_returned(workdir: Path, displays: list[dict], limit: int) -> Returned:
    """Write the files a remote kernel sent back into ``workdir`` (the host's folder for the
    thread), checking each name and the total size against ``limit``."""
    out = Returned()
    left = limit
    for item in displays:
        if not isinstance(item, dict):
            continue
        rel = _safe_relpath(item.get("path"))
        shown = shown_name(str(item.get("path")))[:200]
        if rel is None:
            out.refused.append((shown, "not a plain name under outputs/"))
            continue
        if item.get("problem") or not isinstance(item.get("data"), str):
            out.refused.append((rel, str(item.get("problem") or "no bytes were sent")))
            continue
        try:
            data = base64.b64decode(item["data"], validate=True)
        except ValueError:
            out.refused.append((rel, "its bytes were not valid base64"))
            continue
        if len(data) > left:
            out.refused.append((rel, f"over the {limit} bytes a step may return"))
            continue
        try:
            _write_below(workdir, rel, data)
        except OSError as exc:
            out.refused.append((rel, f"cannot be written in the thread's folder ({exc.strerror or exc})"))
            continue
        left -= len(data)
        out.files.append(Path(rel))
    return out
