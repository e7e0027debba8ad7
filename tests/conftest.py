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


class Analyst:
    """Runs turns against a scripted model server in one workspace, recording events."""

    def __init__(self, workspace: Path, server: Any, source: Path) -> None:
        self.workspace = workspace
        self.server = server
        self.source = source
        self.events: list[Any] = []

    def run(self, prompt: str, *, thread: str | None = None, rerun: bool = False, **config: Any):
        from jupyter_analyst.analysis import AnalystConfig, ModelSettings, TurnRequest, run_turn

        request = TurnRequest(
            prompt=prompt, source=None if thread else str(self.source), thread_id=thread, rerun=rerun
        )
        model = ModelSettings(model="jupyter-analyst-scripted", base_url=self.server.base_url, api_key="x")
        return asyncio.run(
            run_turn(
                request,
                config=AnalystConfig(workspace=self.workspace, **config),
                model=model,
                on_event=self.events.append,
            )
        )

    def of_type(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


@pytest.fixture
def analyst(tmp_path, sales_db) -> Callable[[dict], Analyst]:
    """Start a scripted model with the given script and return a turn runner."""
    from jupyter_analyst.testing import ScriptedModelServer

    servers: list[Any] = []

    def make(script: dict) -> Analyst:
        server = ScriptedModelServer(script).start()
        servers.append(server)
        return Analyst(tmp_path / "ws", server, sales_db)

    yield make
    for server in servers:
        server.stop()
