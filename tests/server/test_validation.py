"""What the server accepts: only configured sources, a thread's own source, bounded prompts and
bodies, and for every bad input a 4xx JSON error (never a 500). A real Jupyter server, real
DuckDB files and the scripted model over HTTP; no kernel is needed (no Python step runs)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from tornado.httpclient import HTTPClientError

from jupyter_analyst.testing.servers.jupyter import analyst_server_config
from jupyter_analyst.events import parse_events
from jupyter_analyst.testing import ScriptedModelServer, sql_step, text_step

SCRIPT = {"turns": [
    {"match": "widgets", "steps": [sql_step("SELECT COUNT(*) AS n FROM widgets", "widget_count"), text_step()]},
    {"match": ".", "steps": [text_step()]},
]}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    """A second configured source, with a table the sample sales database does not have."""
    path = tmp_path_factory.mktemp("warehouse") / "warehouse.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE widgets AS SELECT range AS widget_id FROM range(3)")
    return path


@pytest.fixture(scope="module")
def scripted():
    with ScriptedModelServer(SCRIPT) as server:
        yield server


@pytest.fixture
def analyst_settings() -> dict:
    """Extra ``c.AnalystApp`` settings; a test overrides it with ``parametrize``."""
    return {}


@pytest.fixture
def jp_server_config(tmp_path, sales_db, warehouse, scripted, analyst_settings):
    # "sales" is first, so the default; the tests give threads "warehouse".
    return analyst_server_config(tmp_path / "ws", {"sales": str(sales_db), "warehouse": str(warehouse)},
                                 scripted.base_url, **analyst_settings)


@pytest.fixture
def service(jp_serverapp):
    return jp_serverapp.web_app.settings["jupyter_analyst"]


async def call(jp_fetch, *path, method="GET", body=None, **kw):
    if body is not None:
        kw["body"] = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return await jp_fetch("analyst", "api", *path, method=method, **kw)


async def as_json(jp_fetch, *path, **kw):
    return json.loads((await call(jp_fetch, *path, **kw)).body)


async def refused(jp_fetch, *path, **kw) -> tuple[int, dict]:
    """The status and JSON error body of a request that must fail."""
    with pytest.raises(HTTPClientError) as info:
        await call(jp_fetch, *path, **kw)
    response = info.value.response
    assert response is not None, f"no response to {path}: {info.value}"
    assert response.headers["Content-Type"].startswith("application/json")
    return info.value.code, json.loads(response.body)


async def thread_on(jp_fetch, source: str | None) -> dict:
    return await as_json(jp_fetch, "threads", method="POST", body={"source": source} if source else {})


# ------------------------------------------------------------------ sources are an allow-list


@pytest.mark.parametrize("name", ["/etc/passwd", "../sales.duckdb", "sqlite:////etc/passwd", ":memory:", "SALES", ""])
async def test_a_thread_on_an_unconfigured_source_is_refused_with_the_names(jp_fetch, service, name):
    code, error = await refused(jp_fetch, "threads", method="POST", body={"source": name})
    assert (code, error["reason"]) == (400, "unknown_source")
    assert error["sources"] == ["sales", "warehouse"]
    assert "sales, warehouse" in error["hint"] and error["message"]
    assert service.workspace.store.list_threads() == []


async def test_a_configured_path_is_not_a_name(jp_fetch, sales_db):
    code, error = await refused(jp_fetch, "threads", method="POST", body={"source": str(sales_db)})
    assert (code, error["reason"]) == (400, "unknown_source")


async def test_a_turn_on_an_unconfigured_source_is_refused_and_nothing_runs(jp_fetch, service, tmp_path):
    elsewhere = tmp_path / "elsewhere.duckdb"
    with duckdb.connect(str(elsewhere)) as conn:
        conn.execute("CREATE TABLE widgets AS SELECT 1 AS widget_id")
    thread = await thread_on(jp_fetch, "warehouse")
    code, error = await refused(jp_fetch, "threads", thread["thread_id"], "turns", method="POST",
                                body={"prompt": "count widgets", "source": str(elsewhere)})
    assert (code, error["reason"]) == (400, "unknown_source")
    assert service.workspace.store.turns(thread["thread_id"]) == []
    assert service.workspace.store.get_thread(thread["thread_id"]).source == str(service.sources["warehouse"])


async def test_the_thread_stores_the_configured_spec_and_shows_its_name(jp_fetch, service, warehouse):
    thread = await thread_on(jp_fetch, "warehouse")
    assert thread["source"] == "warehouse"
    assert service.workspace.store.get_thread(thread["thread_id"]).source == str(warehouse)
    assert (await as_json(jp_fetch, "threads", thread["thread_id"]))["source"] == "warehouse"
    assert [t["source"] for t in (await as_json(jp_fetch, "threads"))["threads"]] == ["warehouse"]
    default = await thread_on(jp_fetch, None)
    assert default["source"] == "sales"


async def test_a_thread_whose_source_is_no_longer_configured_is_refused_a_turn(jp_fetch, service, tmp_path):
    thread = service.workspace.store.create_thread(user="local", source=str(tmp_path / "gone.duckdb"))
    shown = await as_json(jp_fetch, "threads", thread.thread_id)
    assert shown["source"] is None  # not a configured name, and the server's paths are not shown
    code, error = await refused(jp_fetch, "threads", thread.thread_id, "turns", method="POST", body={"prompt": "hi"})
    assert (code, error["reason"]) == (400, "unknown_source")
    assert service.workspace.store.turns(thread.thread_id) == []


async def test_credentials_of_a_source_url_are_never_shown(jp_fetch, service):
    thread = service.workspace.store.create_thread(user="local", source="postgresql://ann:s3cret@db/sales")
    assert "s3cret" not in json.dumps(await as_json(jp_fetch, "threads"))
    assert "s3cret" not in json.dumps(await as_json(jp_fetch, "threads", thread.thread_id))


@pytest.mark.parametrize("analyst_settings", [{"allow_any_source": True}])
async def test_any_source_when_the_server_allows_it(jp_fetch, service, tmp_path):
    elsewhere = tmp_path / "elsewhere.duckdb"
    with duckdb.connect(str(elsewhere)) as conn:
        conn.execute("CREATE TABLE widgets AS SELECT 1 AS widget_id")
    thread = await thread_on(jp_fetch, str(elsewhere))
    assert thread["source"] == str(elsewhere)
    assert service.workspace.store.get_thread(thread["thread_id"]).source == str(elsewhere)
    assert (await thread_on(jp_fetch, "warehouse"))["source"] == "warehouse"  # names still resolve


def test_allow_any_source_is_a_documented_traitlet_off_by_default():
    from jupyter_analyst.server import AnalystApp

    trait = AnalystApp.class_traits()["allow_any_source"]
    assert trait.default() is False and trait.metadata.get("config") and "source" in trait.help


# ------------------------------------------------------------------ a thread keeps its source


async def turn(jp_fetch, thread_id: str, **body) -> list[dict]:
    response = await call(jp_fetch, "threads", thread_id, "turns", method="POST", body=body)
    return parse_events(response.body.decode())


async def test_a_turn_without_source_runs_on_the_threads_own(jp_fetch, service, warehouse):
    thread = await thread_on(jp_fetch, "warehouse")  # not the default source
    events = await turn(jp_fetch, thread["thread_id"], prompt="count widgets")
    results = [e for e in events if e["type"] == "tool_result"]
    assert [r["status"] for r in results] == ["ok"], results  # `widgets` exists only in the warehouse
    assert events[-1]["type"] == "turn_ended" and events[-1]["status"] == "completed"
    assert service.workspace.store.get_thread(thread["thread_id"]).source == str(warehouse)
    assert (await as_json(jp_fetch, "threads", thread["thread_id"]))["source"] == "warehouse"


async def test_a_source_named_with_the_turn_switches_the_thread(jp_fetch, service, sales_db):
    thread = await thread_on(jp_fetch, "warehouse")
    events = await turn(jp_fetch, thread["thread_id"], prompt="hello", source="sales")
    assert events[-1]["status"] == "completed"
    assert service.workspace.store.get_thread(thread["thread_id"]).source == str(sales_db)
    assert (await as_json(jp_fetch, "threads", thread["thread_id"]))["source"] == "sales"


async def test_a_notebook_path_is_refused_exactly_when_the_description_refuses_it(jp_fetch, spec):
    """Every name allowed fits a file system (255 bytes): 255 ASCII characters, or 63 of any
    kind. A longer one is 400 for each body naming a notebook (an attached one, an export's, a
    verify's), never the contents check's OSError as a 500, and the description's pattern
    refuses the same paths the server does (a line end included, which '.' and '$' let by)."""
    import re

    thread = await thread_on(jp_fetch, "sales")
    tid = thread["thread_id"]
    pattern = spec["components"]["schemas"]["NewTurn"]["properties"]["notebook"]["anyOf"][0]["pattern"]
    refusals = ["0" * 300 + ".ipynb", f"deep/{'d' * 256}/x.ipynb", "é" * 58 + ".ipynb", "a\n//b.ipynb",
                "x.ipynb\n", "a/\x00.ipynb", "a\n/../b.ipynb"]
    for name in refusals:
        assert not re.match(pattern, name), name
        for action, field, body in [("turns", "notebook", {"prompt": "hi"}), ("export", "path", {}),
                                    ("verify", "path", {})]:
            code, error = await refused(jp_fetch, "threads", tid, action, method="POST", body={**body, field: name})
            assert (code, error["reason"], error["field"]) == (400, f"invalid_{field}", field), (action, name[:20])
    for fits in ("0" * 249 + ".ipynb", "é" * 57 + ".ipynb"):  # 255 bytes; 57 * 2 + 6
        assert re.match(pattern, fits)
        events = await turn(jp_fetch, tid, prompt="hi", notebook=fits)  # allowed, merely not there
        assert events[-1]["status"] == "completed"


@pytest.fixture(scope="module")
def spec() -> dict:
    from jupyter_analyst.server.openapi import document as openapi
    from jupyter_analyst.server.routes import routes

    return openapi.build(routes(""))


# ------------------------------------------------------------------ limits


async def test_a_prompt_over_the_default_limit_is_413(jp_fetch, service):
    thread = await thread_on(jp_fetch, "sales")
    code, error = await refused(jp_fetch, "threads", thread["thread_id"], "turns", method="POST",
                                body={"prompt": "x" * 100_001})
    assert (code, error["reason"]) == (413, "prompt_too_large")
    assert "100000" in error["message"] or "100,000" in error["message"]
    assert service.workspace.store.turns(thread["thread_id"]) == []


@pytest.mark.parametrize("analyst_settings", [{"max_prompt_bytes": 12}])
async def test_the_prompt_limit_is_configurable_and_counts_utf8_bytes(jp_fetch):
    thread = await thread_on(jp_fetch, "sales")
    tid = thread["thread_id"]
    code, error = await refused(jp_fetch, "threads", tid, "turns", method="POST", body={"prompt": "é" * 7})  # 14 bytes
    assert (code, error["reason"]) == (413, "prompt_too_large")
    events = await turn(jp_fetch, tid, prompt="é" * 6)  # 12 bytes: at the limit
    assert events[-1]["status"] == "completed"


async def test_a_body_over_the_default_limit_is_413(jp_fetch, service):
    thread = await thread_on(jp_fetch, "sales")
    huge = json.dumps({"title": "t" * (1 << 20)})
    code, error = await refused(jp_fetch, "threads", method="POST", body=huge)
    assert (code, error["reason"]) == (413, "body_too_large")
    code, error = await refused(jp_fetch, "threads", thread["thread_id"], "turns", method="POST",
                                body=json.dumps({"prompt": "hi", "pad": " " * (2 << 20)}))
    assert (code, error["reason"]) == (413, "body_too_large")
    assert service.workspace.store.turns(thread["thread_id"]) == []


@pytest.mark.parametrize("analyst_settings", [{"max_body_bytes": 64}])
async def test_the_body_limit_holds_for_a_chunked_body(jp_fetch, service):
    async def chunks(write):  # no Content-Length: the size is known only while reading
        await write(b'{"title": "')
        for _ in range(10):
            await write(b"t" * 20)
        await write(b'"}')

    code, error = await refused(jp_fetch, "threads", method="POST", body_producer=chunks)
    assert (code, error["reason"]) == (413, "body_too_large")
    assert service.workspace.store.list_threads() == []


@pytest.mark.parametrize("after", ["-1e23", "-100000000000000000000000", "100000000000000000000000", "-1",
                                   "1.5", "NaN", "inf", "x", "", "0x10", " 1", "1" * 5000])
async def test_events_after_must_be_a_sequence_number(jp_fetch, after):
    thread = await thread_on(jp_fetch, "sales")
    code, error = await refused(jp_fetch, "threads", thread["thread_id"], "events", params={"after": after})
    assert (code, error["reason"]) == (400, "invalid_after")
    if after.strip() == after:  # header values arrive stripped of spaces
        code, error = await refused(jp_fetch, "threads", thread["thread_id"], "events",
                                    headers={"Last-Event-ID": after or "x", "Accept": "text/event-stream"})
        assert (code, error["reason"]) == (400, "invalid_after")


async def test_events_after_a_valid_number(jp_fetch):
    thread = await thread_on(jp_fetch, "sales")
    for after in ["0", "5", str(2**63 - 1)]:
        assert (await as_json(jp_fetch, "threads", thread["thread_id"], "events", params={"after": after})) == {"events": []}


# ------------------------------------------------------------------ every bad input is a 4xx JSON error

#: Values of the wrong kind for any field (each is wrong for every field it is tried on).
WRONG = [None, [], ["x"], {}, {"a": 1}, 10**30, -1, 1.5, True, float("nan"), float("inf")]
RAW_BODIES = [
    b"[]", b"null", b'"text"', b"1e999", b"NaN", b"{not json", b"\xff\xfe{}", b'{"prompt": "\xed\xa0\x80"}',
    b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000, b"{}" + b" " * 10 + b"{}",
]


def fields_of(endpoint: str) -> dict[str, list]:
    """Each body field of an endpoint with the values that are wrong for it."""
    lone_surrogate = "\ud800"
    if endpoint == "threads":
        return {"source": [v for v in WRONG if v is not None] + [lone_surrogate, "x" * 10_000],
                "title": [v for v in WRONG if v is not None] + [lone_surrogate, "t" * 10_000],
                "unknown": ["x"]}
    if endpoint == "turns":
        return {"prompt": WRONG + ["", "   ", lone_surrogate],
                "source": [v for v in WRONG if v is not None] + [lone_surrogate, "nope"],
                "rerun": [v for v in WRONG if v is not True] + ["true", "yes", 1, 0],
                "unknown": ["x"]}
    return {"unknown": ["x", None]}  # cancel takes no field


async def test_every_bad_body_is_a_4xx_json_error(jp_fetch, service):
    thread = await thread_on(jp_fetch, "sales")
    tid = thread["thread_id"]
    endpoints = {"threads": ("threads",), "turns": ("threads", tid, "turns"), "cancel": ("threads", tid, "cancel")}
    failures = []
    for endpoint, path in endpoints.items():
        valid = {"prompt": "hi"} if endpoint == "turns" else {}
        cases = [{**valid, field: value} for field, values in fields_of(endpoint).items() for value in values]
        bodies = [json.dumps(c, allow_nan=True).encode("utf-8", "surrogatepass") for c in cases] + RAW_BODIES
        for body in bodies:
            try:
                await call(jp_fetch, *path, method="POST", body=body)
                failures.append((endpoint, body[:80], "accepted"))
            except HTTPClientError as exc:
                error = json.loads(exc.response.body) if exc.response is not None else {}
                if not (400 <= exc.code < 500 and error.get("reason") and error.get("message")):
                    failures.append((endpoint, body[:80], exc.code, error))
    assert failures == []
    assert service.workspace.store.turns(tid) == []
    assert len(service.workspace.store.list_threads()) == 1


async def test_every_bad_query_parameter_is_a_4xx_json_error(jp_fetch):
    thread = await thread_on(jp_fetch, "sales")
    tid = thread["thread_id"]
    failures = []
    for path, name, values in [
        (("threads", tid, "events"), "after", ["-1e23", "null", "[]", "NaN", "-5", "9" * 30]),
        (("threads", tid, "artifacts"), "type", ["nope", "null", "[]", "DATASET", "\x00"]),
    ]:
        for value in values:
            try:
                await call(jp_fetch, *path, params={name: value})
                failures.append((path[-1], value, "accepted"))
            except HTTPClientError as exc:
                error = json.loads(exc.response.body) if exc.response is not None else {}
                if not (400 <= exc.code < 500 and error.get("reason") == f"invalid_{name}"):
                    failures.append((path[-1], value, exc.code, error))
    assert failures == []
    artifacts = await as_json(jp_fetch, "threads", tid, "artifacts", params={"type": "dataset"})
    assert artifacts == {"artifacts": []}


async def test_errors_carry_a_hint(jp_fetch):
    thread = await thread_on(jp_fetch, "sales")
    code, error = await refused(jp_fetch, "threads", thread["thread_id"], "turns", method="POST", body={"prompt": 5})
    assert code == 400 and set(error) >= {"message", "reason", "hint"}


async def test_no_route_answers_any_method_or_body_with_a_5xx(jp_fetch, service):
    thread = await thread_on(jp_fetch, "sales")
    tid = thread["thread_id"]
    art, _ = service.workspace.artifacts.add_bytes(b"x", thread_id=tid, name="a.txt", type="text",
                                                   mime="text/plain", producer="python")
    routes = [("sources",), ("openapi.yaml",), ("threads",), ("threads", tid), ("threads", tid, "turns"),
              ("threads", tid, "events"), ("threads", tid, "cancel"), ("threads", tid, "artifacts"),
              ("threads", tid, "notebook"), ("threads", tid, "state"), ("artifacts", art.artifact_id),
              ("artifacts", art.artifact_id, "content"), ("threads", "t" * 3000, "events"), ("config",),
              ("threads", tid, "export"), ("threads", tid, "verify"), ("threads", tid, "steps", "c" * 300, "cell"),
              ("threads", tid, "steps", "call_1", "cell"), ("artifacts", art.artifact_id, "preview")]
    bodies = [b"", b"[]", b'{"prompt": null}', b"\xff", b'{"after": -1e23, "type": []}']
    failures = []
    for path in routes:
        for method in ["GET", "POST", "PUT", "DELETE", "PATCH"]:
            for body in [None] if method == "GET" else bodies:
                kw = {"allow_nonstandard_methods": True} if body is not None else {}
                try:
                    await call(jp_fetch, *path, method=method, body=body, params={"after": "-1e23"}, **kw)
                except HTTPClientError as exc:
                    error = json.loads(exc.response.body) if exc.response is not None else {}
                    if not (400 <= exc.code < 500 and {"message", "reason", "hint"} <= set(error)):
                        failures.append((path[-1][:20], method, body, exc.code, error))
    assert failures == []


async def test_the_openapi_description_names_the_limits_and_errors(jp_fetch):
    import yaml

    spec = yaml.safe_load((await call(jp_fetch, "openapi.yaml")).body)
    assert set(spec["components"]["schemas"]["Error"]["required"]) == {"message", "reason", "hint"}
    for path, method in [("/threads", "post"), ("/threads/{thread_id}/turns", "post")]:
        assert {"400", "413"} <= set(spec["paths"][path][method]["responses"])
    assert "400" in spec["paths"]["/threads/{thread_id}/events"]["get"]["responses"]
