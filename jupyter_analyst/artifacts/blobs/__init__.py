"""Where blobs are kept: the workspace folder (default) or object storage, by URL scheme.

A registry of blob stores: ``register_blob_store(scheme, factory)``, plus the entry-point
group ``jupyter_analyst.blob_stores`` (name: the scheme, value: a factory), looked up only
when a URL of that scheme is opened. Built in: no URL (the folder) and ``s3://``.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import BinaryIO, Protocol
from urllib.parse import urlsplit

from ...errors import StorageError
from . import folder

__all__ = ["ENTRY_POINT_GROUP", "BlobStoreFactory", "Blobs", "open_blob_store", "register_blob_store"]

ENTRY_POINT_GROUP = "jupyter_analyst.blob_stores"


class Blobs(Protocol):
    """What the inventory needs of a blob store: content-addressed, verified on every read."""

    root: Path
    """The workspace folder (a full or read-only disk is reported against it)."""
    dir: Path
    """The local folder of blobs: the store itself, or an object store's read-through cache.
    Its parent holds the staging folder (``.incoming``), on the same file system."""

    def path(self, fingerprint: str) -> Path:
        """The local path of the blob (or of its cached copy); unchecked."""
        ...

    def has(self, fingerprint: str, size: int | None = None) -> bool:
        """Whether the blob is stored (of ``size`` bytes); its bytes are not read."""
        ...

    def open_verified(self, fingerprint: str, path: Path | None = None) -> BinaryIO:
        """The blob opened for reading, after its bytes were found to be ``fingerprint``."""
        ...

    def verified_path(self, fingerprint: str, path: Path | None = None) -> Path:
        """A local path of the blob whose bytes were just checked."""
        ...

    def intact(self, fingerprint: str) -> bool:
        """Whether the blob reads back with exactly the bytes of its fingerprint."""
        ...

    def put_bytes(self, fingerprint: str, data: bytes) -> Path:
        """Store ``data`` under its fingerprint, once."""
        ...

    def put_file(self, fingerprint: str, src: Path, *, move: bool = False) -> Path:
        """Store the file ``src`` under its fingerprint, once; ``move`` hands the file over."""
        ...


#: Makes the store of a URL: ``factory(url, workspace_root, endpoint_url)``.
BlobStoreFactory = Callable[[str, Path, "str | None"], Blobs]

_FACTORIES: dict[str, BlobStoreFactory] = {}


def register_blob_store(scheme: str, factory: BlobStoreFactory) -> None:
    """Make ``scheme://`` URLs open with ``factory`` (replacing any earlier one)."""
    _FACTORIES[scheme] = factory


def _s3(url: str, root: Path, endpoint_url: str | None) -> Blobs:
    from .s3 import ObjectBlobStore  # imported only when asked for: s3fs is optional

    return ObjectBlobStore(url, root, endpoint_url=endpoint_url)


register_blob_store("s3", _s3)


def open_blob_store(url: str | None, root: Path, *, endpoint_url: str | None = None) -> Blobs:
    """The blob store of ``url`` for the workspace ``root``; the folder's own when ``url`` is empty.

    Raises:
        StorageError: ``blob_store_url`` for a URL of no known scheme, or the store's own
            error when it cannot be used (checked here, before any turn).
    """
    if not url:
        return folder.BlobStore(root)
    scheme = urlsplit(url).scheme
    factory = _FACTORIES.get(scheme) or _entry_point(scheme)
    if factory is None:
        known = ", ".join(f"{s}://" for s in sorted(_FACTORIES))
        raise StorageError(f"unknown blob store {url!r}", reason="blob_store_url",
                           hint=f"use {known} (or leave --blobs out for the workspace folder)")
    return factory(url, Path(root), endpoint_url)


def _entry_point(scheme: str) -> BlobStoreFactory | None:
    if not scheme:
        return None
    for ep in entry_points(group=ENTRY_POINT_GROUP, name=scheme):
        factory = ep.load()
        register_blob_store(scheme, factory)
        return factory
    return None
