"""The API's OpenAPI 3.1 description, built from the routes it is handed.

Paths and methods come from the routes (``routes.py``) and the handlers' methods; bodies,
query parameters and their limits from the request models (``inputs.py``); answers from
the reply models (``replies.py``); events from the event union (``events.py``); the
reason codes from the ``reason=`` the server's modules raise. The prose is in
``operations.py``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import GenerateJsonSchema, models_json_schema
from tornado import web

from ..._version import __version__
from ...events import Event
from ...store import ThreadBusy
from .. import inputs, replies
from ..methods import declared_methods
from .operations import DESCRIPTION, GIVES, OPERATIONS, PARAMETERS, Operation

#: The server package, whose modules' ``reason=`` are the API's reason codes.
SERVER = Path(__file__).resolve().parents[1]
#: The description the server serves, written by ``python -m jupyter_analyst.server.openapi --write``.
SPEC_FILE = SERVER / "openapi.yaml"
REF = "#/components/schemas/{model}"

#: URL patterns and their handlers, as ``routes.routes(base)`` gives them.
Routes = Sequence[tuple[str, type[web.RequestHandler]]]
#: Each path (OpenAPI form) with its handler and its parameters' patterns.
Paths = dict[str, tuple[type[web.RequestHandler], dict[str, str]]]



def api_paths(routes: Routes) -> dict[str, tuple[type[web.RequestHandler], dict[str, str]]]:
    """Every path of ``routes`` (OpenAPI form, under the API's root) with its handler and its
    parameters' patterns."""
    out = {}
    for pattern, handler in routes:
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
    for module in sorted(SERVER.rglob("*.py")):
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


class _EveryFieldSent(GenerateJsonSchema):
    """Event schemas as the server sends events: the store and the stream send each event's
    ``model_dump_json()``, every field with its default included, so every field is required
    (a client's types then say what it reads, not what it could leave out when sending)."""

    def field_is_required(self, field: Any, total: bool) -> bool:
        return self.mode == "serialization" or super().field_is_required(field, total)

    def get_default_value(self, schema: Any) -> Any:
        # An empty list or dict made by its factory is a default a client can fall back to,
        # as a literal ``[]`` is (a factory is only how a mutable default is written).
        factory = schema.get("default_factory")
        if factory in (list, dict) and not schema.get("default_factory_takes_data"):
            return factory()
        return super().get_default_value(schema)


def _schemas() -> dict[str, Any]:
    """Component schemas: every model named by an operation, the event union, Error, and what
    each tool's result holds (``ToolResults``)."""
    # Imported here, not with the module: serving the description reads the shipped file,
    # and a server's start imports no tool.
    from ...agent import ToolError, result_models_by_tool

    tools = result_models_by_tool()
    models = {op.ok for op in OPERATIONS.values() if isinstance(op.ok, type)} | {op.body for op in OPERATIONS.values() if op.body}
    models |= {replies.Error, ToolError, *tools.values()}
    pairs = [(m, "validation" if issubclass(m, inputs._Input) else "serialization")
             for m in sorted(models, key=lambda m: m.__name__)]
    _, top = models_json_schema(pairs, ref_template=REF)
    schemas = dict(top.get("$defs", {}))
    schemas["ToolResults"] = {
        "description": "What the `result` of a `tool_result` event holds, by its `tool`, when its `status` is "
                       "`ok` (and when a tool that ran says what it did before it failed); a refused or failed "
                       "call's result is a `ToolError`. The event carries it as free-form JSON.",
        "type": "object",
        "properties": {name: {"$ref": REF.format(model=model.__name__)} for name, model in tools.items()},
        "required": list(tools),
    }
    event = TypeAdapter(Event).json_schema(ref_template=REF, mode="serialization", schema_generator=_EveryFieldSent)
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


def _operation(path: str, method: str, op: Operation, params: dict[str, str], paths: Paths) -> dict[str, Any]:
    out: dict[str, Any] = {"operationId": _operation_id(path, method), "summary": op.summary}
    if op.description:
        out["description"] = op.description
    parameters = [{"name": name, "in": "path", "required": True, "description": PARAMETERS[name],
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
    links = _links(GIVES.get((path, method), {}), paths)
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


def _links(given: dict[str, str], paths: Paths) -> dict[str, Any]:
    """Links to every operation of ``paths`` whose path parameters are all among ``given``."""
    out = {}
    for path, (handler, params) in paths.items():
        if not params or not set(params) <= set(given):
            continue
        for method in declared_methods(handler):
            target = _operation_id(path, method)
            out[target] = {"operationId": target, "parameters": {name: given[name] for name in params}}
    return out


def _operation_id(path: str, method: str) -> str:
    words = [w for w in re.split(r"[/{}._-]+", path) if w]
    return method + "".join(w[:1].upper() + w[1:] for w in words)


def build(routes: Routes) -> dict[str, Any]:
    """The description of the API that ``routes`` serve (as ``routes.routes(base)`` gives
    them), as a plain mapping: a pure function of the routes, their handlers and the models."""
    described = api_paths(routes)
    paths: dict[str, Any] = {}
    for path, (handler, params) in described.items():
        item: dict[str, Any] = {}
        for method in declared_methods(handler):
            op = OPERATIONS.get((path, method))
            if op is None:
                raise LookupError(f"{handler.__name__}.{method} ({method.upper()} {path}) has no entry in OPERATIONS")
            item[method] = _operation(path, method, op, params, described)
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


def render(doc: dict[str, Any]) -> str:
    """The description ``doc`` as YAML, as the server serves it and ``openapi.yaml`` holds it."""
    return _HEADER + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


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
