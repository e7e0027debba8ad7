"""The API's OpenAPI 3.1 description, generated from the code.

Paths and methods come from the routes (``routes.py``) and the handlers' methods; bodies,
query parameters and their limits from the request models (``inputs.py``); answers from
the reply models (``replies.py``); events from the event union (``events.py``); the
reason codes from the ``reason=`` the server's modules raise. What this module adds is the
prose: a summary per operation and which refusals it can answer.

``python -m jupyter_analyst.server.openapi --write`` (``make openapi``) writes
``openapi.yaml``, which the server serves; a test fails when the file is not what the code
generates.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import models_json_schema
from tornado import web

from .._version import __version__
from ..events import Event
from ..agent_state import AgentState
from ..artifacts.model import Artifact
from ..store import ThreadBusy
from . import inputs, replies
from .handlers import declared_methods
from .routes import routes

HERE = Path(__file__).resolve().parent
SPEC_FILE = HERE / "openapi.yaml"
REF = "#/components/schemas/{model}"

DESCRIPTION = """\
The analysis API of the jupyter-analyst Jupyter server extension. Every path is under
{base_url}analyst/api/ and needs a Jupyter token (`Authorization: token ...`) or session with
access to the `analyst` resource; requests that carry a token are not XSRF-checked, browser
requests with a session cookie are, like any Jupyter API. Errors are JSON objects
{message, reason, hint} (see Error; the reason codes are listed there). Threads and artifacts
belong to the user who made them: anyone else gets 404. Bodies and query parameters are
checked before anything runs: unknown fields, wrong types, blank or non-Unicode text, NaN
and numbers out of range are 400; a body over c.AnalystApp.max_body_bytes (default 1 MiB)
is 413 body_too_large. Sources are named, never given as paths: only the names in
c.AnalystApp.sources are accepted, unless c.AnalystApp.allow_any_source is set. A method a
path does not declare is 405, with an Allow header naming those it does.
"""


@dataclass(frozen=True)
class Operation:
    """What the code cannot say of one operation: its prose and the refusals it answers."""

    summary: str
    ok: type[BaseModel] | str | None = None
    """The 200/201 body's model, or a media type for bytes (``None``: the operation's model below)."""
    status: int = 200
    query: type[BaseModel] | None = None
    body: type[BaseModel] | None = None
    errors: dict[int, str] = field(default_factory=dict)
    """Status -> when it is answered (400/403/405 are added to every operation)."""
    description: str | None = None
    headers: tuple[dict[str, Any], ...] = ()
    """Request headers it reads."""
    answers_with: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Headers of the 200/201/202 answer, by name."""


_NOT_FOUND = "unknown, or another user's"
_LOCATION = {"description": "the new resource, to follow", "required": True,
             "schema": {"type": "string", "format": "uri-reference"}}
_RETRY_AFTER = {"description": "seconds to wait before asking again, while the resource is not finished",
                "required": False, "schema": {"type": "string", "pattern": "^[0-9]+$"}}
_TURNLESS = {404: _NOT_FOUND, 409: "the thread has no turn yet, so no notebook (notebook_not_found)"}

