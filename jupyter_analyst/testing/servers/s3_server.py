"""A throwaway S3-compatible server for tests: moto's server on a free loopback port.

Each test asks for a fresh bucket (:meth:`S3Server.new_bucket`), so no test sees another's
objects; the server is stopped at the end. Any credentials are accepted by it, but the
client still needs some: :data:`CREDENTIALS` are set in the environment by the tests.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...errors import AnalystError

INSTALL_HINT = "pip install 'jupyter-analyst[s3]' 'moto[server]' (both are in the test extra)"

#: What the tests put in the environment: dummy keys, no instance metadata, no ~/.aws.
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "analyst-test",
    "AWS_SECRET_ACCESS_KEY": "analyst-test-secret",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/analyst-test-credentials",
    "AWS_CONFIG_FILE": "/nonexistent/analyst-test-config",
}


class S3Unavailable(AnalystError):
    """moto's server (or s3fs) is not installed here."""

    reason = "s3_unavailable"


class S3Server:
    """One running moto server; ``endpoint_url`` is its address."""

    def __init__(self) -> None:
        try:
            import boto3  # noqa: F401
            import s3fs  # noqa: F401
            from moto.server import ThreadedMotoServer
        except ImportError as exc:
            raise S3Unavailable(f"an S3-compatible server cannot run here ({exc.name} is missing): {INSTALL_HINT}") from exc
        # Port 0: the server's socket is bound to a port the system picks, and kept (a port
        # asked for first and bound later could be taken meanwhile by another test process,
        # and moto's start would then wait for ever).
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._server.start()  # returns once the server listens
        self.port = self._server.get_host_and_port()[1]
        self.endpoint_url = f"http://127.0.0.1:{self.port}"

    def client(self) -> Any:
        """A boto3 S3 client of the server (as the tests' own eyes on the bucket)."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint_url, region_name="us-east-1",
                            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])

    def new_bucket(self) -> str:
        """A fresh, empty bucket's name."""
        name = f"analyst-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str) -> list[str]:
        """Every object key in ``bucket``, sorted."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return sorted(obj["Key"] for page in pages for obj in page.get("Contents", []))

    def stop(self) -> None:
        """Stop the server (its objects are gone with it)."""
        self._server.stop()


@contextmanager
def s3_server() -> Iterator[S3Server]:
    """An S3-compatible server on 127.0.0.1, stopped at the end.

    Raises:
        S3Unavailable: moto or s3fs is not installed (tests skip with :data:`INSTALL_HINT`).
    """
    server = S3Server()
    try:
        yield server
    finally:
        server.stop()
