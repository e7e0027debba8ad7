"""The resume file: the run's settings on its first line, then each finished task, one JSON
line written (and synced) as the task ends. A killed run read it back and skips those tasks.

A last line cut by the kill (no newline, not JSON) is dropped when the file is opened again;
a file of another run (other suite, model or settings) is refused, never mixed in.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError
from .results import TaskResult


class ResumeFile:
    """The finished tasks of a run, kept at ``path``."""

    def __init__(self, path: Path, settings: dict[str, Any]) -> None:
        self.path = path
        self.settings = settings
        self.done: dict[str, TaskResult] = {}

    def open(self, *, restart: bool = False) -> dict[str, TaskResult]:
        """Read what an earlier run of the same settings finished (nothing with ``restart``),
        and start the file when there is none.

        Raises:
            ConfigError: the file is another run's.
        """
        if restart or not self.path.exists():
            self._write_all([{"kind": "settings", "settings": self.settings}])
            return {}
        lines = self.path.read_text(encoding="utf-8").split("\n")
        records, cut = [], False
        for number, line in enumerate(lines):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                if number == len(lines) - 1:  # the last line, cut mid-write
                    cut = True
                    continue
                raise ConfigError(f"the resume file {self.path} is damaged at line {number + 1}",
                                  reason="bad_resume_file", hint="pass --restart to start over") from None
        if not records or records[0].get("kind") != "settings" or records[0].get("settings") != self.settings:
            raise ConfigError(f"the resume file {self.path} is of another run (suite, model or settings differ)",
                              reason="bad_resume_file", hint="pass --restart to start over, or another -o REPORT")
        for record in records[1:]:
            try:
                result = TaskResult.model_validate(record.get("task"))
            except ValidationError as exc:
                raise ConfigError(f"the resume file {self.path} holds a malformed task: {exc}",
                                  reason="bad_resume_file", hint="pass --restart to start over") from exc
            self.done[result.id] = result
        if cut:
            self._write_all(records)
        return dict(self.done)

    def add(self, result: TaskResult) -> None:
        """Record a finished task: appended, flushed and synced before the next one is told."""
        self.done[result.id] = result
        line = json.dumps({"kind": "task", "task": result.model_dump(mode="json")}) + "\n"
        with self.path.open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def _write_all(self, records: list[dict[str, Any]]) -> None:
        """Replace the file with ``records`` (a temporary file renamed into place)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        temporary.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        os.replace(temporary, self.path)