#: Every operation, by path (as routes.py has it, under the API's root) and method.
OPERATIONS: dict[tuple[str, str], Operation] = {
    ("/config", "get"): Operation(
        "What clients show of the server's set-up (the model's name and endpoint, never its key)",
        replies.ConfigReply),
    ("/sources", "get"): Operation(
        "Configured data sources (names and kinds, never paths or credentials)", replies.SourcesReply),
    ("/openapi.yaml", "get"): Operation("This description", "application/yaml"),
    ("/threads", "get"): Operation(
        "The caller's threads, the most recently active first (each with its source's configured name)",
        replies.ThreadsReply),
    ("/threads", "post"): Operation(
        "Create a thread on a configured source (the default one when `source` is absent)",
        replies.Thread, status=201, body=inputs.NewThread, errors={413: "body_too_large"}),
    ("/threads/{thread_id}", "get"): Operation(
        "A thread with its turns, whether a turn runs, its last event number and its live kernel",
        replies.ThreadReply, errors={404: _NOT_FOUND}),
    ("/threads/{thread_id}/turns", "post"): Operation(
        "Start a turn and stream its events",
        "text/event-stream", body=inputs.NewTurn,
        description="The answer is an event stream (`id:` the event's sequence number, `data:` one Event as "
                    "JSON) until the turn ends. Without `source` the turn runs on the thread's own source; a "
                    "configured source named here switches the thread to it. `notebook` attaches the "
                    "caller's notebook: its outline goes into the model's context, which reads the cells "
                    "it needs by id; a notebook that is not there (or is reached through a link) is "
                    "attached with a note saying so, and the turn runs.",
        errors={404: _NOT_FOUND,
                409: "a turn is already running on the thread (turn_in_progress)",
                413: "body_too_large, or prompt_too_large (c.AnalystApp.max_prompt_bytes)"}),
    ("/threads/{thread_id}/events", "get"): Operation(
        "The thread's events after ?after=N (or Last-Event-ID)",
        replies.EventsReply, query=inputs.EventsQuery,
        description="With `Accept: text/event-stream` the events come as a stream (as from POST turns), "
                    "which follows the running turn until it ends.",
        headers=({"name": "Last-Event-ID", "in": "header", "required": False,
                  "description": "the last sequence number seen, when ?after is absent",
                  "schema": {"type": "string", "pattern": "^[0-9]{0,19}$"}},),
        errors={404: _NOT_FOUND}),
    ("/threads/{thread_id}/cancel", "post"): Operation(
        "Stop the running turn; completed steps are kept and the turn ends as interrupted",
        replies.CancelReply, body=inputs.CancelTurn, errors={404: _NOT_FOUND}),
    ("/threads/{thread_id}/artifacts", "get"): Operation(
        "The thread's artifact inventory", replies.ArtifactsReply, query=inputs.ArtifactsQuery,
        errors={404: _NOT_FOUND}),
    ("/threads/{thread_id}/notebook", "get"): Operation(
        "The thread's audit notebook (nbformat 4); a source URL's password is masked in it",
        "application/x-ipynb+json", errors=_TURNLESS),
    ("/threads/{thread_id}/export", "post"): Operation(
        "Write the thread's audit notebook into the caller's Jupyter folder through the contents manager",
        replies.ExportReply, body=inputs.ExportNotebook,
        description="As `jupyter analyst export` writes it; a URL source's password is masked in it. The "
                    "default path is analyst/{title}-{thread}.ipynb.",
        errors={**_TURNLESS, 404: f"{_NOT_FOUND}, or `path` goes through a link (notebook_not_found)",
                409: f"{_TURNLESS[409]}, or the contents manager cannot write at `path` (path_not_writable: a "
                     "hidden name, a file where a folder should be, a folder where the notebook should be)"}),
    ("/threads/{thread_id}/verify", "post"): Operation(
        "Start re-executing the thread's notebook in the sandbox to compare each artifact's fingerprint",
        replies.Verification, status=202, body=inputs.VerifyNotebook,
        description="Answered at once (202) with the verification, `queued` or `running`: a re-execution takes "
                    "seconds. Follow it at `Location` (GET threads/{thread_id}/verifications/{verification_id}) "
                    "every `Retry-After` seconds until it is `done`, with the report of `jupyter analyst verify "
                    "--json`, or `failed`. `path`: an export of this thread in the caller's folder (else a fresh "
                    "export); it runs against the thread's own source. One verification of a thread runs at a "
                    "time; a few of a server's.",
        answers_with={"Location": _LOCATION, "Retry-After": {**_RETRY_AFTER, "required": True}},
        errors={**_TURNLESS, 404: f"{_NOT_FOUND}, or there is no notebook at `path` (notebook_not_found)",
                409: f"{_TURNLESS[409]}, `path` is not an export of this thread (notebook_of_another_thread) or "
                     "no notebook (notebook_unreadable), or a verification of the thread is under way "
                     "(verify_in_progress, its id in `verification_id`)"}),
    ("/threads/{thread_id}/verifications/{verification_id}", "get"): Operation(
        "A verification of the thread's notebook: how it goes, and its report once done",
        replies.Verification,
        description="While it is `queued` or `running`, `Retry-After` says when to ask again. The server keeps "
                    "its verifications in memory: the last finished ones, until it restarts.",
        answers_with={"Retry-After": _RETRY_AFTER},
        errors={404: "unknown thread or verification, or another user's (verification_not_found)"}),
    ("/threads/{thread_id}/steps/{call_id}/cell", "get"): Operation(
        "One SQL or Python step as a runnable code cell, as exported notebooks have it",
        replies.StepCell, errors={404: "unknown thread or step (step_not_found)"}),
    ("/threads/{thread_id}/state", "get"): Operation(
        "The thread's agent state (entities with dependencies, assumptions, expectations, items, "
        "active context, rolling summary)", AgentState, errors={404: _NOT_FOUND}),
    ("/artifacts/{artifact_id}", "get"): Operation("An artifact's metadata", Artifact, errors={404: _NOT_FOUND}),
    ("/artifacts/{artifact_id}/content", "get"): Operation(
        "An artifact's bytes, with its content type (checked against its fingerprint first)",
        "*/*", errors={404: _NOT_FOUND, 500: "the stored bytes do not match the fingerprint"}),
    ("/artifacts/{artifact_id}/preview", "get"): Operation(
        "The artifact as a notebook output shows it, for rendermime",
        replies.Preview, query=inputs.PreviewQuery,
        description="A dataset's first rows as text/html and text/plain, an image as its base64 bytes, the "
                    "start of a text file (the bytes are checked against the fingerprint first).",
        errors={404: _NOT_FOUND, 500: "the stored bytes do not match the fingerprint"}),
}

