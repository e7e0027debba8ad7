"""Shared fixtures: the bundled sample database and a way to run turns with a scripted model."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytest_jupyter.jupyter_server"]

# The engine is imported inside the fixtures, so that a broken module fails the tests that
# use it rather than the collection of the whole suite.


@pytest.fixture(scope="session")
def sales_db(tmp_path_factory) -> Path:
    """A real DuckDB file with the bundled sample tables (regions, products, orders)."""
    from jupyter_analyst.demo import build_sample_database

    return build_sample_database(tmp_path_factory.mktemp("data") / "sales.duckdb")


@pytest.fixture
def store(tmp_path):
    """An artifact store (inventory and blobs) in a fresh folder."""
    from jupyter_analyst.artifacts import ArtifactStore

    artifacts = ArtifactStore(tmp_path / "ws.sqlite3", tmp_path)
    yield artifacts
    artifacts.close()


@pytest.fixture
def thread_tools(tmp_path, sales_db):
    """A thread's runtime and tool box on the sample database, over a real workspace; a
    kernel starts only when a step needs one."""
    from jupyter_analyst.agent.runtime import ThreadRuntime
    from jupyter_analyst.agent.tools import ToolBox
    from jupyter_analyst.sql import open_source
    from jupyter_analyst.workspace import Workspace

    workspace = Workspace(tmp_path / "ws")
    record = workspace.store.create_thread(source=str(sales_db))
    source = open_source(str(sales_db))
    runtime = ThreadRuntime(thread_id=record.thread_id, source=source, artifacts=workspace.artifacts,
                            workdir=workspace.kernel_dir(record.thread_id))
    yield runtime, ToolBox(runtime)
    asyncio.run(runtime.close())
    source.close()
    workspace.close()


@pytest.fixture
def analyst(tmp_path, sales_db) -> Callable[[dict], Any]:
    """Start a scripted model with the given script and return a turn runner."""
    from jupyter_analyst.testing import ScriptedModelServer, TurnRunner

    servers: list[Any] = []

    def make(script: dict) -> Any:
        server = ScriptedModelServer(script).start()
        servers.append(server)
        return TurnRunner(tmp_path / "ws", server, sales_db)

    yield make
    for server in servers:
        server.stop()
