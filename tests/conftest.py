"""Shared fixtures: the bundled sample database and a way to run turns with a scripted model."""

from __future__ import annotations

import asyncio
import inspect
import shutil
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from types import CodeType
from typing import Any

import pytest

pytest_plugins = ["pytest_jupyter.jupyter_server"]

# ------------------------------------------------------------------ process-level tests

#: Fixtures that start a server: pytest-jupyter's Jupyter server (``jp_fetch`` and
#: ``jp_serverapp``, which start kernels through it), and this file's PostgreSQL and S3
#: servers (a Hub's fixture, and ``pg_source_url``, start on PostgreSQL).
PROCESS_FIXTURES = frozenset({"jp_serverapp", "jp_fetch", "postgres", "s3_server", "spark"})
#: Parametrised fixtures that start one for some of their parameters.
PROCESS_PARAMS = {"store_backend": "postgresql", "blob_place": "s3"}
#: What starts a server process from a test's own code (jupyter_analyst.testing.servers).
PROCESS_STARTERS = frozenset({"JupyterServerProcess", "servers_on_one_store", "HubProcess",
                              "EnterpriseGateway", "postgres_server", "s3_server", "spark_server"})


def names_used(code: CodeType, module: dict[str, Any], seen: set[CodeType] | None = None) -> set[str]:
    """The global and imported names ``code`` uses, with those of its nested functions and of
    the functions of its own module it calls (a helper that starts the server counts)."""
    seen = set() if seen is None else seen
    if code in seen:
        return set()
    seen.add(code)
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= names_used(const, module, seen)
    for name in list(names):
        helper = inspect.unwrap(module[name]) if callable(module.get(name)) else None
        if inspect.isfunction(helper) and helper.__module__ == module.get("__name__"):
            names |= names_used(helper.__code__, module, seen)
    return names


#: What starts a kernel, directly or through a turn or a command that runs one: a thread's
#: tools and turns (``analyst``, ``thread_tools``; ``TurnRunner`` and the surfaces'
#: ``run_*``), kernel sessions and pools, the command line in this process (``_command``,
#: ``main``) or in another (``subprocess``), a notebook executed (papermill, nbclient).
KERNEL_FIXTURES = frozenset({"analyst", "thread_tools"})
KERNEL_STARTERS = frozenset({
    "TurnRunner", "scripted", "run_turn", "run_sql_step", "run_tool_step", "run_playbook", "ThreadEnvironment", "ToolBox",
    "KernelPool", "KernelSession", "LocalKernelLauncher", "connect_client", "KernelManager", "AsyncKernelManager",
    "_command", "main", "subprocess", "execute_notebook", "NotebookClient", "InteractiveShell", "get_ipython",
})


def _starts(item: pytest.Item, fixtures: frozenset[str], params: dict[str, str], starters: frozenset[str]) -> bool:
    """Whether ``item`` starts one of a kind of thing: through a fixture (directly, or as a
    dependency of one it uses), a parameter of one, or its own code (or a fixture's, or a
    helper's)."""
    if not fixtures.isdisjoint(getattr(item, "fixturenames", ())):
        return True
    given = getattr(getattr(item, "callspec", None), "params", {})
    if any(given.get(name) == value for name, value in params.items()):
        return True
    functions = [getattr(item, "function", None)]
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info is not None else ()):
        functions += [fixturedef.func for fixturedef in defs]
    for function in functions:
        function = inspect.unwrap(function) if function is not None else None
        if inspect.isfunction(function) and not starters.isdisjoint(names_used(function.__code__, function.__globals__)):
            return True
    return False


def starts_a_server(item: pytest.Item) -> bool:
    """Whether ``item`` starts a server of its own (see :data:`PROCESS_FIXTURES`)."""
    return _starts(item, PROCESS_FIXTURES, PROCESS_PARAMS, PROCESS_STARTERS)