#: Operations whose answers name ids other operations take: OpenAPI links, so a client (or a
#: stateful fuzzer) goes from a new thread to its turns, events and artifacts with real ids.
_GIVES = {
    ("/threads", "post"): {"thread_id": "$response.body#/thread_id"},
    # An artifact, and the step that made it (its cell), in the thread asked about.
    ("/threads/{thread_id}/verify", "post"): {"thread_id": "$request.path.thread_id",
                                              "verification_id": "$response.body#/verification_id"},
    ("/threads/{thread_id}/artifacts", "get"): {"thread_id": "$request.path.thread_id",
                                                "artifact_id": "$response.body#/artifacts/0/artifact_id",
                                                "call_id": "$response.body#/artifacts/0/source_call_id"},
}

_PARAMETERS = {
    "thread_id": "a thread's id (thr_...)",
    "artifact_id": "an artifact's id",
    "call_id": "a tool call's id, as its events carry it",
    "verification_id": "a verification's id (ver_...), as POST threads/{thread_id}/verify answers it",
}


def api_paths() -> dict[str, tuple[type[web.RequestHandler], dict[str, str]]]:
    """Every path of the API (OpenAPI form) with its handler and its parameters' patterns."""
    out = {}
    for pattern, handler in routes(""):
        if not declared_methods(handler):
            continue  # the JSON 404 for any other path
        path = pattern.removeprefix("/analyst/api")
        params = dict(re.findall(r"\(\?P<(\w+)>(.+?)\)(?=/|$)", path))
        out[re.sub(r"\(\?P<(\w+)>.+?\)(?=/|$)", r"{\1}", path)] = (handler, params)
    return out


