"""Schemathesis against a real Jupyter server with the extension and the scripted model: every
operation fuzzed from the OpenAPI description the server serves, all checks on, and the
stateful phase following the description's links (a new thread -> its turns, events,
notebook, artifacts, verifications -> an artifact's content and preview) so that ids are real.
Through the pytest plugin, operation by operation, and through the stock ``schemathesis``
command as anyone would run it against a server.

No 500, no status the description does not list, no body or header it does not describe.
The runs are seeded (derandomized): the same cases every time, on every machine. No request
has a deadline a loaded machine could miss: every operation answers at once or streams its
progress, and a request is given up on only when it hangs (REQUEST_TIMEOUT_S)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from http.cookiejar import DefaultCookiePolicy
from pathlib import Path

import pytest
import requests
import schemathesis
from hypothesis import Phase, HealthCheck, assume, given, settings
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig

from jupyter_analyst.server.openapi import document as openapi
from jupyter_analyst.server.routes import routes

from jupyter_analyst.testing import ScriptedModelServer, python_step, sql_step, text_step
from jupyter_analyst.testing.servers.jupyter import JupyterServerProcess

SCRIPT = {"turns": [{"match": ".", "steps": [
    sql_step("SELECT region, COUNT(*) AS n FROM regions GROUP BY region ORDER BY region", "by_region"),
    python_step("print(len(by_region))"),
    text_step("[scripted model] counted"),
]}]}
FUZZ = settings(max_examples=25, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
#: Seconds after which a request is taken to hang. Not a measure of speed: an event stream is
#: read until its turn ends, and anything else answers in milliseconds when the machine is idle.
REQUEST_TIMEOUT_S = 120
#: Kernels kept between turns: the fuzzers start many turns, whose kernels need not all live.
SERVER_OPTIONS = ["--AnalystApp.max_kernels=2", "--AnalystApp.max_kernels_per_user=2"]


@contextmanager
def fuzzed_server(root: Path, sales_db: Path):
    with ScriptedModelServer(SCRIPT) as model, \
            JupyterServerProcess(root, sources={"sales": str(sales_db)}, model_url=model.base_url,
                                 extra=SERVER_OPTIONS) as server:
        yield server


@pytest.fixture(scope="module")
def api_server(tmp_path_factory, sales_db):
    with fuzzed_server(tmp_path_factory.mktemp("fuzzed"), sales_db) as server:
        yield server


@pytest.fixture(scope="module")
def api_schema(api_server):
    auth = {"Authorization": f"token {api_server.token}"}
    # The token as the description's security scheme: the auth checks then probe with it
    # removed and with a wrong one (a header set for every request would override those).
    config = SchemathesisConfig.from_dict({"base-url": f"{api_server.url}/analyst/api",
                                           "request-timeout": REQUEST_TIMEOUT_S,
                                           "auth": {"openapi": {"token": {"api_key": auth["Authorization"]}}}})
    return schemathesis.openapi.from_url(f"{api_server.url}/analyst/api/openapi.yaml", config=config, headers=auth)


#: Every operation of the description as the code generates it (the server serves the same).
#: Valid requests for each, and invalid ones for each that takes input.
CASES = [(path, method, mode) for path, item in openapi.build(routes(""))["paths"].items() for method, op in item.items()
         for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
         if mode is GenerationMode.POSITIVE or "parameters" in op or "requestBody" in op]


@pytest.mark.parametrize("path, method, mode", CASES, ids=[f"{m.upper()} {p} {g.value}" for p, m, g in CASES])
def test_every_operation_keeps_to_its_description(api_schema, path, method, mode):
    operation = api_schema[path][method.upper()]

    @given(case=operation.as_strategy(generation_mode=mode))
    @FUZZ
    def fuzz(case):
        # Tornado's HTTP layer answers a Transfer-Encoding it does not support itself, with an
        # empty 400, before any handler runs: nothing of the API's is tested by such a request.
        assume(not any(name.lower() == "transfer-encoding" for name in case.headers or {}))
        case.call_and_validate()

    fuzz()


def _cookieless() -> requests.Session:
    """A client that keeps no cookie: Jupyter answers a token with a login cookie, which would
    authenticate the next request whatever its Authorization header says."""
    session = requests.Session()
    session.cookies.set_policy(DefaultCookiePolicy(allowed_domains=[]))
    return session


def _follow_until_finished(response: requests.Response, case) -> None:
    """Follow a 202's ``Location`` until the resource answers without ``Retry-After``."""
    if response.status_code != 202:
        return
    location = response.headers["Location"]
    url = requests.compat.urljoin(response.url, location)
    headers = {"Authorization": response.request.headers["Authorization"]}
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    with _cookieless() as session:
        while True:
            state = session.get(url, headers=headers, timeout=REQUEST_TIMEOUT_S)
            assert state.status_code == 200, (location, state.status_code, state.text)
            if "Retry-After" not in state.headers:
                return
            assert time.monotonic() < deadline, f"{location} still not finished after {REQUEST_TIMEOUT_S} s"
            # The server's own pacing would be a second per poll; a verification of this
            # thread's few steps ends within a few polls of a tenth of one.
            time.sleep(0.1)


