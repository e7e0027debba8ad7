"""The hostile battery: model-written code attacking the host from inside its kernel.

Each module is one family of attacks, each test one attack, run through the real loop: the
real openai SDK against the scripted model, a real sandboxed kernel, a real DuckDB file,
the real workspace. The only stand-in is the model's words, which here are the attacks.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from jupyter_analyst.kernel.sandbox.bwrap_command import find_bwrap
from jupyter_analyst.testing import ScriptedModelServer, TurnRunner


def sandboxed_root() -> list[pytest.MarkDecorator]:
    """Marks for attacks that need the whole sandbox: bubblewrap, and root to drop from."""
    return [
        pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed (make installs it)"),
        pytest.mark.skipif(os.geteuid() != 0, reason="per-kernel identities need root"),
    ]


def blob_bytes(workspace: Path) -> list[bytes]:
    """The content of every blob in the workspace's store."""
    store = workspace / "artifacts" / "sha256"
    return [p.read_bytes() for p in store.rglob("*") if p.is_file() and not p.name.startswith(".")]


def results_of(analyst, turn_id: str) -> list:
    """The tool results of one turn, in order."""
    return [e for e in analyst.of_type("tool_result") if e.turn_id == turn_id]


@contextmanager
def scripted(workspace: Path, source: Path, script: dict[str, Any]) -> Iterator[TurnRunner]:
    """Turns in ``workspace`` whose model says ``script``; the model server stops afterwards."""
    server = ScriptedModelServer(script).start()
    try:
        yield TurnRunner(workspace, server, source)
    finally:
        server.stop()


def remove_deep_tree(root: Path) -> None:
    """Remove a folder nested too deep for ``shutil.rmtree`` (which recurses), going down
    and up by relative steps; pytest's own clean-up of old runs would fail on it."""
    here = os.getcwd()
    os.chdir(root)
    try:
        path: list[str] = []  # the names walked down, so going up needs no getcwd()
        while True:
            folders = [e.name for e in os.scandir(".") if e.is_dir(follow_symlinks=False)]
            if folders:
                os.chdir(folders[0])
                path.append(folders[0])
                continue
            for entry in os.scandir("."):
                os.unlink(entry.name)
            if not path:
                break
            os.chdir("..")
            os.rmdir(path.pop())
    finally:
        os.chdir(here)
