"""A throwaway PostgreSQL server the tests start: on a port of its own even when the one it was
given is taken by the time it listens (two test processes asked for a free port together),
and never taking another process's server for its own."""

from __future__ import annotations

import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from jupyter_analyst.testing.servers.postgres_server import INSTALL_HINT, PostgresUnavailable, _binaries, postgres_server


@pytest.fixture
def roots() -> Iterator[list[Path]]:
    """Folders for servers, outside pytest's own (the server runs as the postgres user)."""
    try:
        _binaries()
    except PostgresUnavailable as exc:
        pytest.skip(f"needs a PostgreSQL server: {exc} ({INSTALL_HINT})")
    made = [Path(tempfile.mkdtemp(prefix="analyst-pg-")) for _ in range(2)]
    yield made
    for root in made:
        shutil.rmtree(root, ignore_errors=True)


def test_a_server_whose_port_was_taken_meanwhile_starts_on_another(roots):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with postgres_server(roots[0], port=port) as server:
            assert server.port != port
            with psycopg.connect(server.url("postgres")) as conn:
                assert conn.execute("SELECT 1").fetchone() == (1,)


def test_a_server_given_another_servers_port_is_not_taken_for_it(roots):
    with postgres_server(roots[0]) as one, postgres_server(roots[1], port=one.port) as other:
        # The first server refused the second's readiness probe (another password); the
        # second started on a port of its own.
        assert other.port != one.port and other.process.poll() is None
        with psycopg.connect(other.url("postgres")) as conn:
            assert conn.execute("SHOW port").fetchone() == (str(other.port),)
