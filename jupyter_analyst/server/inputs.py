"""What clients may send to the API: typed bodies and query parameters, and their limits.

Every field of every body and query parameter is read through a model here, at the handler
boundary; anything else (a wrong type, an unknown field, a number out of range, text that
is not UTF-8, a body too deep or too large) is an :class:`InvalidRequest`, answered 4xx
with ``{message, reason, hint}``, and nothing runs.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from ..artifacts import MAX_PREVIEW_ROWS, PREVIEW_ROWS, ArtifactType
from ..errors import ConfigError

#: The largest sequence number SQLite can hold; a larger one could never be an event's.
MAX_SEQ = 2**63 - 1


class InvalidRequest(ConfigError):
    """A request the API refuses as sent: answered with ``status`` (a 4xx), never run."""

    reason = "invalid_request"

    def __init__(self, message: str, *, status: int = 400, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.status = status


class ApiLimits(BaseModel):
    """Sizes the API accepts (``c.AnalystApp.max_body_bytes``, ``max_prompt_bytes``)."""

    max_body_bytes: int = Field(1 << 20, gt=0)
    """Bytes of one request body, as sent."""
    max_prompt_bytes: int = Field(100_000, gt=0)
    """Bytes of one prompt, encoded as UTF-8."""


def shown(value: Any, limit: int = 60) -> str:
    """A client's value quoted for an error message, cut short.

    >>> shown("x" * 100)[-5:]
    "x...'"
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..." + text[0]


# ------------------------------------------------------------------ field types


def _utf8(text: str) -> str:
    # JSON may spell a lone surrogate (\ud800); no store, file or model can take one.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("must be valid Unicode text (a lone surrogate is not)") from exc
    return text


def _sequence_number(value: Any) -> Any:
    # Digits only: int() would also take " 1", "1_0", "+1" and "١".
    if isinstance(value, str):
        if not re.fullmatch(r"[0-9]{1,19}", value):
            raise ValueError("must be an event sequence number: a whole number from 0")
        return int(value)
    return value


def _whole(value: Any) -> Any:
    # JSON has one kind of number: 3.0 is the whole number 3, as JSON Schema's "integer" says.
    return int(value) if isinstance(value, float) and value.is_integer() else value


Text = Annotated[str, AfterValidator(_utf8)]
#: A turn's number: a whole number from 1 (3.0 is 3).
TurnNumber = Annotated[int, Field(ge=1, le=2**31 - 1), BeforeValidator(_whole)]
SequenceNumber = Annotated[int, BeforeValidator(_sequence_number), Field(ge=0, le=MAX_SEQ)]