def test_the_stateful_walk_keeps_to_the_description(api_schema):
    class Walk(api_schema.as_state_machine()):
        def get_call_kwargs(self, case):
            return {"session": _cookieless(), "timeout": REQUEST_TIMEOUT_S}

        def after_call(self, response, case):
            # A walk is replayed from its recorded choices, so the server must answer the same
            # steps the same way: work the walk started in the background (a verification,
            # 202) is followed to its end before the next step, or whether that step finds it
            # running (409) would depend on the machine's speed.
            _follow_until_finished(response, case)

    # No shrinking: a failing walk is reported as it ran. A shrink replays the walk against a
    # server whose state (threads, verifications still running or done) has moved on, and
    # hypothesis then reports the replay's divergence, not the failure.
    Walk.run(settings=settings(FUZZ, max_examples=15, stateful_step_count=6,
                               phases=[Phase.explicit, Phase.reuse, Phase.generate]))


def test_the_stock_schemathesis_command_finds_nothing(tmp_path, sales_db):
    """``schemathesis run`` on the description a fresh server serves, every check, every phase
    (coverage, fuzzing, stateful), as a person would run it: the token as a header (its auth
    probes send requests without it and with a wrong one), a bounded number of examples, a
    fixed seed. It exits 0 only when no check failed and no request errored."""
    command = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or shutil.which("schemathesis")
    assert command, "the schemathesis command is not installed (pip install -e '.[test]')"
    report = tmp_path / "schemathesis.xml"
    with fuzzed_server(tmp_path / "server", sales_db) as server:
        run = subprocess.run(
            [command, "--no-color", "run", f"{server.url}/analyst/api/openapi.yaml", "--checks", "all",
             "--header", f"Authorization: token {server.token}", "--max-examples", "20", "--seed", "1",
             "--workers", "1", "--request-timeout", str(REQUEST_TIMEOUT_S),
             "--report", "junit", "--report-junit-path", str(report)],
            # Its own folder: no schemathesis.toml of the repository's, no files left in it.
            cwd=tmp_path, capture_output=True, text=True, timeout=900,
        )
    said = run.stdout[-20_000:] + run.stderr[-5_000:]
    assert run.returncode == 0, said
    suite = ET.parse(report).getroot()
    counts = {key: sum(int(s.get(key, 0)) for s in suite.iter("testsuite")) for key in ("failures", "errors")}
    assert counts == {"failures": 0, "errors": 0}, said
    # Every operation was run (but the description's own, which the command leaves out), and
    # the stateful phase.
    ran = {case.get("name") for case in suite.iter("testcase")}
    described = {f"{method.upper()} {path}" for path, item in openapi.build(routes(""))["paths"].items() for method in item}
    assert ran == described - {"GET /openapi.yaml"} | {"Stateful tests"}, said
