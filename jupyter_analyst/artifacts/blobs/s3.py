"""Blobs on object storage (S3 and S3-compatible servers, through fsspec/s3fs).

The bucket is the store of record: each blob is the object ``<prefix>/sha256/ab/<hex>``,
written once (skipped when an object of the right size is there, sent with
``If-None-Match: *`` so two writers never overwrite each other) and checked after the upload.
Reads go through a read-through cache, a folder of the workspace
(``<root>/artifacts/cache/sha256/ab/<hex>``) laid out as the local store: every read hashes
the cached copy, a copy that no longer hashes right is fetched again, and an object whose
bytes are not its fingerprint is refused (``blob_corrupt``, as for a local blob).

Credentials come from the usual places (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``,
``AWS_PROFILE``, ``~/.aws``); the endpoint from the ``endpoint_url`` option, else
``AWS_ENDPOINT_URL`` or fsspec's configuration (``FSSPEC_S3_ENDPOINT_URL``). The store is
checked when it is opened, so a missing bucket, missing credentials or an unreachable
server stop the start, not a turn.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from ..._disk import unavailable
from ...errors import StorageError
from .folder import TEMP_PREFIX, BlobStore

INSTALL_HINT = "pip install 'jupyter-analyst[s3]'"
#: Seconds to reach the server: a dead endpoint fails the start quickly, not after minutes.
CONNECT_TIMEOUT_S = 5


class ObjectBlobStore:
    """Content-addressed blobs in a bucket, read through a verified local cache.

    Args:
        url: ``s3://bucket`` or ``s3://bucket/prefix``.
        root: the workspace folder; the cache and the staging folder live under it.
        endpoint_url: the S3 API's address (MinIO, moto, Ceph...); default: the environment's.
        filesystem: an fsspec file system to use instead of making one (tests, other clouds).

    Raises:
        StorageError: at once, when the bucket cannot be used (``blob_store_url``,
            ``blob_store_unavailable``, ``blob_bucket_missing``, ``blob_credentials_missing``,
            ``blob_access_denied``, ``blob_store_unreachable``).
    """

    def __init__(self, url: str, root: Path, *, endpoint_url: str | None = None, filesystem: Any = None) -> None:
        parts = urlsplit(url)
        if "@" in parts.netloc:
            # Never echoed: the text may hold a secret.
            raise StorageError("the blob store URL holds credentials, which it may not", reason="blob_store_url",
                               hint="give them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)")
        if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
            raise StorageError(f"not a blob store URL: {url!r}", reason="blob_store_url",
                               hint="use s3://bucket or s3://bucket/prefix")
        self.bucket = parts.netloc
        self.prefix = parts.path.strip("/")
        self.url = f"s3://{self.bucket}" + (f"/{self.prefix}" if self.prefix else "")
        self.endpoint_url = endpoint_url
        # The cache is a local blob store of its own: same layout, same atomic writes.
        self.cache = BlobStore(root, folder=Path(root) / "artifacts" / "cache" / "sha256")
        self.root = self.cache.root
        self.dir = self.cache.dir
        self._fs = filesystem if filesystem is not None else _s3_filesystem(endpoint_url)
        self.check()

    # ------------------------------------------------------------------ where

    def key(self, fingerprint: str) -> str:
        """The object's key in the bucket, ``<prefix>/sha256/ab/<hex>``."""
        hexdigest = fingerprint.removeprefix("sha256:")
        return "/".join(p for p in (self.prefix, "sha256", hexdigest[:2], hexdigest) if p)

    def object_url(self, fingerprint: str) -> str:
        """The blob's object as an ``s3://`` URL."""
        return f"s3://{self.bucket}/{self.key(fingerprint)}"

    def path(self, fingerprint: str) -> Path:
        """Where the blob's cached copy lives (unchecked, and maybe not there yet)."""
        return self.cache.path(fingerprint)

    # ------------------------------------------------------------------ checks

    def check(self) -> None:
        """A quick look at the bucket (one request): raises a clear error when it cannot be used."""
        try:
            self._fs.info(self.bucket)
        except FileNotFoundError as exc:
            raise StorageError(
                f"the blob store's bucket {self.bucket!r} does not exist" + self._at(), reason="blob_bucket_missing",
                hint=f"create it (aws s3 mb s3://{self.bucket}) or name another with --blobs", url=self.url,
            ) from exc
        except Exception as exc:
            raise self._problem(exc) from exc

    def has(self, fingerprint: str, size: int | None = None) -> bool:
        """Whether the bucket holds the object (of ``size`` bytes, when given); its bytes are not read."""
        stored = self._stored_size(fingerprint)
        return stored is not None and (size is None or stored == size)

    def intact(self, fingerprint: str) -> bool:
        """Whether the blob reads back with exactly the bytes of its fingerprint (fetched when not cached)."""
        try:
            self.verified_path(fingerprint)
        except StorageError as exc:
            if exc.reason in ("blob_missing", "blob_corrupt"):
                return False
            raise
        return True

    # ------------------------------------------------------------------ reading

    def open_verified(self, fingerprint: str, path: Path | None = None) -> BinaryIO:
        """The blob opened for reading, its bytes checked against ``fingerprint``.

        The cached copy is used when it hashes right; otherwise the object is fetched into
        the cache (checked before it replaces anything). ``path`` checks a copy made
        elsewhere (a kernel's datasets folder) instead.

        Raises:
            StorageError: ``blob_missing`` when the bucket has no such object,
                ``blob_corrupt`` when the object's bytes are not its fingerprint, or one of
                the bucket's problems (``blob_store_unreachable``...).
        """
        if path is not None:
            return self.cache.open_verified(fingerprint, path)
        try:
            return self.cache.open_verified(fingerprint)
        except StorageError as exc:
            if exc.reason not in ("blob_missing", "blob_corrupt"):
                raise
        self._fetch(fingerprint)
        return self.cache.open_verified(fingerprint)

    def verified_path(self, fingerprint: str, path: Path | None = None) -> Path:
        """The cached copy's path (or ``path``), after its bytes were checked: for readers
        that open it themselves, such as a kernel."""
        with self.open_verified(fingerprint, path):
            return path or self.path(fingerprint)

    def _fetch(self, fingerprint: str) -> None:
        dest = self.path(fingerprint)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(dir=dest.parent, prefix=TEMP_PREFIX)
            os.close(fd)
        except OSError as exc:
            raise unavailable(exc, self.root) or StorageError(
                f"cannot cache blob {fingerprint[:19]}: {exc}", fingerprint=fingerprint) from exc
        tmp = Path(name)
        try:
            try:
                self._fs.get_file(f"{self.bucket}/{self.key(fingerprint)}", str(tmp))
            except FileNotFoundError as exc:
                raise StorageError(f"blob {fingerprint} is missing from {self.url}", reason="blob_missing",
                                   fingerprint=fingerprint) from exc
            except Exception as exc:
                raise unavailable(exc, self.root) or self._problem(exc) from exc
            try:
                # Hashed before it replaces anything: a wrong object never enters the cache.
                with self.cache.open_verified(fingerprint, tmp):
                    pass
            except StorageError as exc:
                raise StorageError(
                    f"blob {fingerprint} was changed or damaged in the bucket: the object "
                    f"{self.object_url(fingerprint)} {exc.message.split(': ', 1)[-1]}",
                    reason=exc.reason,
                    hint=f"delete the object {self.object_url(fingerprint)}, then run the step that made it "
                         "again (--rerun) to store the true bytes",
                    fingerprint=fingerprint,
                ) from exc
            # Readable by the sandboxed kernel, which may run as another user.
            os.chmod(tmp, 0o644)
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)

    # ------------------------------------------------------------------ writing

    def put_bytes(self, fingerprint: str, data: bytes) -> Path:
        """Store ``data`` in the bucket (once) and in the cache."""
        self._upload(fingerprint, len(data), lambda key, mode: self._fs.pipe_file(key, data, mode=mode))
        return self.cache.put_bytes(fingerprint, data)

    def put_file(self, fingerprint: str, src: Path, *, move: bool = False) -> Path:
        """Store the file ``src`` in the bucket (once) and in the cache; ``move`` hands it over
        (to the cache), whether or not the object was already there."""
        size = src.stat().st_size
        self._upload(fingerprint, size, lambda key, mode: self._fs.put_file(str(src), key, mode=mode))
        return self.cache.put_file(fingerprint, src, move=move)

    def _upload(self, fingerprint: str, size: int, send: Callable[[str, str], object]) -> None:
        key = f"{self.bucket}/{self.key(fingerprint)}"
        present = self._stored_size(fingerprint)
        if present == size:
            return  # written once: an object of the right size is never sent again
        # An object of another size is a damaged one (a crashed or foreign writer): replaced,
        # as the local store repairs a damaged blob. Otherwise the write is exclusive.
        try:
            send(key, "create" if present is None else "overwrite")
        except FileExistsError:
            pass  # another writer stored it meanwhile; checked below like our own
        except Exception as exc:
            raise unavailable(exc, self.root) or self._problem(exc) from exc
        stored = self._stored_size(fingerprint)
        if stored != size:
            raise StorageError(
                f"the upload of blob {fingerprint[:19]} did not leave a whole object: "
                f"{self.object_url(fingerprint)} holds {stored} bytes, not {size}",
                reason="blob_upload_failed", hint="run the step again", fingerprint=fingerprint,
            )

    def _stored_size(self, fingerprint: str) -> int | None:
        try:
            info = self._fs.info(f"{self.bucket}/{self.key(fingerprint)}", refresh=True)
        except FileNotFoundError:
            return None
        except Exception as exc:
            raise self._problem(exc) from exc
        return int(info["size"]) if info.get("type") == "file" else None

    # ------------------------------------------------------------------ errors

    def _at(self) -> str:
        endpoint = self.endpoint_url or getattr(self._fs, "endpoint_url", None)
        return f" at {endpoint}" if endpoint else ""

    def _problem(self, exc: BaseException) -> StorageError:
        """The bucket's failure as one clear error: no credentials, refused, unreachable."""
        if isinstance(exc, StorageError):
            return exc
        kind = {type(c).__name__ for c in _causes(exc)}
        if kind & {"NoCredentialsError", "PartialCredentialsError", "CredentialRetrievalError"}:
            return StorageError(
                f"no credentials for the blob store {self.url}", reason="blob_credentials_missing",
                hint="set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, ~/.aws/credentials)",
                url=self.url,
            )
        if any(isinstance(c, PermissionError) for c in _causes(exc)):
            return StorageError(
                f"the blob store {self.url} refused access{self._at()}: {exc}", reason="blob_access_denied",
                hint="check the credentials and that they may read and write the bucket", url=self.url,
            )
        if kind & {"EndpointConnectionError", "ConnectTimeoutError", "ConnectionClosedError", "ReadTimeoutError",
                   "ClientConnectorError", "ServerDisconnectedError"} or any(
                isinstance(c, ConnectionError | TimeoutError) for c in _causes(exc)):
            return StorageError(
                f"cannot reach the blob store {self.url}{self._at()}", reason="blob_store_unreachable",
                hint="check that the server is up and the endpoint (--blobs-endpoint or AWS_ENDPOINT_URL)",
                url=self.url,
            )
        return StorageError(f"the blob store {self.url} failed: {exc}", reason="blob_store_error", url=self.url)


def _causes(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _s3_filesystem(endpoint_url: str | None) -> Any:
    try:
        import fsspec
        import s3fs  # noqa: F401  # the s3 protocol's implementation
    except ImportError as exc:
        raise StorageError("blobs on S3 need s3fs, which is not installed", reason="blob_store_unavailable",
                           hint=INSTALL_HINT) from exc
    options: dict[str, Any] = {
        # Answers are never cached: another process may have stored an object meanwhile.
        "use_listings_cache": False,
        "skip_instance_cache": True,
        "config_kwargs": {"connect_timeout": CONNECT_TIMEOUT_S, "retries": {"max_attempts": 2}},
    }
    if endpoint_url:
        options["endpoint_url"] = endpoint_url
    # Through fsspec.filesystem, so fsspec's own configuration (FSSPEC_S3_*) applies too.
    return fsspec.filesystem("s3", **options)