class _Input(BaseModel):
    """A body or a set of query parameters: strict types, no unknown fields."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    #: Reason codes of a refused field (default ``invalid_<field>``).
    reasons: ClassVar[dict[str, str]] = {}
    #: What the client should send instead.
    hint: ClassVar[str] = ""


# ------------------------------------------------------------------ bodies


#: Where the sidebar keeps audit notebooks in the user's folder, unless told otherwise.
NOTEBOOK_FOLDER = "analyst"


#: The longest name of a file or folder a file system takes (NAME_MAX, in bytes): a name of
#: ASCII characters may have 255 of them; one with any other character, a quarter of that
#: (UTF-8 spends up to 4 bytes on a character), so that every name allowed can be a file.
MAX_NAME_CHARS = 255
MAX_NAME_CHARS_UNICODE = MAX_NAME_CHARS // 4

#: What a notebook path in the user's Jupyter folder may be, as the description states it
#: (a pattern clients can test): relative; names without control characters, backslashes or
#: '/', of the lengths above, none '.' or '..'; a NAME.ipynb at the end. Written to mean the
#: same in Python's and JavaScript's regular expressions (no '.', which stops at a line end;
#: nothing after the end, where Python's '$' would let a line end by), and built from its
#: parts rather than from lookaheads, so that generators of examples make matches at once.
#: The server refuses exactly what it refuses.
_ASCII_CHAR = r"[\x20-\x2e\x30-\x5b\x5d-\x7e]"
_ANY_CHAR = r"[^\x00-\x1f\x7f/\\]"
_FOLDER = rf"(?!\.\.?/)(?:{_ASCII_CHAR}{{1,{MAX_NAME_CHARS}}}|{_ANY_CHAR}{{1,{MAX_NAME_CHARS_UNICODE}}})/"
_NOTEBOOK = (rf"(?:{_ASCII_CHAR}{{1,{MAX_NAME_CHARS - 6}}}|{_ANY_CHAR}{{1,{MAX_NAME_CHARS_UNICODE - 6}}})"
             r"\.ipynb")
NOTEBOOK_PATH_PATTERN = rf"^(?:{_FOLDER})*{_NOTEBOOK}$(?![\s\S])"


def _notebook_path(path: str) -> str:
    """A path in the Jupyter contents API that :data:`NOTEBOOK_PATH_PATTERN` allows; the
    refusal says which rule it breaks. The contents manager checks it again (root escapes,
    hidden files).

    >>> _notebook_path("reports/q3.ipynb")
    'reports/q3.ipynb'
    >>> _notebook_path("x" * 250 + ".ipynb")
    Traceback (most recent call last):
    ...
    ValueError: a name in the path may have at most 255 characters (63 when it has any that is not ASCII); one has 256
    >>> _notebook_path("é" * 60 + ".ipynb")
    Traceback (most recent call last):
    ...
    ValueError: a name in the path may have at most 255 characters (63 when it has any that is not ASCII); one has 66
    """
    parts = path.split("/")
    if re.search(r"[\x00-\x1f\x7f]", path):
        raise ValueError("must not hold control characters (a line end, a tab...)")
    if path.startswith("/") or "\\" in path or any(p in ("", ".", "..") for p in parts):
        raise ValueError("must be a relative path in your Jupyter folder, without '..' or empty parts")
    if not parts[-1].endswith(".ipynb") or parts[-1] == ".ipynb":
        raise ValueError("must name a notebook file (NAME.ipynb)")
    for part in parts:
        if len(part) > (MAX_NAME_CHARS if part.isascii() else MAX_NAME_CHARS_UNICODE):
            raise ValueError(f"a name in the path may have at most {MAX_NAME_CHARS} characters "
                             f"({MAX_NAME_CHARS_UNICODE} when it has any that is not ASCII); one has {len(part)}")
    if not re.match(NOTEBOOK_PATH_PATTERN, path):  # the description's rule is the rule
        raise ValueError("must be a relative notebook path in your Jupyter folder")
    return "/".join(parts)


NotebookPath = Annotated[Text, AfterValidator(_notebook_path), Field(json_schema_extra={"pattern": NOTEBOOK_PATH_PATTERN})]


class NewThread(_Input):
    """``POST threads``."""

    hint = "send {source?: a configured source name, title?: text}"

    source: Text | None = Field(None, max_length=4096)
    """A configured source's name (the default source when absent)."""
    title: Text | None = Field(None, max_length=1000)


class ThreadChange(_Input):
    """``PATCH threads/{id}``."""

    hint = "send {title: text}"

    title: Text = Field(max_length=1000, pattern=r"\S")
    """The thread's new title; not blank."""


class NewTurn(_Input):
    """``POST threads/{id}/turns``."""

    reasons = {"prompt": "empty_prompt"}
    hint = "send {prompt: text, source?: a configured source name, rerun?: true or false, notebook?: a .ipynb path}"

    prompt: Text = Field(pattern=r"\S")
    """What the user asks; not blank."""
    source: Text | None = Field(None, max_length=4096)
    """A configured source's name: the thread switches to it. Absent: the thread's own."""
    rerun: bool = False
    notebook: NotebookPath | None = Field(None, max_length=1024)
    """The user's notebook in their Jupyter folder that the turn works beside: its outline
    goes into the model's context, which reads the cells it needs by id."""

    def check_size(self, limits: ApiLimits) -> None:
        """Refuse (413) a prompt over the configured size."""
        size = len(self.prompt.encode("utf-8"))
        if size > limits.max_prompt_bytes:
            raise InvalidRequest(
                f"the prompt is {size} bytes; this server takes at most {limits.max_prompt_bytes}",
                status=413, reason="prompt_too_large",
                hint="shorten it, or attach the data as a source (c.AnalystApp.max_prompt_bytes sets the limit)",
            )


class ExportNotebook(_Input):
    """``POST threads/{id}/export``: where in the user's Jupyter folder to write the notebook."""

    hint = f"send {{path?: a notebook path in your Jupyter folder, e.g. {NOTEBOOK_FOLDER}/sales.ipynb}}"

    path: NotebookPath | None = Field(None, max_length=1024)
    """Relative to the Jupyter server's root; absent: ``analyst/{title}-{thread}.ipynb``."""


class VerifyNotebook(_Input):
    """``POST threads/{id}/verify``: the thread's notebook to re-execute and check."""

    hint = ("send {path?: the thread's exported notebook in your Jupyter folder, reanswer?: true to restate its "
            "answers on today's data}, or {} to check a fresh export")

    path: NotebookPath | None = Field(None, max_length=1024)
    """An export of this thread in the user's Jupyter folder; absent: a fresh export."""
    reanswer: bool = False
    """Also restate the answers' cited numbers with today's values (``verify --reanswer``); the
    re-answered notebook is written beside ``path`` (or the default export's path)."""


