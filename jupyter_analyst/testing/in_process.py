"""Turns run in-process against a scripted model, for tests and benchmarks."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any


class TurnRunner:
    """Runs turns against a model server in one workspace, recording events. ``model``: the
    name asked for (the scripted model's by default; a real server's name otherwise)."""

    def __init__(self, workspace: Path, server: Any, source: Path, *, model: str | None = None) -> None:
        self.workspace = workspace
        self.server = server
        self.source = source
        self.model = model
        self.events: list[Any] = []

    def run(self, prompt: str, *, thread: str | None = None, rerun: bool = False, attached: Any = None,
            **config: Any):
        from jupyter_analyst.turns import AnalystConfig, ModelSettings, TurnRequest, run_turn
        from jupyter_analyst.testing.model_server import MODEL_NAME

        request = TurnRequest(
            prompt=prompt, source=None if thread else str(self.source), thread_id=thread, rerun=rerun,
            attached=attached,
        )
        model = ModelSettings(model=self.model or MODEL_NAME, base_url=self.server.base_url, api_key="x")
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
