"""The OpenAPI description: generated from the code, valid OpenAPI 3.1, served as generated,
and true of a real server (its constraints, its statuses, its 405s)."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
import yaml
from openapi_spec_validator import validate
from tornado.httpclient import HTTPClientError

from jupyter_analyst.server.methods import declared_methods
from jupyter_analyst.server.openapi import command
from jupyter_analyst.server.openapi import document as openapi
from jupyter_analyst.server.routes import routes
from jupyter_analyst.testing import ScriptedModelServer, text_step
from jupyter_analyst.testing.servers.jupyter import analyst_server_config


@pytest.fixture(scope="module")
def spec() -> dict:
    return openapi.build(routes(""))


@pytest.fixture(scope="module")
def scripted():
    with ScriptedModelServer({"turns": [{"match": ".", "steps": [text_step("[scripted model] ok")]}]}) as server:
        yield server


@pytest.fixture
def jp_server_config(tmp_path, sales_db, scripted):
    return analyst_server_config(tmp_path / "ws", {"sales": str(sales_db)}, scripted.base_url)


async def call(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return await jp_fetch("analyst", "api", *path, method=method, **kw)


def test_the_description_is_valid_openapi_3_1(spec):
    assert spec["openapi"] == "3.1.0"
    validate(spec)


def test_the_shipped_file_is_what_the_code_generates():
    """A route, a model or a reason changed without `make openapi` fails here."""
    shipped = openapi.SPEC_FILE.read_text(encoding="utf-8")
    assert shipped == openapi.render(openapi.build(routes(""))), "openapi.yaml is not current: run `make openapi`"


def test_every_route_and_method_is_described_with_its_path_parameters(spec):
    paths = openapi.api_paths(routes(""))
    assert set(paths) == set(spec["paths"])
    for path, (handler, params) in paths.items():
        described = spec["paths"][path]
        assert set(described) == set(declared_methods(handler)), path
        for method, op in described.items():
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert declared == set(params) == set(re.findall(r"{(\w+)}", path)), (path, method)
            # Every operation answers its refusals with the Error body.
            for status in ("400", "403"):
                ref = op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
                assert ref == "#/components/schemas/Error"


def test_every_event_type_has_its_own_schema_in_the_union(spec):
    from typing import get_args

    from jupyter_analyst.events import Event

    members = get_args(get_args(Event)[0])
    union = spec["components"]["schemas"]["Event"]
    assert union["discriminator"]["propertyName"] == "type"
    assert len(union["oneOf"]) == len(members)
    for model in members:
        assert model.__name__ in spec["components"]["schemas"]
        kind = model.model_fields["type"].default
        assert union["discriminator"]["mapping"][kind] == f"#/components/schemas/{model.__name__}"


def test_the_reason_codes_the_server_raises_are_listed(spec):
    listed = spec["components"]["schemas"]["Error"]["properties"]["reason"]["description"]
    for reason in ("turn_in_progress", "thread_not_found", "empty_prompt", "body_too_large", "unknown_source",
                   "notebook_not_found", "step_not_found", "invalid_after", "unknown_field"):
        assert reason in listed


def _body_schema(spec: dict, path: str, method: str) -> dict:
    ref = spec["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    schema = dict(spec["components"]["schemas"][ref.rsplit("/", 1)[1]])
    return {**schema, "$defs": spec["components"]["schemas"]}


BODIES = {
    ("/threads", "post"): [{}, {"title": "t"}, {"title": 3}, {"nope": 1}, {"source": "sales"}, {"title": "x" * 1001}],
    ("/threads/{thread_id}/turns", "post"): [{"prompt": ""}, {"prompt": "   "}, {"prompt": "hi", "rerun": "yes"},
                                             {}, {"prompt": "hi", "extra": 1}, {"prompt": 5}],
    ("/threads/{thread_id}/cancel", "post"): [{}, {"x": 1}],
}


async def test_the_server_refuses_exactly_what_the_schema_refuses(jp_fetch, spec):
    """Each body is judged the same by the description and by the server: schema-valid bodies
    are taken, schema-invalid ones are 400 (prompt "" included, the case the schema once let by)."""
    thread = json.loads((await call(jp_fetch, "threads", method="POST", body={"source": "sales"})).body)
    disagreements = []
    for (path, method), bodies in BODIES.items():
        validator = jsonschema.Draft202012Validator(_body_schema(spec, path, method))
        url = path.replace("{thread_id}", thread["thread_id"]).strip("/").split("/")
        for body in bodies:
            schema_ok = validator.is_valid(body)
            try:
                response = await call(jp_fetch, *url, method=method.upper(), body=body)
                status = response.code
                if path.endswith("/turns"):
                    await call(jp_fetch, *url[:-1], "cancel", method="POST", body={})
            except HTTPClientError as exc:
                status = exc.code
            if schema_ok != (status < 400):
                disagreements.append((path, body, schema_ok, status))
    assert disagreements == []


async def test_an_undeclared_method_is_405_with_the_allowed_ones(jp_fetch):
    thread = json.loads((await call(jp_fetch, "threads", method="POST", body={"source": "sales"})).body)
    for path, method, expected in [(("threads",), "DELETE", "GET, POST"),
                                   (("threads", thread["thread_id"]), "PUT", "GET, PATCH, DELETE"),
                                   (("threads", thread["thread_id"], "cancel"), "DELETE", "POST")]:
        with pytest.raises(HTTPClientError) as info:
            await call(jp_fetch, *path, method=method, body={} if method == "PUT" else None)
        assert info.value.code == 405
        assert info.value.response.headers["Allow"] == expected
        error = json.loads(info.value.response.body)
        assert {"message", "reason", "hint"} <= set(error)


async def test_the_server_serves_the_generated_description_with_its_source_names(jp_fetch):
    response = await call(jp_fetch, "openapi.yaml")
    assert response.headers["Content-Type"] == "application/yaml"
    served = response.body.decode()
    assert served == openapi.render(openapi.for_server(openapi.build(routes("")), ["sales"]))
    doc = yaml.safe_load(served)
    validate(doc)
    source = doc["components"]["schemas"]["NewTurn"]["properties"]["source"]["anyOf"]
    assert {"type": "string", "maxLength": 4096, "enum": ["sales"],
            "description": "a source configured on this server"} in source


async def test_any_other_api_path_is_a_json_404(jp_fetch):
    for path in [("nope",), ("threads", "thr_1", "nope"), ("artifacts", "a%2Fb")]:
        with pytest.raises(HTTPClientError) as info:
            await call(jp_fetch, *path)
        assert info.value.code == 404
        assert json.loads(info.value.response.body)["reason"] in ("not_found", "artifact_not_found")


async def test_a_thread_without_a_turn_has_nothing_to_export_or_verify_409(jp_fetch):
    thread = json.loads((await call(jp_fetch, "threads", method="POST", body={"source": "sales"})).body)
    for action in ("export", "verify"):
        with pytest.raises(HTTPClientError) as info:
            await call(jp_fetch, "threads", thread["thread_id"], action, method="POST", body={})
        assert info.value.code == 409
        assert json.loads(info.value.response.body)["reason"] == "notebook_not_found"


def test_the_command_checks_and_writes(tmp_path, monkeypatch, capsys):
    assert command.main(["--check"]) == 0
    stale = tmp_path / "openapi.yaml"
    stale.write_text("openapi: 3.0.0\n")
    monkeypatch.setattr(command, "SPEC_FILE", stale)
    assert command.main(["--check"]) == 1
    assert "make openapi" in capsys.readouterr().err
    assert command.main(["--write"]) == 0 and stale.read_text() == openapi.render(openapi.build(routes("")))


async def test_a_bad_last_event_id_is_refused_even_beside_after(jp_fetch):
    thread = json.loads((await call(jp_fetch, "threads", method="POST", body={"source": "sales"})).body)
    with pytest.raises(HTTPClientError) as info:
        await call(jp_fetch, "threads", thread["thread_id"], "events", params={"after": "0"},
                   headers={"Last-Event-ID": "\u0084"})
    assert info.value.code == 400 and json.loads(info.value.response.body)["reason"] == "invalid_after"


def test_links_lead_from_a_new_thread_and_its_artifacts_to_the_operations_taking_their_ids(spec):
    created = spec["paths"]["/threads"]["post"]["responses"]["201"]["links"]
    assert created["postThreadsThreadIdTurns"]["parameters"] == {"thread_id": "$response.body#/thread_id"}
    assert {"getThreadsThreadIdEvents", "getThreadsThreadIdArtifacts", "postThreadsThreadIdVerify"} <= set(created)
    listed = spec["paths"]["/threads/{thread_id}/artifacts"]["get"]["responses"]["200"]["links"]
    assert listed["getArtifactsArtifactIdPreview"]["parameters"] == {
        "artifact_id": "$response.body#/artifacts/0/artifact_id"}
    assert listed["getThreadsThreadIdStepsCallIdCell"]["parameters"] == {
        "thread_id": "$request.path.thread_id", "call_id": "$response.body#/artifacts/0/source_call_id"}
    operation_ids = {op["operationId"] for item in spec["paths"].values() for op in item.values()}
    for item in spec["paths"].values():
        for op in item.values():
            for response in op["responses"].values():
                assert {link["operationId"] for link in response.get("links", {}).values()} <= operation_ids


def test_a_verification_is_accepted_at_once_and_followed_by_its_link(spec):
    verify = spec["paths"]["/threads/{thread_id}/verify"]["post"]["responses"]
    assert "200" not in verify
    accepted = verify["202"]
    assert accepted["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/Verification"
    assert accepted["headers"]["Location"]["required"] and accepted["headers"]["Retry-After"]["required"]
    follow = accepted["links"]["getThreadsThreadIdVerificationsVerificationId"]
    assert follow["parameters"] == {"thread_id": "$request.path.thread_id",
                                    "verification_id": "$response.body#/verification_id"}
    verification = spec["components"]["schemas"]["Verification"]
    assert verification["properties"]["status"]["enum"] == ["queued", "running", "done", "failed"]
    assert "verify_in_progress" in verify["409"]["description"]


def test_every_401_says_how_to_authenticate(spec):
    for path, item in spec["paths"].items():
        for method, op in item.items():
            header = op["responses"]["401"]["headers"]["WWW-Authenticate"]
            assert header["required"] and header["schema"]["pattern"] == "^token ", (path, method)