class VerifyAnswer(_Input):
    """``POST threads/{id}/verified-answers``: the turn whose answer a person accepts."""

    hint = ("send {turn?: a completed turn's number (default: the last), step?: the call_id of the query whose SQL "
            "is the gold SQL, name?: the query's file name}")

    turn: TurnNumber | None = None
    """The turn (default: the thread's last); it must have completed."""
    step: Text | None = Field(None, min_length=1, max_length=256)
    """The query step whose SQL becomes the gold SQL (default: the one the answer cites, else the turn's last)."""
    name: str | None = Field(None, pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,98}[A-Za-z0-9_-])?$")
    """The query's file name in ``queries/`` and the task's id (default: made from the question,
    numbered when taken); one already taken is refused (409)."""


class SaveDefinition(_Input):
    """``POST threads/{id}/definitions`` (and ``.../definitions/preview``): a turn's suggested
    metric, which a person saves to the team's context folder."""

    hint = "send {turn?: the turn's number (default: the last), index?: which of its suggestions (default 0), name?}"

    turn: TurnNumber | None = None
    """The turn that suggested it (default: the thread's last)."""
    index: Annotated[int, Field(ge=0, le=9), BeforeValidator(_whole)] = 0
    """Which of the turn's suggestions (its ``turn_ended``'s ``suggestions``, from 0)."""
    name: str | None = Field(None, pattern=r"^[a-z][a-z0-9_]{0,59}$")
    """The metric's name, instead of the one proposed; a name the folder has is refused (409)."""


#: A notebook cell's id as nbformat 4.5 allows it, and as proposed cells are named.
CELL_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"


def _cell_id(value: str) -> str:
    if not re.match(CELL_ID_PATTERN, value) or value.endswith("\n"):
        raise ValueError("must be a cell id: 1 to 64 letters, digits, '-' or '_'")
    return value


CellId = Annotated[Text, AfterValidator(_cell_id), Field(json_schema_extra={"pattern": CELL_ID_PATTERN})]


class DecideChanges(_Input):
    """``POST threads/{id}/proposals/{pid}/accept`` or ``.../reject``: the changes decided on."""

    hint = 'send {"cell_ids": [the change ids GET proposals lists]} or {"cell_ids": "all"}'

    cell_ids: Annotated[list[CellId], Field(min_length=1, max_length=100)] | Literal["all"]
    """The changes decided on, by their ids (a new cell's id, or the id of the cell changed), or
    ``"all"``: every pending change of the proposal (never a failed proposal's, on accept)."""

    def chosen(self) -> list[str] | None:
        """The change ids, or ``None`` for all of them."""
        return None if self.cell_ids == "all" else list(self.cell_ids)


class RevertTurn(_Input):
    """``POST threads/{id}/turns/{turn}/revert``: no fields."""

    hint = "send {} or no body"


class CancelTurn(_Input):
    """``POST threads/{id}/cancel``: no fields."""

    hint = "send {} or no body"


# ------------------------------------------------------------------ query parameters


class EventsQuery(_Input):
    """``GET threads/{id}/events?after=N`` (or the ``Last-Event-ID`` header)."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)  # e.g. ?token=...
    hint = "pass ?after=N, N the last event sequence number seen (0 for all)"

    after: SequenceNumber = 0


class ArtifactsQuery(_Input):
    """``GET threads/{id}/artifacts?type=T``."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)
    hint = "pass ?type= one of dataset, image, file, text, or no type for all"

    type: ArtifactType | None = None


class ContentQuery(_Input):
    """``GET artifacts/{id}/content?format=csv``: a dataset as CSV rather than Parquet."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)
    hint = "pass ?format=csv for a dataset as CSV, or no format for the artifact's own bytes"

    format: Literal["csv"] | None = None


def _calendar_day(text: str) -> str:
    # A date as ISO-8601 writes it, and one that exists (not 2026-02-30).
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        raise ValueError("must be a day as YYYY-MM-DD")
    try:
        date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text} is not a day of the calendar") from None
    return text


def _an_id(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", text):
        raise ValueError("must be a thread's id (thr_...)")
    return text


#: The schemas say what the validators check (a pattern of pydantic's own would be told as "blank").
_ID_SCHEMA = {"pattern": "^[A-Za-z0-9_-]{1,64}$"}


class BudgetQuery(_Input):
    """``GET budget?thread_id=T``: the caller's budgets, with those of one of their threads."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)
    hint = "pass ?thread_id= one of your threads' ids, or nothing for your own and the server's budgets"

    thread_id: Annotated[str, AfterValidator(_an_id), Field(json_schema_extra=_ID_SCHEMA)] | None = None


