"""The script a scripted model replays, and how a request picks its reply.

Replay is stateless: the reply depends only on the request. The turn is the first whose
``match`` (a case-insensitive regex) finds the conversation's last user message; the step
is the number of assistant messages after that user message. So the same script serves
any number of conversations, processes and restarts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

Quirk = Literal["id_first_chunk_only", "id_every_chunk", "id_changes", "no_id", "split_arguments"]
LABEL = "[scripted model]"


class ScriptedCall(BaseModel):
    """A tool call the model makes: ``arguments`` as an object, or exact ``raw_arguments`` text."""

    name: str
    arguments: dict[str, Any] | None = None
    raw_arguments: str | None = None

    def argument_text(self) -> str:
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments or {})


class ScriptedError(BaseModel):
    """An HTTP error to answer with instead of a reply."""

    status: int = 500
    message: str = "scripted failure"


class Step(BaseModel):
    """One reply: text, tool calls, or an error."""

    content: str | None = None
    tool_calls: list[ScriptedCall] = []
    quirk: Quirk = "id_first_chunk_only"
    error: ScriptedError | None = None


class ScriptedTurn(BaseModel):
    """The replies to one user message."""

    match: str | None = None
    steps: list[Step] = []


class Script(BaseModel):
    """A whole script."""

    description: str | None = None
    turns: list[ScriptedTurn] = Field(default_factory=list)

    def reply_for(self, messages: list[dict[str, Any]]) -> Step:
        """The step that answers this conversation."""
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=None)
        prompt = _text(messages[last_user].get("content")) if last_user is not None else ""
        after = messages[last_user + 1 :] if last_user is not None else messages
        step_index = sum(1 for m in after if m.get("role") == "assistant")
        for turn in self.turns:
            if turn.match is None or re.search(turn.match, prompt, re.IGNORECASE):
                if step_index < len(turn.steps):
                    return turn.steps[step_index]
                return Step(content=f"{LABEL} script exhausted")
        return Step(content=f"{LABEL} no scripted reply for: {prompt[:200]}")


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def load_script(source: Script | dict[str, Any] | str | Path) -> Script:
    """A script from a model, a dict, or a JSON file."""
    if isinstance(source, Script):
        return source
    if isinstance(source, dict):
        return Script.model_validate(source)
    return Script.model_validate_json(Path(source).read_text(encoding="utf-8"))