def starts_a_kernel(item: pytest.Item) -> bool:
    """Whether ``item`` may start a kernel (see :data:`KERNEL_STARTERS`)."""
    return _starts(item, KERNEL_FIXTURES, {}, KERNEL_STARTERS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks ``process`` each test that starts a server of its own, ``kernel`` each other test
    that may start a kernel (``make test-unit`` runs neither); a test that starts one by a
    command (``jupyter lab``) is marked where it is written."""
    for item in items:
        if item.get_closest_marker("process") is not None:
            continue  # marked in its file: it starts one by a command
        if starts_a_server(item):
            item.add_marker(pytest.mark.process)
        elif starts_a_kernel(item):
            item.add_marker(pytest.mark.kernel)

# The engine is imported inside the fixtures, so that a broken module fails the tests that
# use it rather than the collection of the whole suite.


@pytest.fixture(scope="session")
def sales_db(tmp_path_factory) -> Path:
    """A real DuckDB file with the bundled sample tables (regions, products, orders)."""
    from jupyter_analyst.cli.demo import build_sample_database

    return build_sample_database(tmp_path_factory.mktemp("data") / "sales.duckdb")


@pytest.fixture
def store(tmp_path, store_location):
    """An artifact store (inventory and blobs) in a fresh folder, on each database."""
    from jupyter_analyst.artifacts import ArtifactStore

    artifacts = ArtifactStore(store_location, tmp_path)
    yield artifacts
    artifacts.close()


@pytest.fixture
def thread_tools(tmp_path, sales_db):
    """A thread's runtime and tool box on the sample database, over a real workspace; a
    kernel starts only when a step needs one."""
    from jupyter_analyst.agent.environment import ThreadEnvironment
    from jupyter_analyst.agent.tools import ToolBox
    from jupyter_analyst.sql import open_source
    from jupyter_analyst.workspace import Workspace

    workspace = Workspace(tmp_path / "ws")
    record = workspace.store.create_thread(source=str(sales_db))
    source = open_source(str(sales_db))
    runtime = ThreadEnvironment(thread_id=record.thread_id, source=source, artifacts=workspace.artifacts,
                            workdir=workspace.kernel_dir(record.thread_id))
    yield runtime, ToolBox(runtime)
    asyncio.run(runtime.close())
    source.close()
    workspace.close()


@pytest.fixture
def analyst(tmp_path, sales_db) -> Callable[[dict], Any]:
    """Start a scripted model with the given script and return a turn runner."""
    from jupyter_analyst.testing import ScriptedModelServer, TurnRunner

    servers: list[Any] = []

    def make(script: dict) -> Any:
        server = ScriptedModelServer(script).start()
        servers.append(server)
        return TurnRunner(tmp_path / "ws", server, sales_db)

    yield make
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def postgres(tmp_path_factory):
    """One PostgreSQL server for the session (skipped, loudly, where it is not installed)."""
    from jupyter_analyst.testing.servers.postgres_server import INSTALL_HINT, PostgresUnavailable, postgres_server

    # Not under pytest's own temporary folder: that one is private to root, and the server
    # runs as the postgres user when the suite runs as root.
    root = Path(tempfile.mkdtemp(prefix="analyst-pg-"))
    try:
        server_cm = postgres_server(root)
        try:
            server = server_cm.__enter__()
        except PostgresUnavailable as exc:
            pytest.skip(f"PostgreSQL store tests need a server: {exc} ({INSTALL_HINT})")
        yield server
        server_cm.__exit__(None, None, None)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One Spark Connect server for the session (per test worker), with the sample's tables
    (orders, regions, products) written by Spark; skipped, loudly, where Java or pyspark (with
    its jars) is missing. It starts in about 20 s: tests that need it share it."""
    from jupyter_analyst.testing.servers.spark_server import INSTALL_HINT, SparkUnavailable, load_tables, spark_server

    server_cm = spark_server(tmp_path_factory.mktemp("spark"))
    try:
        server = server_cm.__enter__()
    except SparkUnavailable as exc:
        pytest.skip(f"Spark source tests need a Spark Connect server: {exc} ({INSTALL_HINT})")
    try:
        data = Path(str(resources.files("jupyter_analyst") / "data"))
        load_tables(server.url, {name: data / f"{name}.csv" for name in ("orders", "regions", "products")})
        server.jobs()  # the status API's first answer is slow: paid here, not in a timed test
        yield server
    finally:
        server_cm.__exit__(None, None, None)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_backend(request) -> str:
    """Which database the store-level tests run against; both, by parametrisation."""
    return request.param


@pytest.fixture
def store_location(store_backend, tmp_path, request):
    """Where a test's stores live: a SQLite file, or a fresh PostgreSQL database."""
    if store_backend == "sqlite":
        return tmp_path / "a.sqlite3"
    return request.getfixturevalue("postgres").new_database()


# ------------------------------------------------------------------ blob stores


@pytest.fixture(scope="session")
def s3_server():
    """One S3-compatible server (moto) for the session (skipped, loudly, where it cannot run)."""
    from jupyter_analyst.testing.servers.s3_server import S3Unavailable, s3_server

    server_cm = s3_server()
    try:
        server = server_cm.__enter__()
    except S3Unavailable as exc:
        pytest.skip(f"S3 blob store tests need an S3-compatible server: {exc}")
    yield server
    server_cm.__exit__(None, None, None)


@pytest.fixture
def s3_env(monkeypatch):
    """The test credentials in the environment, and nothing of the machine's AWS set-up."""
    from jupyter_analyst.testing.servers.s3_server import CREDENTIALS

    for key in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(key, raising=False)
    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)