class SpendingQuery(_Input):
    """``GET budget/users?day=YYYY-MM-DD``: each user's spending on one day (default: today)."""

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)
    hint = "pass ?day=YYYY-MM-DD (a day in the budgets' time zone), or nothing for today"

    day: Annotated[str, AfterValidator(_calendar_day), Field(json_schema_extra={"format": "date"})] | None = None


class PreviewQuery(_Input):
    """``GET artifacts/{id}/preview?rows=N``."""

    model_config = ConfigDict(extra="ignore", strict=False, frozen=True)  # query text: "20" is 20
    hint = f"pass ?rows= a whole number from 0 to {MAX_PREVIEW_ROWS}"

    rows: int = Field(PREVIEW_ROWS, ge=0, le=MAX_PREVIEW_ROWS)


# ------------------------------------------------------------------ parsing

Input = TypeVar("Input", bound=_Input)


def parse_fields(model: type[Input], data: dict[str, Any]) -> Input:
    """``data`` as ``model``, or the :class:`InvalidRequest` naming the first bad field.

    >>> try:
    ...     parse_fields(EventsQuery, {"after": "-1e23"})
    ... except InvalidRequest as exc:
    ...     print(exc.reason, exc.message)
    invalid_after 'after': must be an event sequence number: a whole number from 0 (got '-1e23')
    """
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        field = str(error["loc"][0]) if error["loc"] else "body"
        if error["type"] == "extra_forbidden":
            known = ", ".join(model.model_fields) or "none"
            raise InvalidRequest(f"unknown field {shown(field)} (fields: {known})", reason="unknown_field",
                                 hint=model.hint, field=field) from None
        if error["type"] == "missing":
            message = f"{shown(field)} is required"
        else:
            said = {"string_pattern_mismatch": "must not be blank"}.get(error["type"]) or str(error["msg"])
            said = said.removeprefix("Value error, ")
            message = f"{shown(field)}: {said[:1].lower()}{said[1:]} (got {shown(error.get('input'))})"
        raise InvalidRequest(message, reason=model.reasons.get(field, f"invalid_{field}"), hint=model.hint,
                             field=field) from None


def parse_body(model: type[Input], raw: bytes) -> Input:
    """A JSON request body as ``model`` (no body: no fields).

    >>> parse_body(NewTurn, b'{"prompt": "revenue by region"}').prompt
    'revenue by region'
    >>> try:
    ...     parse_body(NewTurn, b'{"prompt": "x", "rerun": 1}')
    ... except InvalidRequest as exc:
    ...     print(exc.reason, exc.message)
    invalid_rerun 'rerun': input should be a valid boolean (got 1)
    """
    data: Any = {}
    if raw.strip():
        try:
            data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        except RecursionError:
            raise InvalidRequest("the body is nested too deeply", reason="invalid_json", hint=model.hint) from None
        except ValueError as exc:  # not UTF-8, not JSON, NaN, a number of 5,000 digits...
            raise InvalidRequest(f"the body is not JSON: {shown(str(exc), 120)[1:-1]}", reason="invalid_json",
                                 hint=model.hint) from None
    if not isinstance(data, dict):
        raise InvalidRequest(f"the body must be a JSON object, not {type(data).__name__}", reason="invalid_json",
                             hint=model.hint)
    return parse_fields(model, data)


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; Python's parser takes them unless told otherwise.
    raise ValueError(f"{name} is not a JSON value")


class BodyBuffer:
    """A request body read in chunks, kept up to a size and only counted past it.

    >>> buffer = BodyBuffer(limit=4)
    >>> buffer.add(b"abc"); buffer.add(b"de"); buffer.too_large, buffer.size
    (True, 5)
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self._chunks: list[bytes] = []

    @property
    def too_large(self) -> bool:
        """Whether more than ``limit`` bytes came."""
        return self.size > self.limit

    def add(self, chunk: bytes) -> None:
        """Take the next chunk (dropped once the body is over the limit)."""
        self.size += len(chunk)
        if self.too_large:
            self._chunks.clear()  # what came is never read: nothing is kept
        else:
            self._chunks.append(chunk)

    def body(self) -> bytes:
        """The whole body, or the 413 :class:`InvalidRequest` when it was too large."""
        if self.too_large:
            raise InvalidRequest(
                f"the request body is over {self.limit} bytes", status=413, reason="body_too_large",
                hint="send less (c.AnalystApp.max_body_bytes sets the limit)",
            )
        return b"".join(self._chunks)
