"""Schemathesis against a real Jupyter server with the extension and the scripted model: every
operation fuzzed from the OpenAPI description the server serves, all checks on, and the
stateful phase following the description's links (a new thread -> its turns, events,
notebook, artifacts -> an artifact's content and preview) so that ids are real.

No 500, no status the description does not list, no body or header it does not describe.
The runs are seeded (derandomized): the same cases every time, on every machine."""

from __future__ import annotations

from http.cookiejar import DefaultCookiePolicy

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig

from jupyter_analyst.server import openapi

from jupyter_analyst.testing import ScriptedModelServer, python_step, sql_step, text_step
from jupyter_analyst.testing.jupyter import JupyterServerProcess

SCRIPT = {"turns": [{"match": ".", "steps": [
    sql_step("SELECT region, COUNT(*) AS n FROM regions GROUP BY region ORDER BY region", "by_region"),
    python_step("print(len(by_region))"),
    text_step("[scripted model] counted"),
]}]}
FUZZ = settings(max_examples=25, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def api_server(tmp_path_factory, sales_db):
    root = tmp_path_factory.mktemp("fuzzed")
    with ScriptedModelServer(SCRIPT) as model, \
            JupyterServerProcess(root, sources={"sales": str(sales_db)}, model_url=model.base_url) as server:
        yield server


@pytest.fixture(scope="module")
def api_schema(api_server):
    auth = {"Authorization": f"token {api_server.token}"}
    # The token as the description's security scheme: the auth checks then probe with it
    # removed and with a wrong one (a header set for every request would override those).
    config = SchemathesisConfig.from_dict({"base-url": f"{api_server.url}/analyst/api",
                                           "auth": {"openapi": {"token": {"api_key": auth["Authorization"]}}}})
    return schemathesis.openapi.from_url(f"{api_server.url}/analyst/api/openapi.yaml", config=config, headers=auth)


#: Every operation of the description as the code generates it (the server serves the same).
#: Valid requests for each, and invalid ones for each that takes input.
CASES = [(path, method, mode) for path, item in openapi.build()["paths"].items() for method, op in item.items()
         for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
         if mode is GenerationMode.POSITIVE or "parameters" in op or "requestBody" in op]


@pytest.mark.parametrize("path, method, mode", CASES, ids=[f"{m.upper()} {p} {g.value}" for p, m, g in CASES])
def test_every_operation_keeps_to_its_description(api_schema, path, method, mode):
    operation = api_schema[path][method.upper()]

    @given(case=operation.as_strategy(generation_mode=mode))
    @FUZZ
    def fuzz(case):
        case.call_and_validate()

    fuzz()


def _cookieless() -> requests.Session:
    """A client that keeps no cookie: Jupyter answers a token with a login cookie, which would
    authenticate the next request whatever its Authorization header says."""
    session = requests.Session()
    session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
    return session


def test_the_stateful_walk_keeps_to_the_description(api_schema):
    class Walk(api_schema.as_state_machine()):
        def get_call_kwargs(self, case):
            return {"session": _cookieless()}

    Walk.run(settings=settings(FUZZ, max_examples=15, stateful_step_count=6))
