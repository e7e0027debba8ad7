"""Shared fixtures: the bundled sample database and a way to run turns with a scripted model."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
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
def store(tmp_path, store_location):
    """An artifact store (inventory and blobs) in a fresh folder, on each database."""
    from jupyter_analyst.artifacts import ArtifactStore

    artifacts = ArtifactStore(store_location, tmp_path)
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


@pytest.fixture(scope="session")
def postgres(tmp_path_factory):
    """One PostgreSQL server for the session (skipped, loudly, where it is not installed)."""
    from jupyter_analyst.testing.postgres import INSTALL_HINT, PostgresUnavailable, postgres_server

    # Not under pytest's own temporary folder: that one is private to root, and the server
    # runs as the postgres user when the suite runs as root.
    root = Path(tempfile.mkdtemp(prefix="analyst-pg-"))
    try:
        server_cm = postgres_server(root)
        try:
            server = server_cm.__enter__()
        except PostgresUnavailable as exc:
            pytest.skip(f"PostgreSQL store tests need a server: {exc} ({INSTALL_HINT})")
        yield server
        server_cm.__exit__(None, None, None)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_backend(request) -> str:
    """Which database the store-level tests run against; both, by parametrisation."""
    return request.param


@pytest.fixture
def store_location(store_backend, tmp_path, request):
    """Where a test's stores live: a SQLite file, or a fresh PostgreSQL database."""
    if store_backend == "sqlite":
        return tmp_path / "a.sqlite3"
    return request.getfixturevalue("postgres").new_database()
