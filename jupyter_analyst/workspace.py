"""The workspace folder: where threads, events, the inventory and the blobs live.

Layout (default ``.analyst/`` beside the notebooks)::

    analyst.sqlite3          threads, turns, messages, events, inventory, step ledger (WAL)
    artifacts/sha256/ab/...  content-addressed blobs (with ``--blobs s3://...``, the bucket holds
                             them and ``artifacts/cache/sha256/ab/...`` is its read-through cache)
    threads/<thread_id>/     the thread's audit notebook, ``notebook.ipynb`` (the host's only)
    checks/ab/...            the SQL checks made, kept for other processes (``sql/check_cache.py``)
    kernels/<thread_id>/     the thread's kernel working folder (``outputs/`` inside): the only
                             place a kernel may write, so nothing the host trusts lives there
    kernels/.datasets/k-*/   per kernel, links to the blobs of its thread's datasets (read-only
                             to the kernel)
    kernels/.warm/           the warm pool's kernel folders
"""

from __future__ import annotations

import re
import shutil
from functools import cached_property
from pathlib import Path
from typing import Any

from .artifacts import ArtifactStore, open_blob_store
from ._disk import unavailable
from .errors import ConfigError, StorageError
from .store import ThreadStore

DEFAULT_WORKSPACE = Path(".analyst")
_THREAD_ID = re.compile(r"[A-Za-z0-9_-]+")


class Workspace:
    """Paths and stores of one workspace folder."""

    def __init__(self, root: Path | str = DEFAULT_WORKSPACE, *, store: str | None = None,
                 blobs: str | None = None, blobs_endpoint: str | None = None) -> None:
        self.root = Path(root).expanduser().resolve()
        self.store_url = store or None
        """A ``postgresql://`` URL holding the threads, events and inventory, or ``None``
        for the SQLite file in the folder (notebooks and kernels stay in the folder)."""
        self.blobs_url = blobs or None
        """An ``s3://bucket/prefix`` URL holding the blobs, or ``None`` for the folder's
        ``artifacts/sha256``."""
        self.blobs_endpoint = blobs_endpoint or None
        self._mkdir(self.root)

    @classmethod
    def of(cls, config: Any) -> Workspace:
        """The workspace an ``AnalystConfig`` names: its folder, database and blob store."""
        return cls(config.workspace, store=config.store, blobs=config.blobs, blobs_endpoint=config.blobs_endpoint)

    def _mkdir(self, path: Path) -> None:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise unavailable(exc, self.root) or StorageError(f"cannot create {path}: {exc}") from exc

    @property
    def db_path(self) -> Path:
        """The SQLite file holding threads, events and the inventory."""
        return self.root / "analyst.sqlite3"

    @cached_property
    def store(self) -> ThreadStore:
        """Threads, turns, messages and events."""
        return ThreadStore(self.store_url or self.db_path)

    @cached_property
    def artifacts(self) -> ArtifactStore:
        """The artifact inventory, its blobs and the step ledger."""
        # The blob store is opened (and an object store checked) before the database.
        blobs = open_blob_store(self.blobs_url, self.root, endpoint_url=self.blobs_endpoint)
        return ArtifactStore(self.store_url or self.db_path, self.root, blobs=blobs)

    def thread_dir(self, thread_id: str) -> Path:
        """The thread's own folder (its notebook), which no kernel can see (created on demand)."""
        path = self.root / "threads" / thread_id
        self._mkdir(path)
        return path

    def written_notebook(self, thread_id: str) -> Path | None:
        """The thread's audit notebook once it is written, else ``None`` (nothing is created;
        an id that is no thread's, ``../x`` say, names nothing)."""
        if not _THREAD_ID.fullmatch(thread_id):
            return None
        path = self.root / "threads" / thread_id / "notebook.ipynb"
        return path if path.is_file() and not path.is_symlink() else None

    def kernel_dir(self, thread_id: str) -> Path:
        """The thread's kernel working folder (created on demand; its content is the kernel's)."""
        path = self.root / "kernels" / thread_id
        self._mkdir(path)
        return path

    @property
    def checks_dir(self) -> Path:
        """Where the SQL checks made are kept, so another process need not make them again
        (the host's: no kernel sees it)."""
        return self.root / "checks"

    @property
    def datasets_root(self) -> Path:
        """Where each kernel's read-only folder of dataset links is made."""
        return self.root / "kernels" / ".datasets"

    @property
    def warm_dir(self) -> Path:
        """Where the warm pool's kernels wait for a thread."""
        return self.root / "kernels" / ".warm"

    def delete_thread(self, thread_id: str) -> int:
        """Delete the thread: its rows (one transaction, refused with ``ThreadBusy`` while a
        turn holds a live lease on it), then its inventory entries and steps, then its
        folders; returns how many artifacts it held. Its kernel must be stopped first.

        The rows go first: once they are gone the thread is unknown everywhere, and what
        follows only tidies what no one can reach. Blobs stay (see
        ``ArtifactStore.forget_thread``)."""
        self.store.delete_thread(thread_id)
        count = self.artifacts.forget_thread(thread_id)
        self._remove_thread_folders(thread_id)
        return count

    def _remove_thread_folders(self, thread_id: str) -> None:
        """Remove the thread's own folder and its kernel's (a deleted thread's).

        The kernel's folder is written by the model's code: it is removed without following
        any link in it (``shutil.rmtree``'s fd-based walk; refused where the platform has
        none), so a link planted there cannot point the removal at the host's files.
        """
        if not _THREAD_ID.fullmatch(thread_id):
            raise ConfigError(f"not a thread id: {thread_id!r}", reason="thread_not_found")
        if not shutil.rmtree.avoids_symlink_attacks:
            raise StorageError("this platform cannot remove a folder without following its links",
                               hint="remove the thread's kernel folder by hand")
        for path in (self.root / "threads" / thread_id, self.root / "kernels" / thread_id):
            if path.is_symlink():
                path.unlink()
            elif path.exists():
                shutil.rmtree(path)

    def notebook_path(self, thread_id: str) -> Path:
        """Where the thread's audit notebook is written."""
        return self.thread_dir(thread_id) / "notebook.ipynb"

    def close(self) -> None:
        """Close the database connections that were opened."""
        for name in ("store", "artifacts"):
            opened = self.__dict__.pop(name, None)
            if opened is not None and hasattr(opened, "close"):
                opened.close()
