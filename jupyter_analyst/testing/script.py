"""The script a scripted model replays, and how a request picks its reply.

Replay is stateless: the reply depends only on the request. The turn is the first whose
``match`` (a case-insensitive regex) finds the conversation's last user message (not the
note that closes a turn's last request once its step budget is spent, nor the check of an
answer's numbers); the step is the number of assistant messages after that user message. So
the same script serves any number of conversations, processes and restarts.

Told that its answer states numbers no result holds (``[answer check]``), the model replies
with its turn's ``after_check`` steps, counted from the check; a turn without them keeps its
answer: the answer step is given again.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..agent import ANSWER_CHECK_MARKER, STEP_BUDGET_MARKER, SUMMARIZER_MARKER
from ..errors import ConfigError

#: How a step streams its tool calls, to exercise clients: the id only in a call's first
#: chunk (the common case), in every chunk, changed in a later chunk, never; or the
#: arguments cut into many small pieces, also right after backslashes (mid-escape).
#: ``arguments_object``: the arguments as a JSON object rather than text, as Ollama sends them.
Quirk = Literal["id_first_chunk_only", "id_every_chunk", "id_changes", "no_id", "split_arguments", "arguments_object"]
#: The ``finish_reason`` a step ends with: ``auto`` is ``tool_calls`` or ``stop`` as the step
#: warrants; ``none`` ends the stream without any finish reason.
Finish = Literal["auto", "stop", "length", "content_filter", "none"]
LABEL = "[scripted model]"


class _Strict(BaseModel):
    # A misspelt key in a hand-written script should fail loudly, not be skipped.
    model_config = ConfigDict(extra="forbid")


class ScriptedCall(_Strict):
    """A tool call the model makes: ``arguments`` as an object, or exact ``raw_arguments`` text."""

    name: str
    arguments: dict[str, Any] | None = None
    raw_arguments: str | None = None

    @model_validator(mode="after")
    def _one_form(self) -> ScriptedCall:
        if self.arguments is not None and self.raw_arguments is not None:
            raise ValueError("give either 'arguments' or 'raw_arguments', not both")
        return self

    def argument_value(self, quirk: str) -> str | dict[str, Any]:
        """The arguments as the wire carries them: text, or an object with ``arguments_object``."""
        if quirk == "arguments_object" and self.raw_arguments is None:
            return dict(self.arguments or {})
        return self.argument_text()

    def argument_text(self) -> str:
        """The arguments exactly as they are sent."""
        if self.raw_arguments is not None:
            return self.raw_arguments
        return json.dumps(self.arguments or {})


class ScriptedError(_Strict):
    """An HTTP error to answer with instead of a reply."""

    status: int = Field(default=500, ge=400, le=599)
    message: str = "scripted failure"


class ScriptedUsage(_Strict):
    """Token counts a reply reports as its server's ``usage``."""

    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)


class Step(_Strict):
    """One reply: text (streamed in a few chunks), tool calls after it, or an HTTP error.

    The other fields reproduce what real servers send: a reasoning model's monologue in a
    field of its own before the text (``reasoning_content`` as vLLM and DeepSeek name it,
    ``reasoning`` as OpenRouter and Ollama do), a refusal (``delta.refusal``), a finish
    reason other than the usual one, and a proxy that ignores ``stream: true`` and answers
    with one JSON body. ``reasoning_pace_s`` streams the reasoning a line at a time, that
    many seconds apart: a model thinking at length, which a client can stop in the middle.
    """

    content: str | None = None
    tool_calls: list[ScriptedCall] = []
    quirk: Quirk = "id_first_chunk_only"
    error: ScriptedError | None = None
    reasoning: str | None = None
    reasoning_field: Literal["reasoning_content", "reasoning"] = "reasoning_content"
    reasoning_pace_s: float = Field(default=0.0, ge=0.0, le=5.0)
    refusal: str | None = None
    finish: Finish = "auto"
    ignores_stream: bool = False
    usage: ScriptedUsage | Literal["none"] | None = None
    """The token counts the reply reports: these exact ones, ``"none"`` for no ``usage`` at
    all (as some servers stream), or by default four characters a token of what was sent and said."""

    @model_validator(mode="after")
    def _error_alone(self) -> Step:
        if self.error is not None and (self.content or self.tool_calls or self.reasoning or self.refusal):
            raise ValueError("a step with an 'error' answers nothing else")
        return self

    def finish_reason(self) -> str | None:
        """The finish reason sent (``None``: none at all).

        >>> Step(content="a").finish_reason(), Step(content="a", finish="length").finish_reason()
        ('stop', 'length')
        """
        if self.finish == "none":
            return None
        if self.finish == "auto":
            return "tool_calls" if self.tool_calls else "stop"
        return self.finish


class ScriptedTurn(_Strict):
    """The replies to one user message."""

    match: str | None = None
    steps: list[Step] = []
    after_check: list[Step] = []
    """The replies once the answer's numbers were checked (see the module docstring); none:
    the answer is given again as it was."""

    @field_validator("match")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"'match' is not a regular expression: {exc}") from exc
        return value