def reason_codes() -> list[str]:
    """Every reason code the server's modules can answer: the ``reason=`` they raise, the
    request models' per-field codes and the ``invalid_<field>`` of every other field."""
    found: set[str] = set()
    for module in sorted(HERE.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "reason":
                value = node.value  # reason="..." where an error is raised
            elif isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["reason"]:
                value = node.value  # reason = "..." on an error class
            else:
                continue
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(value.value)
    for model in _input_models():
        for name in model.model_fields:
            found.add(model.reasons.get(name, f"invalid_{name}"))
    found.update({"unknown_field", "invalid_json"})
    # Raised by the store (a turn running here or in another process) and answered 409.
    found.add(ThreadBusy.reason)
    return sorted(found)


def _input_models() -> list[type[inputs._Input]]:
    return sorted({op.body for op in OPERATIONS.values() if op.body} | {op.query for op in OPERATIONS.values() if op.query},
                  key=lambda m: m.__name__)


def _schemas() -> dict[str, Any]:
    """Component schemas: every model named by an operation, the event union and Error."""
    models = {op.ok for op in OPERATIONS.values() if isinstance(op.ok, type)} | {op.body for op in OPERATIONS.values() if op.body}
    models.add(replies.Error)
    pairs = [(m, "validation" if issubclass(m, inputs._Input) else "serialization")
             for m in sorted(models, key=lambda m: m.__name__)]
    _, top = models_json_schema(pairs, ref_template=REF)
    schemas = dict(top.get("$defs", {}))
    event = TypeAdapter(Event).json_schema(ref_template=REF, mode="serialization")
    schemas.update(event.pop("$defs", {}))
    schemas["Event"] = {"description": "Every event of a turn, told apart by `type`.", **event}
    schemas["Error"]["properties"]["reason"]["description"] = "One of: " + ", ".join(reason_codes())
    return {name: _untitled(schema) for name, schema in schemas.items()}


def _untitled(schema: Any) -> Any:
    """``schema`` without pydantic's titles ("Thread Id" for ``thread_id``): noise in generated
    client types. A property called ``title`` is kept: only schemas' own titles go."""
    if isinstance(schema, list):
        return [_untitled(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "patternProperties"):
            out[key] = {name: _untitled(sub) for name, sub in value.items()}
        else:
            out[key] = _untitled(value)
    return out


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": REF.format(model="Error")}}}}


#: One frame of an event stream: before OpenAPI 3.2 a stream's ``schema`` describes each event.
_SSE_FRAME = {
    "type": "object",
    "required": ["data"],
    "properties": {
        "id": {"type": "string", "description": "the event's sequence number (absent on a final error frame)"},
        "event": {"type": "string", "description": "the event's type, or `error` for a frame saying why the stream ended early"},
        "data": {"type": "string", "contentMediaType": "application/json",
                 "contentSchema": {"anyOf": [{"$ref": REF.format(model="Event")}, {"$ref": REF.format(model="Error")}]}},
    },
}


def _content(ok: type[BaseModel] | str) -> dict[str, Any]:
    if ok == "text/event-stream":
        return {ok: {"schema": _SSE_FRAME}}
    if ok == "*/*":  # bytes of any type: the artifact's own
        return {ok: {"schema": {"type": "string", "contentMediaType": "application/octet-stream"}}}
    if ok in ("application/yaml", "application/x-ipynb+json"):  # a document: this one, a notebook
        return {ok: {"schema": {"type": "object"}}}
    if isinstance(ok, str):
        return {ok: {"schema": {"type": "string"}}}
    return {"application/json": {"schema": {"$ref": REF.format(model=ok.__name__)}}}


_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    schema = model.model_json_schema(mode="validation")
    out = []
    for name, prop in schema.get("properties", {}).items():
        # Constraints pydantic leaves under their own names when a validator runs first.
        prop = {_BOUNDS.get(k, k): v for k, v in prop.items() if k != "title"}
        description = prop.pop("description", None) or (model.model_fields[name].description or "")
        # Query text is digits for a number: the models read "20" as 20.
        out.append({"name": name, "in": "query", "required": name in schema.get("required", []),
                    "description": description or model.hint, "schema": prop})
    return out


def _operation(path: str, method: str, op: Operation, params: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"operationId": _operation_id(path, method), "summary": op.summary}
    if op.description:
        out["description"] = op.description
    parameters = [{"name": name, "in": "path", "required": True, "description": _PARAMETERS[name],
                   "schema": {"type": "string", "pattern": f"^{pattern}$"}} for name, pattern in params.items()]
    if op.query is not None:
        parameters += _query_parameters(op.query)
    parameters += list(op.headers)
    if parameters:
        out["parameters"] = parameters
    if op.body is not None:
        needed = any(f.is_required() for f in op.body.model_fields.values())
        out["requestBody"] = {"required": needed, "description": op.body.hint,
                              "content": {"application/json": {"schema": {"$ref": REF.format(model=op.body.__name__)}}}}
    responses: dict[str, Any] = {str(op.status): {"description": "Accepted" if op.status == 202 else "OK",
                                                  "content": _content(op.ok)}}
    if op.answers_with:
        responses[str(op.status)]["headers"] = op.answers_with
    links = _links(_GIVES.get((path, method), {}))
    if links:
        responses[str(op.status)]["links"] = links
    refusals = {400: "the body or a parameter is not what the call takes",
                401: "no credentials (a token or a session)",
                403: "not allowed the analyst resource (or, for a browser, the XSRF check failed)",
                **op.errors}
    for status in sorted(refusals):
        responses[str(status)] = _error(refusals[status])
    # How to authenticate (RFC 9110), on every 401.
    responses["401"]["headers"] = {"WWW-Authenticate": {
        "description": "the scheme to authenticate with: `token`", "required": True,
        "schema": {"type": "string", "pattern": "^token "}}}
    out["responses"] = responses
    return out


def _links(given: dict[str, str]) -> dict[str, Any]:
    """Links to every operation whose path parameters are all among ``given``."""
    out = {}
    for path, (handler, params) in api_paths().items():
        if not params or not set(params) <= set(given):
            continue
        for method in declared_methods(handler):
            target = _operation_id(path, method)
            out[target] = {"operationId": target, "parameters": {name: given[name] for name in params}}
    return out


def _operation_id(path: str, method: str) -> str:
    words = [w for w in re.split(r"[/{}._-]+", path) if w]
    return method + "".join(w[:1].upper() + w[1:] for w in words)


def build() -> dict[str, Any]:
    """The description, as a plain mapping."""
    paths: dict[str, Any] = {}
    for path, (handler, params) in api_paths().items():
        item: dict[str, Any] = {}
        for method in declared_methods(handler):
            op = OPERATIONS.get((path, method))
            if op is None:
                raise LookupError(f"{handler.__name__}.{method} ({method.upper()} {path}) has no entry in OPERATIONS")
            item[method] = _operation(path, method, op, params)
        paths[path] = item
    unused = set(OPERATIONS) - {(p, m) for p, item in paths.items() for m in item}
    if unused:
        raise LookupError(f"OPERATIONS names what no route answers: {sorted(unused)}")
    return {
        "openapi": "3.1.0",
        "info": {"title": "jupyter-analyst API", "version": __version__, "description": " ".join(DESCRIPTION.split())},
        "servers": [{"url": "/analyst/api", "description": "under the Jupyter server's base URL"}],
        "security": [{"token": []}],
        "paths": paths,
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {"token": {"type": "apiKey", "in": "header", "name": "Authorization",
                                          "description": "`token <the Jupyter server's token>`"}},
        },
    }


_HEADER = "# Generated by `python -m jupyter_analyst.server.openapi --write` (make openapi): do not edit.\n"


def render(doc: dict[str, Any] | None = None) -> str:
    """The description as YAML."""
    return _HEADER + yaml.safe_dump(build() if doc is None else doc, sort_keys=False, allow_unicode=True, width=100)


def for_server(doc: dict[str, Any], sources: list[str] | None) -> dict[str, Any]:
    """``doc`` as one server serves it: a source is one of its configured names (``None``:
    any source is allowed, ``c.AnalystApp.allow_any_source``)."""
    if sources is None:
        return doc
    for model in (inputs.NewThread, inputs.NewTurn):
        choices = doc["components"]["schemas"][model.__name__]["properties"]["source"]["anyOf"]
        text = next(c for c in choices if c.get("type") == "string")
        text["enum"] = list(sources)
        text["description"] = "a source configured on this server"
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jupyter_analyst.server.openapi", description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {SPEC_FILE.name} (else print it)")
    parser.add_argument("--check", action="store_true", help=f"exit 1 when {SPEC_FILE.name} is not current")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if SPEC_FILE.read_text(encoding="utf-8") != text:
            print(f"{SPEC_FILE} is not current: run `make openapi`", file=sys.stderr)
            return 1
        return 0
    if args.write:
        SPEC_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {SPEC_FILE}", file=sys.stderr)
        return 0
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
