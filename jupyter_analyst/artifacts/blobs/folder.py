"""Content-addressed blobs in a folder: ``<root>/artifacts/sha256/ab/<hex>``, written once, atomically.

Stored bytes are not trusted when they are read back: every reader (the kernel's datasets,
downloads, notebooks) goes through :meth:`BlobStore.open_verified`, which hashes the blob
and refuses one whose bytes are no longer its fingerprint (swapped, edited, truncated,
replaced by a link). Storing the same content again repairs a damaged blob.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..._disk import unavailable
from ...errors import StorageError

#: Prefix of the temporary files a write goes through; never a valid blob name (not hex).
TEMP_PREFIX = ".tmp-"
_CHUNK = 1 << 20


class BlobStore:
    """Bytes stored by their sha256 in a local folder; a whole blob is never rewritten once present.

    Args:
        root: the workspace folder (a full or read-only disk is reported against it).
        folder: where the ``ab/<hex>`` files go (default ``<root>/artifacts/sha256``; an
            object store keeps its read-through cache in a folder of its own).
    """

    def __init__(self, root: Path, *, folder: Path | None = None) -> None:
        self.root = Path(root)
        self.dir = folder or self.root / "artifacts" / "sha256"
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise unavailable(exc, self.root) or StorageError(f"cannot create the blob store {self.dir}: {exc}") from exc

    def path(self, fingerprint: str) -> Path:
        """Where the blob of ``fingerprint`` (``sha256:<hex>``) lives."""
        hexdigest = fingerprint.removeprefix("sha256:")
        return self.dir / hexdigest[:2] / hexdigest

    def has(self, fingerprint: str, size: int | None = None) -> bool:
        """Whether the blob is stored (and, when ``size`` is given, of that size); not a check
        of its bytes (see :meth:`intact`)."""
        try:
            stored = self.path(fingerprint).stat().st_size
        except OSError:
            return False
        return size is None or stored == size

    def open_verified(self, fingerprint: str, path: Path | None = None) -> BinaryIO:
        """The blob opened for reading, after its bytes were hashed and found to be ``fingerprint``.

        The file is opened once without following links, hashed through that handle and
        rewound, so what the caller reads is what was checked. Hashing runs at ~1.7 GB/s:
        call this off the event loop for big blobs. ``path`` checks a copy of the blob made
        elsewhere (a kernel's datasets folder) instead of the stored one.

        Raises:
            StorageError: ``blob_missing`` when there is no blob, ``blob_corrupt`` when it
                is not a regular file or its bytes do not match.
        """
        path = path or self.path(fingerprint)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError as exc:
            raise StorageError(f"blob {fingerprint} is missing from {self.dir}", reason="blob_missing",
                               fingerprint=fingerprint) from exc
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _corrupt(fingerprint, "it is a link, not a stored file") from exc
            raise StorageError(f"cannot read blob {fingerprint}: {exc}", reason="blob_unreadable",
                               fingerprint=fingerprint) from exc
        fh = os.fdopen(fd, "rb")
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _corrupt(fingerprint, "it is not a regular file")
            digest = hashlib.sha256()
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
            actual = "sha256:" + digest.hexdigest()
            if actual != fingerprint:
                raise _corrupt(fingerprint, f"its bytes hash to {actual}")
            fh.seek(0)
        except BaseException:
            fh.close()
            raise
        return fh

    def verified_path(self, fingerprint: str, path: Path | None = None) -> Path:
        """The blob's path (or that of the copy ``path``), after its bytes were checked, for
        readers that open it themselves, such as a kernel: only the host writes blobs, by
        rename, so the bytes stay these."""
        with self.open_verified(fingerprint, path):
            return path or self.path(fingerprint)

    def intact(self, fingerprint: str) -> bool:
        """Whether the blob is stored with exactly the bytes of its fingerprint."""
        try:
            self.verified_path(fingerprint)
        except StorageError:
            return False
        return True

    def put_bytes(self, fingerprint: str, data: bytes) -> Path:
        """Store ``data`` under its fingerprint (no-op when an intact copy is there; a damaged
        one is replaced)."""
        if self.has(fingerprint, len(data)) and self.intact(fingerprint):
            return self.path(fingerprint)
        return self._put(fingerprint, lambda fh: fh.write(data))

    def put_file(self, fingerprint: str, src: Path, *, move: bool = False) -> Path:
        """Store the file ``src`` under its fingerprint; ``move`` hands the file over.

        With ``move`` the source is gone afterwards whether or not the blob was already
        there, so the caller never has to clean up after a dedup hit. A stored copy that
        is damaged is replaced.
        """
        size = src.stat().st_size
        dest = self.path(fingerprint)
        if self.has(fingerprint, size) and self.intact(fingerprint):
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
            raise unavailable(exc, self.root) or StorageError(
                f"cannot store blob {fingerprint[:19]}: {exc}", fingerprint=fingerprint) from exc
        return dest


def _corrupt(fingerprint: str, why: str) -> StorageError:
    return StorageError(
        f"blob {fingerprint} was changed or damaged after it was stored: {why}", reason="blob_corrupt",
        hint="run the step that made it again (--rerun) to store the true bytes; never edit files under artifacts/",
        fingerprint=fingerprint,
    )


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