class Script(_Strict):
    """A whole script: the turns, tried in order for each request."""

    description: str | None = None
    turns: list[ScriptedTurn] = Field(default_factory=list)
    summarizer: list[ScriptedTurn] = Field(default_factory=list)
    """Replies to the end-of-turn summarizer, matched against its request; ``{}`` (no change)
    when none matches. Only the first step of a matching entry is used."""
    suggestions: list[str] = Field(default_factory=list)
    """Questions the script answers, which a client offers to start from (an empty thread's)."""
    unmatched: str | None = None
    """The answer to a prompt no turn matches (``{prompt}`` in it is the prompt): a demo's
    script says which questions it answers."""

    def is_summarizer(self, messages: list[dict[str, Any]]) -> bool:
        """Whether a request comes from the summarizer rather than the agent."""
        first = next((m for m in messages if isinstance(m, dict)), {})
        return first.get("role") == "system" and _text(first.get("content")).startswith(SUMMARIZER_MARKER)

    def summarizer_reply(self, messages: list[dict[str, Any]]) -> Step:
        """The reply to a summarizer request.

        >>> script = Script(summarizer=[ScriptedTurn(match="turn 2", steps=[Step(content='{"remove": []}')])])
        >>> script.summarizer_reply([{"role": "user", "content": "--- turn 1"}]).content
        '{}'
        """
        request = " ".join(_text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user")
        for turn in self.summarizer:
            if (turn.match is None or re.search(turn.match, request, re.IGNORECASE)) and turn.steps:
                return turn.steps[0]
        return Step(content="{}")

    def reply_for(self, messages: list[dict[str, Any]]) -> Step:
        """The step that answers this conversation (see the module docstring).

        >>> script = Script(turns=[ScriptedTurn(match="^hi", steps=[Step(content="a"), Step(content="b")])])
        >>> script.reply_for([{"role": "user", "content": "Hi"}]).content
        'a'
        >>> script.reply_for([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "a"}]).content
        'b'
        >>> told = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "a"},
        ...         {"role": "user", "content": "[answer check] No result you were shown holds ..."}]
        >>> script.reply_for(told).content
        'a'
        >>> script.reply_for([{"role": "user", "content": "bye"}]).content
        '[scripted model] no scripted reply for: bye'
        >>> Script(unmatched="I answer only 'hi', not '{prompt}'.").reply_for([{"role": "user", "content": "bye"}]).content
        "I answer only 'hi', not 'bye'."
        """
        messages = [m for m in messages if isinstance(m, dict)]
        if self.is_summarizer(messages):
            return self.summarizer_reply(messages)
        # The note a turn's last request closes with once its step budget is spent is not a prompt.
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"
                         and not _text(m.get("content")).startswith((STEP_BUDGET_MARKER, ANSWER_CHECK_MARKER))),
                        default=None)
        prompt = _text(messages[last_user].get("content")) if last_user is not None else ""
        after = messages[last_user + 1 :] if last_user is not None else messages
        check = next((i for i, m in enumerate(after) if m.get("role") == "user"
                      and _text(m.get("content")).startswith(ANSWER_CHECK_MARKER)), None)
        step_index = sum(1 for m in after if m.get("role") == "assistant")
        for turn in self.turns:
            if turn.match is None or re.search(turn.match, prompt, re.IGNORECASE):
                if check is not None and turn.after_check:
                    steps, step_index = turn.after_check, sum(1 for m in after[check:] if m.get("role") == "assistant")
                elif check is not None:
                    steps, step_index = turn.steps, sum(1 for m in after[:check] if m.get("role") == "assistant") - 1
                else:
                    steps = turn.steps
                if 0 <= step_index < len(steps):
                    return steps[step_index]
                return Step(content=f"{LABEL} script exhausted")
        if self.unmatched is not None:
            return Step(content=self.unmatched.replace("{prompt}", prompt[:200]))
        return Step(content=f"{LABEL} no scripted reply for: {prompt[:200]}")


def call_step(tool: str, /, *, quirk: Quirk | None = None, **arguments: Any) -> dict[str, Any]:
    """A script step that calls one tool (a dict in the script's JSON form).

    >>> call_step("describe_table", table="orders")
    {'tool_calls': [{'name': 'describe_table', 'arguments': {'table': 'orders'}}]}
    """
    step: dict[str, Any] = {"tool_calls": [{"name": tool, "arguments": arguments}]}
    if quirk is not None:
        step["quirk"] = quirk
    return step


def sql_step(sql: str, name: str, /, *, quirk: Quirk | None = None, **arguments: Any) -> dict[str, Any]:
    """A step that fetches ``sql`` into the dataset ``name`` (``expect=...`` and such go along)."""
    return call_step("run_sql", quirk=quirk, sql=sql, name=name, **arguments)


def python_step(code: str, /, *, quirk: Quirk | None = None, **arguments: Any) -> dict[str, Any]:
    """A step that runs ``code`` in the kernel."""
    return call_step("run_python", quirk=quirk, code=code, **arguments)


def text_step(text: str = f"{LABEL} done") -> dict[str, Any]:
    """A step that answers in plain text, ending the turn."""
    return {"content": text}


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def load_script(source: Script | dict[str, Any] | str | Path) -> Script:
    """A script from a model, a dict, or the path of a JSON file.

    >>> load_script({"turns": [{"steps": [{"contnet": "typo"}]}]})
    Traceback (most recent call last):
    ...
    jupyter_analyst.errors.ConfigError: the model script is malformed: turns.0.steps.0.contnet: Extra inputs are not permitted

    Raises:
        ConfigError: the script is malformed or its file cannot be read.
    """
    if isinstance(source, Script):
        return source
    where = "" if isinstance(source, dict) else f" {source}"
    try:
        if isinstance(source, dict):
            return Script.model_validate(source)
        return Script.model_validate_json(Path(source).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"the model script{where} cannot be read: {exc}") from exc
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg']}" for error in exc.errors()
        )
        raise ConfigError(f"the model script{where} is malformed: {problems}") from exc