class BlobPlace:
    """Where a test's blobs are kept (the workspace folder, or a fresh bucket), and the
    test's own hands on them: what is stored, and how to damage it behind the store's back."""

    def __init__(self, kind: str, server: Any = None) -> None:
        self.kind = kind
        self.server = server
        self.bucket = server.new_bucket() if server is not None else None
        self.url = f"s3://{self.bucket}/team" if server is not None else None
        self.endpoint = server.endpoint_url if server is not None else None

    def open(self, root: Path) -> Any:
        """The blob store of this place for the workspace ``root``."""
        from jupyter_analyst.artifacts import open_blob_store

        return open_blob_store(self.url, root, endpoint_url=self.endpoint)

    def stored(self, root: Path) -> list[str]:
        """The hex fingerprints of the blobs stored (files in the folder, objects in the bucket)."""
        if self.server is None:
            return sorted(p.name for p in (root / "artifacts" / "sha256").rglob("*") if p.is_file())
        return sorted(key.rsplit("/", 1)[-1] for key in self.server.keys(self.bucket))

    def _key(self, fingerprint: str) -> str:
        hexdigest = fingerprint.removeprefix("sha256:")
        return f"team/sha256/{hexdigest[:2]}/{hexdigest}"

    def tamper(self, store: Any, fingerprint: str, data: bytes) -> None:
        """Replace the stored bytes of a blob; in a bucket, read next with a cold cache (as
        on another machine)."""
        if self.server is None:
            store.blob_path(fingerprint).write_bytes(data)
            return
        self.server.client().put_object(Bucket=self.bucket, Key=self._key(fingerprint), Body=data)
        store.blob_path(fingerprint).unlink(missing_ok=True)

    def remove(self, store: Any, fingerprint: str) -> None:
        """Delete a stored blob (and, in a bucket, its cached copy)."""
        if self.server is not None:
            self.server.client().delete_object(Bucket=self.bucket, Key=self._key(fingerprint))
        store.blob_path(fingerprint).unlink(missing_ok=True)


@pytest.fixture(params=["folder", "s3"])
def blob_place(request) -> BlobPlace:
    """Where the blob suites keep blobs: the workspace folder and an S3 bucket, by parametrisation."""
    if request.param == "folder":
        return BlobPlace("folder")
    request.getfixturevalue("s3_env")
    return BlobPlace("s3", request.getfixturevalue("s3_server"))


@pytest.fixture
def blob_store(tmp_path, store_location, blob_place):
    """An artifact store on each database and each blob store (the blob suites' ``store``)."""
    from jupyter_analyst.artifacts import ArtifactStore

    artifacts = ArtifactStore(store_location, tmp_path, blobs=blob_place.open(tmp_path))
    yield artifacts
    artifacts.close()
