"""The workspace folder: where threads, events, the inventory and the blobs live.

Layout (default ``.analyst/`` beside the notebooks)::

    analyst.sqlite3          threads, turns, messages, events, inventory, step ledger (WAL)
    artifacts/sha256/ab/...  content-addressed blobs
    threads/<thread_id>/     the thread's kernel working folder (``outputs/`` inside)
                             and its notebook, ``notebook.ipynb``
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from .artifacts import ArtifactStore
from .store import ThreadStore

DEFAULT_WORKSPACE = Path(".analyst")


class Workspace:
    """Paths and stores of one workspace folder."""

    def __init__(self, root: Path | str = DEFAULT_WORKSPACE) -> None:
        self.root = Path(root).expanduser().resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    @property
    def db_path(self) -> Path:
        """The SQLite file holding threads, events and the inventory."""
        return self.root / "analyst.sqlite3"

    @cached_property
    def store(self) -> ThreadStore:
        """Threads, turns, messages and events."""
        return ThreadStore(self.db_path)

    @cached_property
    def artifacts(self) -> ArtifactStore:
        """The artifact inventory, its blobs and the step ledger."""
        return ArtifactStore(self.db_path, self.root)

    def thread_dir(self, thread_id: str) -> Path:
        """The thread's kernel working folder (created on demand)."""
        path = self.root / "threads" / thread_id
        (path / "outputs").mkdir(parents=True, exist_ok=True)
        return path

    def notebook_path(self, thread_id: str) -> Path:
        """Where the thread's audit notebook is written."""
        return self.thread_dir(thread_id) / "notebook.ipynb"

    def close(self) -> None:
        """Close the database connections that were opened."""
        for name in ("store", "artifacts"):
            opened = self.__dict__.pop(name, None)
            if opened is not None and hasattr(opened, "close"):
                opened.close()
