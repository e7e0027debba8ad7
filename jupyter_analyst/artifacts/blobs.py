"""Content-addressed blobs: ``<root>/artifacts/sha256/ab/<hex>``, written once, atomically."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..errors import StorageError

#: Prefix of the temporary files a write goes through; never a valid blob name (not hex).
TEMP_PREFIX = ".tmp-"


class BlobStore:
    """Bytes stored by their sha256; a whole blob is never rewritten once present."""

    def __init__(self, root: Path) -> None:
        self.dir = Path(root) / "artifacts" / "sha256"
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create the blob store {self.dir}: {exc}") from exc

    def path(self, fingerprint: str) -> Path:
        """Where the blob of ``fingerprint`` (``sha256:<hex>``) lives."""
        hexdigest = fingerprint.removeprefix("sha256:")
        return self.dir / hexdigest[:2] / hexdigest

    def has(self, fingerprint: str, size: int | None = None) -> bool:
        """Whether the blob is stored (and, when ``size`` is given, whole)."""
        try:
            stored = self.path(fingerprint).stat().st_size
        except OSError:
            return False
        return size is None or stored == size

    def put_bytes(self, fingerprint: str, data: bytes) -> Path:
        """Store ``data`` under its fingerprint (no-op when already there)."""
        if self.has(fingerprint, len(data)):
            return self.path(fingerprint)
        return self._put(fingerprint, lambda fh: fh.write(data))

    def put_file(self, fingerprint: str, src: Path, *, move: bool = False) -> Path:
        """Store the file ``src`` under its fingerprint; ``move`` hands the file over.

        With ``move`` the source is gone afterwards whether or not the blob was already
        there, so the caller never has to clean up after a dedup hit.
        """
        size = src.stat().st_size
        dest = self.path(fingerprint)
        if self.has(fingerprint, size):
            if move:
                src.unlink(missing_ok=True)
            return dest
        if move:
            try:
                dest.parent.mkdir(parents=True, exist_ok=True)
                # The writer may not have synced: make the bytes durable before the
                # rename publishes them, or a crash could leave an empty blob.
                with open(src, "rb") as fh:
                    os.fsync(fh.fileno())
                os.chmod(src, 0o644)
                os.replace(src, dest)
                _fsync_dir(dest.parent)
                return dest
            except OSError:
                pass  # another file system (or not ours to chmod): fall back to a copy
        with open(src, "rb") as fh_in:
            self._put(fingerprint, lambda fh: shutil.copyfileobj(fh_in, fh, 1 << 20))
        if move:
            src.unlink(missing_ok=True)
        return dest

    def _put(self, fingerprint: str, write: Callable[[BinaryIO], object]) -> Path:
        dest = self.path(fingerprint)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            # temp file + fsync + rename: a crash leaves either no blob or a whole one,
            # and a half-written temp file is never read as a blob.
            fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=TEMP_PREFIX)
            try:
                with os.fdopen(fd, "wb") as fh:
                    write(fh)
                    fh.flush()
                    os.fsync(fh.fileno())
                # Readable by the sandboxed kernel, which may run as another user.
                os.chmod(tmp, 0o644)
                os.replace(tmp, dest)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            _fsync_dir(dest.parent)
        except OSError as exc:
            raise StorageError(f"cannot store blob {fingerprint[:19]}: {exc}", fingerprint=fingerprint) from exc
        return dest


def _fsync_dir(path: Path) -> None:
    # The rename itself is durable only once the directory entry is synced.
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a directory; the data itself is synced
    finally:
        os.close(fd)
